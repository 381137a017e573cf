-- Window join: each user's 1-minute order count joined with their 1-minute payments in the same window.
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

CREATE TABLE payments (
  user_id STRING,
  item STRING,
  amount INT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("payments") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE dst (
  window_start TIMESTAMP(3),
  window_end TIMESTAMP(3),
  user_id STRING,
  orders BIGINT,
  paid INT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst
SELECT L.window_start, L.window_end, L.user_id, L.orders, R.paid
FROM (
  SELECT window_start, window_end, user_id, COUNT(*) AS orders
  FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
  GROUP BY window_start, window_end, user_id
) L
JOIN (
  SELECT window_start, window_end, user_id, SUM(amount) AS paid
  FROM TABLE(TUMBLE(TABLE payments, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
  GROUP BY window_start, window_end, user_id
) R
ON L.user_id = R.user_id AND L.window_start = R.window_start AND L.window_end = R.window_end;
