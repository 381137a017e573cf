-- NULL in functions and operators: GREATEST / LEAST, CONCAT, CONCAT_WS, COALESCE, NULLIF, IS DISTINCT FROM, CASE.
CREATE TABLE src (
  a INT,
  b INT,
  s STRING,
  t STRING
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE dst (
  a INT,
  g INT,
  l INT,
  c STRING,
  cw STRING,
  co INT,
  ni INT,
  dist BOOLEAN,
  cs STRING,
  eq BOOLEAN
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst SELECT a, GREATEST(a, b), LEAST(a, b), CONCAT(s, t), CONCAT_WS('-', s, t), COALESCE(b, a, 0),
  NULLIF(a, 1), a IS DISTINCT FROM b, CASE WHEN a > 1 THEN 'big' WHEN b IS NULL THEN 'nob' END, a = b FROM src;
