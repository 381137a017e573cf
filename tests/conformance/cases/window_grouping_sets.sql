-- Window aggregation with GROUPING SETS: per user, per item and the total of each 2-minute window.
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


CREATE TABLE dst (
  window_start TIMESTAMP(3),
  user_id STRING,
  item STRING,
  total INT,
  cnt BIGINT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst
SELECT window_start, user_id, item, SUM(amount), COUNT(*)
FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '2' MINUTE))
GROUP BY window_start, window_end, GROUPING SETS ((user_id), (item), ());
