-- Flink functions Spark has under other names: SHA224 / SHA256 / SHA384 / SHA512, ARRAY_REVERSE, ARRAY_CONCAT, MAP_UNION (the later map's value wins; maps of one key, as a map's order is Flink's hash order), CONVERT_TZ; NULL inputs.
CREATE TABLE src (
  s STRING,
  arr ARRAY<INT>,
  other ARRAY<INT>,
  m MAP<STRING, INT>,
  ts STRING
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE dst (
  sha224 STRING,
  sha256 STRING,
  sha384 STRING,
  sha512 STRING,
  reversed ARRAY<INT>,
  concatenated ARRAY<INT>,
  three ARRAY<INT>,
  merged MAP<STRING, INT>,
  in_shanghai STRING,
  in_new_york STRING
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst SELECT
  SHA224(s),
  SHA256(s),
  SHA384(s),
  SHA512(s),
  ARRAY_REVERSE(arr),
  ARRAY_CONCAT(arr, other),
  ARRAY_CONCAT(arr, other, ARRAY[7]),
  MAP_UNION(m, MAP['b', 20]),
  CONVERT_TZ(ts, 'UTC', 'Asia/Shanghai'),
  CONVERT_TZ(ts, 'Europe/Berlin', 'America/New_York')
FROM src;
