-- MIN, MAX and COUNT over a debezium-json changelog into upsert-kafka, with HAVING: updates move rows between groups and retract their old values, a group whose rows are all deleted, or that HAVING no longer admits, is deleted from the sink, as Flink's group aggregate with retraction does.
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

CREATE TABLE price_range (
  category STRING,
  lowest DECIMAL(10, 2),
  highest DECIMAL(10, 2),
  items BIGINT,
  PRIMARY KEY (category) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = '{{ var("price_range") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'key.format' = 'json',
  'value.format' = 'json'
);

CREATE TABLE busy (
  category STRING,
  highest DECIMAL(10, 2),
  PRIMARY KEY (category) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = '{{ var("busy") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'key.format' = 'json',
  'value.format' = 'json'
);

EXECUTE STATEMENT SET BEGIN
INSERT INTO price_range SELECT category, MIN(price), MAX(price), COUNT(*) FROM products GROUP BY category;
INSERT INTO busy SELECT category, MAX(price) FROM products GROUP BY category HAVING COUNT(*) >= 2;
END;
