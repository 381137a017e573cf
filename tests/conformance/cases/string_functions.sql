-- String functions, including INITCAP (capitalises after any non-letter) and Flink's REGEXP_EXTRACT / SPLIT_INDEX.
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
  up STRING,
  ini STRING,
  sub STRING,
  tr STRING,
  lp STRING,
  rep STRING,
  rx STRING,
  rxe STRING,
  len INT,
  pos INT,
  spl STRING,
  rev STRING
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst SELECT s, UPPER(s), INITCAP(s), SUBSTRING(s, 2, 3), TRIM(s), LPAD(s, 8, '*'), REPLACE(s, 'o', '0'),
  REGEXP_REPLACE(s, '[aeiou]', '#'), REGEXP_EXTRACT(s, '([a-z]+)_([a-z]+)', 2), CHAR_LENGTH(s), POSITION('o' IN s),
  SPLIT_INDEX(s, '_', 1), REVERSE(s) FROM src;
