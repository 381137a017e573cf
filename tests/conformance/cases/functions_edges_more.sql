-- Functions whose Spark namesakes or renderings differ: INSTR with a start (negative: from the end) and an occurrence, LOCATE from a position, JSON_QUERY of a scalar (NULL without a wrapper) and JSON_EXISTS of a null member, TIMESTAMPDIFF in months, quarters and years across month ends, EXTRACT(EPOCH / MILLISECOND / MICROSECOND), a binary literal.
CREATE TABLE src (
  s STRING,
  sub STRING,
  pos INT,
  n INT,
  j STRING,
  t1 TIMESTAMP(3),
  t2 TIMESTAMP(3)
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
  instr_first INT,
  instr_from INT,
  instr_nth INT,
  locate_from INT,
  json_query_a STRING,
  json_exists_a BOOLEAN,
  diff_months INT,
  diff_quarters INT,
  diff_years INT,
  epoch_seconds BIGINT,
  millis BIGINT,
  micros BIGINT,
  hex_text STRING
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst SELECT
  s,
  INSTR(s, sub),
  INSTR(s, sub, pos),
  INSTR(s, sub, pos, n),
  LOCATE(sub, s, pos),
  JSON_QUERY(j, '$.a'),
  JSON_EXISTS(j, '$.a'),
  TIMESTAMPDIFF(MONTH, t1, t2),
  TIMESTAMPDIFF(QUARTER, t1, t2),
  TIMESTAMPDIFF(YEAR, t1, t2),
  EXTRACT(EPOCH FROM t1),
  EXTRACT(MILLISECOND FROM t1),
  EXTRACT(MICROSECOND FROM t1),
  CAST(X'616263' AS STRING)
FROM src;
