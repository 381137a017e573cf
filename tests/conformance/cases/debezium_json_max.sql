-- MAX over a debezium-json changelog: the update's old price is retracted from the values the group saw, so the maximum falls back to the next one, as Flink's MaxWithRetractAggFunction does.
CREATE TABLE products (
  id INT,
  category STRING,
  price INT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("products") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'debezium-json'
);

CREATE TABLE top_price (
  category STRING,
  price INT,
  PRIMARY KEY (category) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = '{{ var("top_price") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'key.format' = 'json',
  'value.format' = 'json'
);

INSERT INTO top_price SELECT category, MAX(price) FROM products GROUP BY category;
