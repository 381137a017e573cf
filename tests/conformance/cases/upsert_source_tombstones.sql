-- An upsert-kafka source: the latest value per key, tombstones delete; counted per country into upsert-kafka.
CREATE TABLE users (
  id INT,
  country STRING,
  PRIMARY KEY (id) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = '{{ var("users") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.bounded.mode' = 'latest-offset',
  'key.format' = 'json',
  'value.format' = 'json'
);

CREATE TABLE per_country (
  country STRING,
  users BIGINT,
  PRIMARY KEY (country) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = '{{ var("per_country") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'key.format' = 'json',
  'value.format' = 'json'
);

INSERT INTO per_country SELECT country, COUNT(*) FROM users GROUP BY country;
