-- Writing debezium-avro-confluent from a projection of a debezium-json changelog: each change as Debezium's Avro envelope (after with op c, before with op d), its schema registered, as Flink writes them (values compared decoded).
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

CREATE TABLE changes (
  id INT,
  name STRING,
  weight DECIMAL(10, 2),
  updated TIMESTAMP(3)
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("changes") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'debezium-avro-confluent',
  'debezium-avro-confluent.url' = '{{ var("registry_url") }}'
);

INSERT INTO changes SELECT id, UPPER(name), weight, updated FROM products WHERE id < 3;
