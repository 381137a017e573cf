-- Metadata column 'offset' (BIGINT NOT NULL): the record's offset in its partition.
CREATE TABLE events (
  id BIGINT,
  payload STRING,
  `kafka_offset` BIGINT METADATA FROM 'offset' VIRTUAL
) WITH (
  'connector' = 'kafka',
  'topic' = 'events',
  'properties.bootstrap.servers' = '{{ var("brokers", "127.0.0.1:9092") }}',
  'scan.startup.mode' = 'earliest-offset',
  'format' = 'json'
);

CREATE TABLE out_events (id BIGINT, `kafka_offset` BIGINT) WITH ('connector' = 'print');

INSERT INTO out_events SELECT id, `kafka_offset` FROM events;
