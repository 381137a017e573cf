-- Aggregate functions in a window: FILTER clauses, HAVING, LISTAGG with a separator, ARRAY_AGG (NULLs kept unless IGNORE NULLS) cast to STRING.
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
  big BIGINT,
  pens INT,
  users STRING,
  items STRING,
  amounts STRING,
  known_amounts STRING
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst
SELECT window_start, COUNT(*) FILTER (WHERE amount > 4), SUM(amount) FILTER (WHERE item = 'pen'),
  LISTAGG(user_id, ';'), CAST(ARRAY_AGG(item) AS STRING), CAST(ARRAY_AGG(amount) AS STRING),
  CAST(ARRAY_AGG(amount IGNORE NULLS) AS STRING)
FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '2' MINUTE))
GROUP BY window_start, window_end
HAVING COUNT(*) > 1;
