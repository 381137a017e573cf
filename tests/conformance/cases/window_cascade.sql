-- Cascading window aggregation: 1-minute totals per user, summed again into 2-minute windows over window_time.
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
  window_end TIMESTAMP(3),
  users BIGINT,
  total INT,
  biggest INT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

CREATE TEMPORARY VIEW per_minute AS
SELECT window_time AS rowtime, user_id, SUM(amount) AS total
FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
GROUP BY window_start, window_end, window_time, user_id;

INSERT INTO dst
SELECT window_start, window_end, COUNT(DISTINCT user_id), SUM(total), MAX(total)
FROM TABLE(TUMBLE(TABLE per_minute, DESCRIPTOR(rowtime), INTERVAL '2' MINUTE))
GROUP BY window_start, window_end;
