-- Window join of the rows themselves (Flink's documented form): orders and payments of the same user in the same 1-minute window, inner and LEFT; the TVFs under aliases.
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
  user_id STRING,
  item STRING,
  paid INT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

CREATE TABLE unpaid (
  window_start TIMESTAMP(3),
  user_id STRING,
  item STRING,
  paid INT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("unpaid") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst
SELECT L.window_start, L.user_id, L.item, R.amount
FROM (SELECT * FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '1' MINUTE))) L
JOIN (SELECT * FROM TABLE(TUMBLE(TABLE payments, DESCRIPTOR(ts), INTERVAL '1' MINUTE))) R
ON L.user_id = R.user_id AND L.window_start = R.window_start AND L.window_end = R.window_end;

INSERT INTO unpaid
SELECT o.window_start, o.user_id, o.item, p.amount
FROM (SELECT * FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '1' MINUTE))) o
LEFT JOIN (SELECT * FROM TABLE(TUMBLE(TABLE payments, DESCRIPTOR(ts), INTERVAL '1' MINUTE))) p
ON o.user_id = p.user_id AND o.window_start = p.window_start AND o.window_end = p.window_end
WHERE p.user_id IS NULL;
