-- Metadata column 'timestamp' (TIMESTAMP_LTZ(3) NOT NULL): the record's timestamp (also writable on a kafka sink).
CREATE TABLE events (
  id BIGINT,
  payload STRING,
  `event_time` TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL
) WITH (
  'connector' = 'kafka',
  'topic' = 'events',
  'properties.bootstrap.servers' = '{{ var("brokers", "127.0.0.1:9092") }}',
  'scan.startup.mode' = 'earliest-offset',
  'format' = 'json'
);

CREATE TABLE out_events (id BIGINT, `event_time` TIMESTAMP_LTZ(3)) WITH ('connector' = 'print');

INSERT INTO out_events SELECT id, `event_time` FROM events;
