-- JSON options: ISO-8601 timestamps, 'encode.ignore-null-fields', reading a top-level array of records.
CREATE TABLE src (
  id INT,
  ts TIMESTAMP(3),
  ltz TIMESTAMP_LTZ(3),
  note STRING
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json',
  'json.timestamp-format.standard' = 'ISO-8601'
);

CREATE TABLE dst (
  id INT,
  ts TIMESTAMP(3),
  ltz TIMESTAMP_LTZ(3),
  note STRING
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json',
  'json.timestamp-format.standard' = 'ISO-8601',
  'json.encode.ignore-null-fields' = 'true'
);

INSERT INTO dst SELECT * FROM src;
