-- A legacy group window: GROUP BY TUMBLE(ts, ...) with TUMBLE_START and TUMBLE_END.
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
  w_start TIMESTAMP(3),
  w_end TIMESTAMP(3),
  user_id STRING,
  total INT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst SELECT TUMBLE_START(ts, INTERVAL '1' MINUTE), TUMBLE_END(ts, INTERVAL '1' MINUTE), user_id, SUM(amount)
FROM src GROUP BY TUMBLE(ts, INTERVAL '1' MINUTE), user_id;
