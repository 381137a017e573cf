-- Window Top-N: the 2 users with the highest totals of each 1-minute window, emitted once per window (append-only); and the busiest user of each window, ranked over an aggregate that also groups by window_time.
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
  user_id STRING,
  total INT,
  rn BIGINT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

CREATE TABLE busiest (
  window_time TIMESTAMP(3),
  user_id STRING,
  orders BIGINT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("busiest") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO busiest
SELECT window_time, user_id, orders FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY orders DESC, user_id) AS rn
  FROM (
    SELECT window_start, window_end, window_time, user_id, COUNT(*) AS orders
    FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
    GROUP BY window_start, window_end, window_time, user_id
  )
) WHERE rn = 1;

INSERT INTO dst
SELECT window_start, window_end, user_id, total, rn FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY total DESC) AS rn
  FROM (
    SELECT window_start, window_end, user_id, SUM(amount) AS total
    FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
    GROUP BY window_start, window_end, user_id
  )
) WHERE rn <= 2;
