-- TRY_CAST of text to numbers: NULL instead of a failure; Flink reads the integer part of '3.9' and trims spaces.
CREATE TABLE src (
  s STRING
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE dst (
  s STRING,
  as_int INT,
  as_big BIGINT,
  as_double DOUBLE,
  as_dec DECIMAL(5, 2)
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst SELECT s, TRY_CAST(s AS INT), TRY_CAST(s AS BIGINT), TRY_CAST(s AS DOUBLE), TRY_CAST(s AS DECIMAL(5, 2)) FROM src;
