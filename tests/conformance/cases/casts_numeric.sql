-- Numeric casts and overflow: Flink saturates DOUBLE -> INT, wraps integer overflow, gives NULL for a DECIMAL out of range.
CREATE TABLE src (
  d DOUBLE,
  i INT,
  b BIGINT,
  dc DECIMAL(10, 3)
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE dst (
  d_int INT,
  i_small SMALLINT,
  i_tiny TINYINT,
  i_plus INT,
  b_int INT,
  dc_small DECIMAL(4, 2),
  d_dec DECIMAL(5, 1),
  d_big BIGINT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst SELECT CAST(d AS INT), CAST(i AS SMALLINT), CAST(i AS TINYINT), i + 1, CAST(b AS INT),
  CAST(dc AS DECIMAL(4, 2)), CAST(d AS DECIMAL(5, 1)), CAST(d AS BIGINT) FROM src;
