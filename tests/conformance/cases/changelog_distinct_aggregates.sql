-- DISTINCT aggregates over a debezium-json changelog (into upsert-kafka and written as debezium-json) and over a topic of inserts (written as debezium-json): a value counts once while any row holds it, as Flink's distinct map view counts it.
CREATE TABLE products (
  id INT,
  category STRING,
  price DECIMAL(10, 2)
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("products") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'debezium-json'
);

CREATE TABLE sales (
  shop STRING,
  item STRING
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("sales") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE distinct_prices (
  category STRING,
  prices BIGINT,
  price_sum DECIMAL(38, 2),
  items BIGINT,
  PRIMARY KEY (category) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = '{{ var("distinct_prices") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'key.format' = 'json',
  'value.format' = 'json'
);

CREATE TABLE distinct_changes (
  category STRING,
  prices BIGINT,
  highest DECIMAL(10, 2),
  average DECIMAL(38, 6)
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("distinct_changes") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'debezium-json'
);

CREATE TABLE shop_items (
  shop STRING,
  items BIGINT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("shop_items") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'debezium-json'
);

EXECUTE STATEMENT SET BEGIN
INSERT INTO distinct_prices SELECT category, COUNT(DISTINCT price), SUM(DISTINCT price), COUNT(*) FROM products GROUP BY category;
INSERT INTO distinct_changes SELECT category, COUNT(DISTINCT price), MAX(DISTINCT price), AVG(DISTINCT price) FROM products GROUP BY category;
INSERT INTO shop_items SELECT shop, COUNT(DISTINCT item) FROM sales GROUP BY shop;
END;
