-- 'scan.startup.mode' = 'group-offsets' for a new group: 'properties.auto.offset.reset' = 'earliest' decides.
CREATE TABLE src (
  id INT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'group-offsets',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json',
  'properties.group.id' = 'conformance-{{ var("src") }}',
  'properties.auto.offset.reset' = 'earliest'
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
