-- Window TVFs through views: an aggregation of a view of a TVF's rows (filtered), and a window Top-N of a view of a window aggregate; both append, as in Flink.
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
  orders BIGINT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

CREATE TABLE leaders (
  window_end TIMESTAMP(3),
  item STRING,
  total INT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("leaders") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

CREATE TEMPORARY VIEW minutes AS
SELECT * FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) WHERE amount > 1;

CREATE TEMPORARY VIEW item_totals AS
SELECT window_start, window_end, item, SUM(amount) AS total
FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '2' MINUTE))
GROUP BY window_start, window_end, item;

INSERT INTO dst
SELECT window_start, user_id, COUNT(*) FROM minutes GROUP BY window_start, window_end, user_id;

INSERT INTO leaders
SELECT window_end, item, total FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY total DESC) AS rn FROM item_totals
) WHERE rn = 1;
