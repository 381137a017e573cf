-- CSV read and write: empty fields, quotes, NULL, booleans, timestamps, trailing spaces.
CREATE TABLE src (
  id INT,
  s STRING,
  flag BOOLEAN,
  ts TIMESTAMP(3),
  dc DECIMAL(5, 2)
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'csv',
  'csv.ignore-parse-errors' = 'true'
);

CREATE TABLE dst (
  id INT,
  s STRING,
  flag BOOLEAN,
  ts TIMESTAMP(3),
  dc DECIMAL(5, 2)
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'csv'
);

INSERT INTO dst SELECT * FROM src;
