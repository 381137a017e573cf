-- TIMESTAMP vs TIMESTAMP_LTZ under 'table.local-time-zone': casts between them and to STRING shift by the zone.
SET 'table.local-time-zone' = 'Asia/Shanghai';

CREATE TABLE src (
  ts TIMESTAMP(3),
  ltz TIMESTAMP_LTZ(3),
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
  ts_as_ltz TIMESTAMP_LTZ(3),
  ltz_as_ts TIMESTAMP(3),
  ltz_s STRING,
  from_epoch TIMESTAMP_LTZ(3),
  hour_of_ltz BIGINT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst SELECT CAST(ts AS TIMESTAMP_LTZ(3)), CAST(ltz AS TIMESTAMP(3)), CAST(ltz AS STRING), TO_TIMESTAMP_LTZ(e, 3),
  EXTRACT(HOUR FROM ltz) FROM src;
