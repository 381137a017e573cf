-- More string functions: CONCAT_WS with NULLs, REPEAT, LTRIM / RTRIM, LOWER, SUBSTR from the end, LOCATE, ASCII, CHR, MD5, TO_BASE64.
CREATE TABLE src (
  s STRING,
  n INT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE dst (
  cw STRING,
  rp STRING,
  lt STRING,
  rt STRING,
  lw STRING,
  sb STRING,
  loc INT,
  asc_code INT,
  ch STRING,
  md STRING,
  b64 STRING
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst SELECT CONCAT_WS('/', s, CAST(NULL AS STRING), 'x'), REPEAT(s, 2), LTRIM(s), RTRIM(s), LOWER(s), SUBSTR(s, -3), LOCATE('b', s),
  ASCII(s), CHR(n), MD5(s), TO_BASE64(s) FROM src;
