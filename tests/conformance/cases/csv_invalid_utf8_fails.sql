-- A CSV record whose bytes are no UTF-8 fails the job without 'csv.ignore-parse-errors'.
CREATE TABLE src (
  id INT,
  s STRING
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'csv'
);

CREATE TABLE dst (
  id INT,
  s STRING
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst SELECT id, s FROM src;
