-- Time functions: DATE_FORMAT, EXTRACT, FROM_UNIXTIME, UNIX_TIMESTAMP (fractional seconds; Long.MIN_VALUE on bad text), FLOOR / CEIL to a unit.
CREATE TABLE src (
  ts TIMESTAMP(3),
  s STRING,
  e BIGINT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE dst (
  fmt STRING,
  hr BIGINT,
  dow BIGINT,
  fu STRING,
  ut BIGINT,
  fl TIMESTAMP(3),
  ce TIMESTAMP(3),
  dd DATE,
  plus TIMESTAMP(3)
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst SELECT DATE_FORMAT(ts, 'yyyy-MM-dd HH:mm'), EXTRACT(HOUR FROM ts), EXTRACT(DOW FROM ts), FROM_UNIXTIME(e),
  UNIX_TIMESTAMP(s), FLOOR(ts TO HOUR), CEIL(ts TO DAY), CAST(ts AS DATE), ts + INTERVAL '90' MINUTE FROM src;
