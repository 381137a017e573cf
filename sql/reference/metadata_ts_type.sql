-- Metadata column 'timestamp-type' (STRING NOT NULL): NoTimestampType, CreateTime or LogAppendTime.
CREATE TABLE events (
  id BIGINT,
  payload STRING,
  `ts_type` STRING METADATA FROM 'timestamp-type' VIRTUAL
) WITH (
  'connector' = 'kafka',
  'topic' = 'events',
  'properties.bootstrap.servers' = '{{ var("brokers", "127.0.0.1:9092") }}',
  'scan.startup.mode' = 'earliest-offset',
  'format' = 'json'
);

CREATE TABLE out_events (id BIGINT, `ts_type` STRING) WITH ('connector' = 'print');

INSERT INTO out_events SELECT id, `ts_type` FROM events;
