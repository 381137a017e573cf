-- Metadata column 'headers' (MAP<STRING, BYTES> NOT NULL): the record's headers; a repeated key keeps the last value.
CREATE TABLE events (
  id BIGINT,
  payload STRING,
  `record_headers` MAP<STRING, BYTES> METADATA FROM 'headers' VIRTUAL
) WITH (
  'connector' = 'kafka',
  'topic' = 'events',
  'properties.bootstrap.servers' = '{{ var("brokers", "127.0.0.1:9092") }}',
  'scan.startup.mode' = 'earliest-offset',
  'format' = 'json'
);

CREATE TABLE out_events (id BIGINT, `record_headers` MAP<STRING, BYTES>) WITH ('connector' = 'print');

INSERT INTO out_events SELECT id, `record_headers` FROM events;
