-- CREATE TABLE AS SELECT: the new table has the query's columns, of the types Flink gives them (or the ones declared), and the query writes into it.
CREATE TABLE src (
  user_id STRING,
  item STRING,
  amount INT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);


CREATE TABLE dst WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
) AS SELECT user_id, item, CAST(amount AS BIGINT) AS amount, ts, 'v1' AS version
FROM src WHERE amount > 2;

CREATE TABLE upper_items (
  user_id STRING,
  item STRING
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("upper_items") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
) AS SELECT user_id, UPPER(item) AS item FROM src WHERE user_id = 'a';

CREATE TABLE per_window WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("per_window") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
) AS SELECT CAST(window_start AS STRING) AS starts, CAST(window_time AS STRING) AS rowtime_text, user_id,
  SUM(amount) AS total, UPPER(MAX(item)) AS top_item, COUNT(*) > 1 AS repeated
FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '2' MINUTE))
GROUP BY window_start, window_end, window_time, user_id;
