-- 'scan.startup.mode' = 'timestamp': the first record at or after the time in each partition.
CREATE TABLE src (
  id INT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'timestamp',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json',
  'scan.startup.timestamp-millis' = '1700000002000'
);

CREATE TABLE dst (
  id INT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst SELECT id FROM src;
