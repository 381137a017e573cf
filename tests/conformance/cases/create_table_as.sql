-- CREATE TABLE AS SELECT: the new table's columns are the query's (or the ones declared), and the query writes into it.
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
