-- An upsert-kafka table copied into another: updates replace, tombstones delete (the final table).
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

CREATE TABLE copy (
  id INT,
  country STRING,
  PRIMARY KEY (id) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = '{{ var("copy") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'key.format' = 'json',
  'value.format' = 'json'
);

INSERT INTO copy SELECT id, country FROM users;
