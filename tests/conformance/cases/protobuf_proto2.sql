-- protobuf (proto2): fields a message does not set read as NULL, or with 'protobuf.read-default-values' as their declared defaults; a record without a required field is malformed; NULL columns are written as unset fields.
CREATE TABLE events (
  id BIGINT,
  name STRING,
  score INT,
  kind STRING,
  marks ARRAY<INT>,
  meta ROW<source STRING, seen BIGINT>,
  big BIGINT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("events") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'protobuf',
  'protobuf.descriptor-file' = '{{ var("proto_descriptor") }}',
  'protobuf.message-class-name' = 'com.example.legacy.Legacy$Event',
  'protobuf.ignore-parse-errors' = 'true'
);

CREATE TABLE events_with_defaults (
  id BIGINT,
  name STRING,
  score INT,
  kind STRING,
  marks ARRAY<INT>,
  meta ROW<source STRING, seen BIGINT>
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("events") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'protobuf',
  'protobuf.descriptor-file' = '{{ var("proto_descriptor") }}',
  'protobuf.message-class-name' = 'com.example.legacy.Legacy$Event',
  'protobuf.read-default-values' = 'true',
  'protobuf.ignore-parse-errors' = 'true'
);

CREATE TABLE plain (id BIGINT, name STRING, score INT, kind STRING, marks ARRAY<INT>, meta ROW<source STRING, seen BIGINT>, big BIGINT) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("plain") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

CREATE TABLE defaulted (id BIGINT, name STRING, score INT, kind STRING, marks ARRAY<INT>, meta ROW<source STRING, seen BIGINT>) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("defaulted") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

CREATE TABLE rewritten (id BIGINT, name STRING, score INT, kind STRING, marks ARRAY<INT>, meta ROW<source STRING, seen BIGINT>) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("rewritten") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'protobuf',
  'protobuf.descriptor-file' = '{{ var("proto_descriptor") }}',
  'protobuf.message-class-name' = 'com.example.legacy.Legacy$Event'
);

EXECUTE STATEMENT SET BEGIN
INSERT INTO plain SELECT * FROM events;
INSERT INTO defaulted SELECT * FROM events_with_defaults;
INSERT INTO rewritten SELECT id, name, score, kind, marks, meta FROM events;
END;
