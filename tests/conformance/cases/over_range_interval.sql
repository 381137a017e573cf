-- OVER aggregation by event time with a WINDOW clause, RANGE BETWEEN INTERVAL '10' SECOND PRECEDING AND CURRENT ROW: rows of the same time are peers and share their result; the row exactly 10 s before is in the frame; DECIMAL SUM and AVG.
CREATE TABLE src (
  user_id STRING,
  amount DECIMAL(10, 2),
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
  total DECIMAL(38, 2),
  average DECIMAL(38, 6)
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst
SELECT user_id, ts, COUNT(amount) OVER w, SUM(amount) OVER w, AVG(amount) OVER w
FROM src
WINDOW w AS (PARTITION BY user_id ORDER BY ts RANGE BETWEEN INTERVAL '10' SECOND PRECEDING AND CURRENT ROW);
