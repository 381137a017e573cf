-- A malformed JSON record without 'json.ignore-parse-errors' fails the job.
CREATE TABLE src (
  id INT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
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

INSERT INTO dst SELECT * FROM src;
