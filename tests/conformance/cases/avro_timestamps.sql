-- The avro format with 'avro.timestamp_mapping.legacy' = 'false' writes what Flink writes, byte for byte.
-- TIMESTAMP(6) is declared local-timestamp-micros, but Flink writes milliseconds at every precision.
CREATE TABLE src (
  id INT, ts6 TIMESTAMP(6), ts3 TIMESTAMP(3), lt STRING
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE dst (
  id INT, ts6 TIMESTAMP(6), ts3 TIMESTAMP(3), lt TIMESTAMP_LTZ(3)
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'avro',
  'avro.timestamp_mapping.legacy' = 'false'
);

INSERT INTO dst SELECT id, ts6, ts3, TO_TIMESTAMP_LTZ(CAST(lt AS BIGINT), 3) FROM src;
