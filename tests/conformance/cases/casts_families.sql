-- CASTs between type families: BOOLEAN and numbers, text to BOOLEAN, DATE and TIMESTAMP, DECIMAL and DOUBLE.
CREATE TABLE src (
  b BOOLEAN,
  i INT,
  s STRING,
  dt DATE,
  ts TIMESTAMP(3),
  d DOUBLE
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE dst (
  b_int INT,
  i_bool BOOLEAN,
  s_bool BOOLEAN,
  dt_ts TIMESTAMP(3),
  ts_dt DATE,
  d_dec DECIMAL(6, 2),
  dec_d DOUBLE,
  i_dbl DOUBLE
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst SELECT CAST(b AS INT), CAST(i AS BOOLEAN), CAST(s AS BOOLEAN), CAST(dt AS TIMESTAMP(3)), CAST(ts AS DATE),
  CAST(d AS DECIMAL(6, 2)), CAST(CAST(d AS DECIMAL(6, 2)) AS DOUBLE), CAST(i AS DOUBLE) FROM src;
