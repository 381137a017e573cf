-- A GROUP BY over a debezium-json changelog written as debezium-json, with HAVING: each update and delete retracts the old rows of its groups, a changed result is written as the old row's delete and the new row's insert, an emptied group as a delete, as Flink's group aggregate with retraction writes them.
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

CREATE TABLE price_changes (
  category STRING,
  lowest DECIMAL(10, 2),
  highest DECIMAL(10, 2),
  items BIGINT,
  total DECIMAL(38, 2)
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("price_changes") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'debezium-json'
);

CREATE TABLE busy_changes (
  category STRING,
  average DECIMAL(38, 6)
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("busy_changes") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'canal-json'
);

EXECUTE STATEMENT SET BEGIN
INSERT INTO price_changes SELECT category, MIN(price), MAX(price), COUNT(*), SUM(price) FROM products GROUP BY category;
INSERT INTO busy_changes SELECT category, AVG(price) FROM products GROUP BY category HAVING COUNT(*) >= 2;
END;
