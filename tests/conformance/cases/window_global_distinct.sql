-- A window aggregation over the whole stream (no key) and COUNT(DISTINCT) in a window.
CREATE TABLE src (
  user_id STRING,
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
  users BIGINT,
  total INT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst SELECT window_start, COUNT(DISTINCT user_id), SUM(amount)
FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '2' MINUTE)) GROUP BY window_start, window_end;
