-- A NULL Kafka value (a tombstone) in a protobuf topic read by the kafka connector: Flink's protobuf format cannot parse it and fails the job, as for any record that does not parse.
CREATE TABLE events (
  id BIGINT,
  name STRING
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("events") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'protobuf',
  'protobuf.descriptor-file' = '{{ var("proto_descriptor") }}',
  'protobuf.message-class-name' = 'com.example.legacy.Legacy$Event'
);

CREATE TABLE names (id BIGINT, name STRING) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("names") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO names SELECT * FROM events;
