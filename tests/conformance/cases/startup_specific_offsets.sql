-- 'scan.startup.mode' = 'specific-offsets' and 'scan.bounded.mode' = 'specific-offsets': a slice of each partition.
CREATE TABLE src (
  id INT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'specific-offsets',
  'scan.startup.specific-offsets' = 'partition:0,offset:1;partition:1,offset:0',
  'scan.bounded.mode' = 'specific-offsets',
  'scan.bounded.specific-offsets' = 'partition:0,offset:3;partition:1,offset:1',
  'format' = 'json'
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
