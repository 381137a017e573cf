-- DECIMAL arithmetic keeps Flink's precision and scale.
CREATE TABLE src (
  a DECIMAL(10, 2),
  b DECIMAL(5, 3),
  i INT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE dst (
  q STRING,
  p STRING,
  s STRING,
  m STRING,
  ai STRING,
  di DOUBLE
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst SELECT CAST(a / 3 AS STRING), CAST(a * b AS STRING), CAST(a + b AS STRING), CAST(MOD(i, 7) AS STRING),
  CAST(a * i AS STRING), i / 4 FROM src;
