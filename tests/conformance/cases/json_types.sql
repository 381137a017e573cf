-- JSON reading of every type, Flink's lenient conversions (a fractional number into INT, text numbers), and writing them back.
CREATE TABLE src (
  i INT,
  b BIGINT,
  f DOUBLE,
  dc DECIMAL(6, 2),
  flag BOOLEAN,
  s STRING,
  dt DATE,
  ts TIMESTAMP(3),
  ltz TIMESTAMP_LTZ(3),
  arr ARRAY<INT>,
  m MAP<STRING, INT>,
  r ROW<x INT, y STRING>,
  bin BYTES
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE dst (
  i INT,
  b BIGINT,
  f DOUBLE,
  dc DECIMAL(6, 2),
  flag BOOLEAN,
  s STRING,
  dt DATE,
  ts TIMESTAMP(3),
  ltz TIMESTAMP_LTZ(3),
  arr ARRAY<INT>,
  m MAP<STRING, INT>,
  r ROW<x INT, y STRING>,
  bin BYTES
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst SELECT * FROM src;
