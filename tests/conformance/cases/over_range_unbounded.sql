-- OVER aggregation by event time with ORDER BY alone (RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW): rows of the same time are peers and share the running total; SUM of INT keeps the type.
CREATE TABLE src (
  user_id STRING,
  amount INT,
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
  amount INT,
  ts TIMESTAMP(3),
  total INT,
  cnt BIGINT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst
SELECT user_id, amount, ts, SUM(amount) OVER (PARTITION BY user_id ORDER BY ts), COUNT(*) OVER (PARTITION BY user_id ORDER BY ts)
FROM src;
