-- Metadata column 'partition' (INT NOT NULL): the record's partition.
CREATE TABLE events (
  id BIGINT,
  payload STRING,
  `kafka_partition` INT METADATA FROM 'partition' VIRTUAL
) WITH (
  'connector' = 'kafka',
  'topic' = 'events',
  'properties.bootstrap.servers' = '{{ var("brokers", "127.0.0.1:9092") }}',
  'scan.startup.mode' = 'earliest-offset',
  'format' = 'json'
);

CREATE TABLE out_events (id BIGINT, `kafka_partition` INT) WITH ('connector' = 'print');

INSERT INTO out_events SELECT id, `kafka_partition` FROM events;
