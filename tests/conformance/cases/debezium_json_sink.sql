-- Writing debezium-json: a filtered projection of a debezium-json changelog (updates as a delete of the old row and an insert of the new one, deletes) and a topic of inserts, each into a kafka table in debezium-json, as Flink writes them.
CREATE TABLE products (
  id INT,
  name STRING,
  weight DECIMAL(10, 2),
  updated TIMESTAMP(3)
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("products") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'debezium-json'
);

CREATE TABLE orders (
  id BIGINT,
  amount DOUBLE,
  placed TIMESTAMP(3)
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("orders") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE light_products (
  id INT,
  name STRING,
  weight DECIMAL(10, 2),
  updated TIMESTAMP(3)
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("light_products") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'debezium-json'
);

CREATE TABLE order_events (
  id BIGINT,
  amount DOUBLE,
  placed TIMESTAMP(3)
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("order_events") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'debezium-json'
);

EXECUTE STATEMENT SET BEGIN
INSERT INTO light_products SELECT id, UPPER(name), weight, updated FROM products WHERE weight < 5;
INSERT INTO order_events SELECT id, amount * 2, placed FROM orders;
END;
