-- Records keyed by 'key.fields' land in the partition Kafka's default partitioner picks for the key (murmur2).
CREATE TABLE src (
  id INT,
  name STRING
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
  name STRING
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json',
  'key.format' = 'json',
  'key.fields' = 'id'
);

INSERT INTO dst SELECT id, name FROM src;
