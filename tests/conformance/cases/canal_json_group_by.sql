-- A GROUP BY over canal-json with WHERE, HAVING, COUNT, SUM and AVG into upsert-kafka: updates (old rows rebuilt from "old"), moves between groups and deletes retracted, as Flink.
CREATE TABLE products (
  id INT,
  category STRING,
  weight DECIMAL(10, 2),
  stock INT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("products") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'canal-json'
);

CREATE TABLE per_category (
  category STRING,
  products BIGINT,
  with_stock BIGINT,
  weight DECIMAL(20, 2),
  stock INT,
  avg_stock INT,
  PRIMARY KEY (category) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = '{{ var("per_category") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'key.format' = 'json',
  'value.format' = 'json'
);

INSERT INTO per_category
SELECT category, COUNT(*), COUNT(stock), SUM(weight), SUM(stock), AVG(stock)
FROM products
WHERE weight < 100
GROUP BY category
HAVING COUNT(*) < 3;
