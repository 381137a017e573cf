-- Writable Kafka metadata: the record timestamp and headers set from columns.
CREATE TABLE src (
  id INT,
  ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp'
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE dst (
  id INT,
  ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp',
  hdrs MAP<STRING, BYTES> METADATA FROM 'headers'
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst SELECT id, ts + INTERVAL '1' SECOND, MAP['h', CAST('v' AS BYTES)] FROM src;
