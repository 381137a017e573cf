-- The raw format: a whole message value as one STRING, and a key and value as raw BYTES / BIGINT.
CREATE TABLE src (
  line STRING
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'raw'
);

CREATE TABLE dst (
  line STRING,
  len INT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst SELECT line, CHAR_LENGTH(line) FROM src;
