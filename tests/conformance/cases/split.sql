-- SPLIT(string, delimiter) splits on the delimiter as written, where Spark's split takes a regular expression: metacharacters as a literal and as a column, an empty delimiter, delimiters at the ends and side by side, none found, an empty string, NULLs.
CREATE TABLE src (
  s STRING,
  d STRING
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
  by_dot ARRAY<STRING>,
  by_column ARRAY<STRING>,
  by_nothing ARRAY<STRING>,
  by_pipe ARRAY<STRING>
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst SELECT s, SPLIT(s, '.'), SPLIT(s, d), SPLIT(s, ''), SPLIT(s, '|') FROM src;
