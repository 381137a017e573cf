-- A GROUP BY over a debezium-json changelog into upsert-kafka: Flink retracts the old row of each update and delete before counting.
CREATE TABLE products (
  id INT,
  category STRING
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("products") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'debezium-json'
);

CREATE TABLE per_category (
  category STRING,
  products BIGINT,
  PRIMARY KEY (category) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = '{{ var("per_category") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'key.format' = 'json',
  'value.format' = 'json'
);

INSERT INTO per_category SELECT category, COUNT(*) FROM products GROUP BY category;
