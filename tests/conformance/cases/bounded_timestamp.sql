-- 'scan.bounded.mode' = 'timestamp': records before the time only.
CREATE TABLE src (
  id INT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'timestamp',
  'format' = 'json',
  'scan.bounded.timestamp-millis' = '1700000002000'
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
