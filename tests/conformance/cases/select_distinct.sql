-- SELECT DISTINCT into upsert-kafka: one row per distinct value.
CREATE TABLE src (
  country STRING,
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
  country STRING,
  PRIMARY KEY (country) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'key.format' = 'json',
  'value.format' = 'json'
);

INSERT INTO dst SELECT DISTINCT country FROM src WHERE country IS NOT NULL;
