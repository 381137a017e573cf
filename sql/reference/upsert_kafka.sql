-- upsert-kafka: a changelog keyed by the PRIMARY KEY; the sink keeps the latest row per key (update mode)
-- and writes a tombstone (null value) for a deleted key.
CREATE TABLE pageviews (
  user_id BIGINT,
  page STRING
) WITH (
  'connector' = 'kafka',
  'topic' = 'pageviews',
  'properties.bootstrap.servers' = '{{ var("brokers", "127.0.0.1:9092") }}',
  'scan.startup.mode' = 'earliest-offset',
  'format' = 'json'
);

CREATE TABLE pageviews_per_user (
  user_id BIGINT,
  `views` BIGINT,
  PRIMARY KEY (user_id) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = 'pageviews_per_user',
  'properties.bootstrap.servers' = '{{ var("brokers", "127.0.0.1:9092") }}',
  'key.format' = 'json',
  'value.format' = 'json'
);

INSERT INTO pageviews_per_user SELECT user_id, COUNT(*) AS `views` FROM pageviews GROUP BY user_id;
