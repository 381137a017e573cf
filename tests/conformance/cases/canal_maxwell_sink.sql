-- Writing canal-json and maxwell-json from a projection of a debezium-json changelog: inserts and new rows as INSERT / insert, deletes and old rows as DELETE / delete, as Flink writes them.
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

CREATE TABLE canal_out (
  id INT,
  name STRING,
  weight DECIMAL(10, 2),
  updated TIMESTAMP(3)
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("canal_out") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'canal-json'
);

CREATE TABLE maxwell_out (
  id INT,
  name STRING,
  weight DECIMAL(10, 2)
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("maxwell_out") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'maxwell-json'
);

EXECUTE STATEMENT SET BEGIN
INSERT INTO canal_out SELECT id, name, weight, updated FROM products;
INSERT INTO maxwell_out SELECT id, UPPER(name), weight FROM products WHERE weight < 5;
END;
