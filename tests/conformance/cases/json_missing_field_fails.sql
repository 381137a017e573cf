-- 'json.fail-on-missing-field': a record without a field of the schema fails the job.
CREATE TABLE src (
  id INT,
  name STRING
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json',
  'json.fail-on-missing-field' = 'true'
);

CREATE TABLE dst (
  id INT,
  name STRING
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst SELECT * FROM src;
