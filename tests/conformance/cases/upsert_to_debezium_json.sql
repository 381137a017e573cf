-- An upsert-kafka source written as debezium-json: each key's previous row is deleted before its new row is inserted, and a tombstone deletes it, as Flink's ChangelogNormalize gives them.
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

CREATE TABLE user_changes (
  id INT,
  country STRING
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("user_changes") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'debezium-json'
);

INSERT INTO user_changes SELECT id, country FROM users;
