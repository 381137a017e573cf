-- A computed column of LOCALTIMESTAMP (a call without parentheses) as the rowtime, and 'properties.zookeeper.connect', an old client setting Kafka's clients ignore.
CREATE TABLE src (
  id BIGINT,
  event_time AS LOCALTIMESTAMP,
  WATERMARK FOR event_time AS event_time - INTERVAL '5' SECOND
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'properties.zookeeper.connect' = 'localhost:2181',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE dst (
  id BIGINT,
  has_time BOOLEAN,
  recent BOOLEAN
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst
SELECT id, event_time IS NOT NULL, event_time > TIMESTAMP '2024-01-01 00:00:00' FROM src WHERE id > 1;
