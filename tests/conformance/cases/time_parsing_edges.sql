-- Parsing time text as Flink does: TO_TIMESTAMP, TO_DATE, UNIX_TIMESTAMP (default and custom patterns) and TRY_CAST of partial, invalid and leap-day text.
CREATE TABLE src (
  id INT,
  s STRING,
  c STRING
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE dst (
  id INT,
  ts TIMESTAMP(3),
  ts_minutes TIMESTAMP(3),
  d DATE,
  unix_default BIGINT,
  unix_custom BIGINT,
  date_of_unix DATE,
  cast_ts TIMESTAMP(3),
  cast_date DATE,
  custom_ts TIMESTAMP(3),
  ts_offset TIMESTAMP(3),
  date_custom DATE,
  unix_millis BIGINT,
  cast_ltz TIMESTAMP_LTZ(3)
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst
SELECT
  id,
  TO_TIMESTAMP(s),
  TO_TIMESTAMP(s, 'yyyy-MM-dd HH:mm'),
  TO_DATE(s),
  UNIX_TIMESTAMP(s),
  UNIX_TIMESTAMP(c, 'yyyy/MM/dd HH:mm'),
  CAST(TO_TIMESTAMP(FROM_UNIXTIME(UNIX_TIMESTAMP(c, 'yyyy/MM/dd HH:mm'))) AS DATE),
  TRY_CAST(s AS TIMESTAMP(3)),
  TRY_CAST(s AS DATE),
  TO_TIMESTAMP(c, 'yyyy/MM/dd HH:mm'),
  TO_TIMESTAMP(s, 'yyyy-MM-dd''T''HH:mm:ss[.SSS]XXX'),
  TO_DATE(c, 'yyyy/MM/dd'),
  UNIX_TIMESTAMP(s, 'yyyy-MM-dd HH:mm:ss.SSS'),
  TRY_CAST(s AS TIMESTAMP_LTZ(3))
FROM src;
