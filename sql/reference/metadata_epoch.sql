-- Metadata column 'leader-epoch' (INT NULL): the leader epoch of the record, when the broker reports one.
CREATE TABLE events (
  id BIGINT,
  payload STRING,
  `epoch` INT METADATA FROM 'leader-epoch' VIRTUAL
) WITH (
  'connector' = 'kafka',
  'topic' = 'events',
  'properties.bootstrap.servers' = '{{ var("brokers", "127.0.0.1:9092") }}',
  'scan.startup.mode' = 'earliest-offset',
  'format' = 'json'
);

CREATE TABLE out_events (id BIGINT, `epoch` INT) WITH ('connector' = 'print');

INSERT INTO out_events SELECT id, `epoch` FROM events;
