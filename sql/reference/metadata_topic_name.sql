-- Metadata column 'topic' (STRING NOT NULL): the record's topic.
CREATE TABLE events (
  id BIGINT,
  payload STRING,
  `topic_name` STRING METADATA FROM 'topic' VIRTUAL
) WITH (
  'connector' = 'kafka',
  'topic' = 'events',
  'properties.bootstrap.servers' = '{{ var("brokers", "127.0.0.1:9092") }}',
  'scan.startup.mode' = 'earliest-offset',
  'format' = 'json'
);

CREATE TABLE out_events (id BIGINT, `topic_name` STRING) WITH ('connector' = 'print');

INSERT INTO out_events SELECT id, `topic_name` FROM events;
