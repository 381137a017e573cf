-- Predicates and conditionals: IF, IS TRUE, BETWEEN, IN, LIKE, NOT LIKE, CASE with a value, NULLIF, COALESCE of strings.
CREATE TABLE src (
  i INT,
  s STRING,
  b BOOLEAN
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
  f STRING,
  t BOOLEAN,
  btw BOOLEAN,
  inl BOOLEAN,
  lk BOOLEAN,
  nlk BOOLEAN,
  cv STRING,
  co STRING
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst SELECT i, IF(i > 2, 'big', 'small'), b IS TRUE, i BETWEEN 1 AND 3, s IN ('a', 'b'), s LIKE 'a%',
  s NOT LIKE '_b%', CASE i WHEN 1 THEN 'one' WHEN 2 THEN 'two' ELSE 'many' END, COALESCE(s, 'none') FROM src;
