-- Math functions: ABS, ROUND, TRUNCATE, FLOOR, CEIL, POWER, SQRT, MOD, SIGN, LN, LOG10, EXP, on numbers and NULL.
CREATE TABLE src (
  d DOUBLE,
  i INT,
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
  a DOUBLE,
  r DECIMAL(10, 1),
  ri INT,
  fl DOUBLE,
  ce DECIMAL(10, 0),
  pw DOUBLE,
  sq DOUBLE,
  md INT,
  sg INT,
  lnv DOUBLE,
  lg DOUBLE,
  ex DOUBLE
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst SELECT ABS(d), ROUND(dc, 1), ROUND(i, -1), FLOOR(d), CEIL(dc), POWER(d, 2), SQRT(ABS(d)), MOD(i, 3),
  SIGN(i), LN(ABS(d) + 1), LOG10(ABS(d) + 1), EXP(i / 10) FROM src;
