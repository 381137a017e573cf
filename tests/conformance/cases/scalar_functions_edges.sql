-- Scalar functions where Spark's function of the same name differs: TRUNCATE to a number of decimals (also negative), REGEXP_EXTRACT_ALL's default group (1), ELT out of range, PARSE_URL and URL_DECODE of text that is no URL, STR_TO_MAP and MAP_FROM_ARRAYS with a repeated key (the last wins), FROM_BASE64 as a STRING.
CREATE TABLE src (
  d DOUBLE,
  n DECIMAL(10, 5),
  i INT,
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
  d_2 DOUBLE,
  d_0 DOUBLE,
  n_2 DECIMAL(10, 5),
  i_minus_2 INT,
  all_groups ARRAY<STRING>,
  whole_matches ARRAY<STRING>,
  elt_i STRING,
  host STRING,
  decoded STRING,
  pairs MAP<STRING, STRING>,
  zipped MAP<STRING, INT>,
  from_b64 STRING
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst SELECT
  TRUNCATE(d, 2),
  TRUNCATE(d),
  TRUNCATE(n, 2),
  TRUNCATE(i, -2),
  REGEXP_EXTRACT_ALL(s, '([a-z])([0-9]+)'),
  REGEXP_EXTRACT_ALL(s, '[a-z][0-9]+', 0),
  ELT(i, 'a', 'b'),
  PARSE_URL(s, 'HOST'),
  URL_DECODE(s),
  STR_TO_MAP(s),
  MAP_FROM_ARRAYS(ARRAY['k', 'k'], ARRAY[1, i]),
  FROM_BASE64('aGVsbG8=')
FROM src;
