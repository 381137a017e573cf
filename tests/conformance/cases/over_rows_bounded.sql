-- OVER aggregation by event time without PARTITION BY, ROWS BETWEEN 2 PRECEDING AND CURRENT ROW: the row and the two before it, NULLs ignored by SUM, AVG (DOUBLE) and COUNT(x).
CREATE TABLE src (
  user_id STRING,
  amount DOUBLE,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE dst (
  user_id STRING,
  ts TIMESTAMP(3),
  cnt BIGINT,
  total DOUBLE,
  average DOUBLE,
  highest DOUBLE
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst
SELECT user_id, ts,
  COUNT(amount) OVER (ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW),
  SUM(amount) OVER (ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW),
  AVG(amount) OVER (ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW),
  MAX(amount) OVER (ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)
FROM src;
