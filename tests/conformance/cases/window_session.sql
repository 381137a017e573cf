-- The SESSION window TVF per key: a session closes after 30 seconds without records of that key.
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
  window_end TIMESTAMP(3),
  window_time TIMESTAMP(3),
  user_id STRING,
  cnt BIGINT,
  total INT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst
SELECT window_start, window_end, window_time, user_id, COUNT(*), SUM(amount)
FROM TABLE(SESSION(TABLE src PARTITION BY user_id, DESCRIPTOR(ts), INTERVAL '30' SECOND))
GROUP BY window_start, window_end, window_time, user_id;
