-- The avro format with 'avro.timestamp_mapping.legacy' = 'false' reads what Flink wrote (case avro_timestamps).
CREATE TABLE src (
  id INT, ts6 TIMESTAMP(6), ts3 TIMESTAMP(3), lt TIMESTAMP_LTZ(3)
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'avro',
  'avro.timestamp_mapping.legacy' = 'false'
);

CREATE TABLE dst (
  id INT, ts6 TIMESTAMP(6), ts3 TIMESTAMP(3), lt TIMESTAMP_LTZ(3)
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst SELECT id, ts6, ts3, lt FROM src;
