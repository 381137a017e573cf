-- SET keys that mean something on Spark, a view, and an INSERT reading from it.
SET 'pipeline.name' = 'orders-by-country';
SET 'execution.checkpointing.interval' = '10 s';
SET 'parallelism.default' = '4';

CREATE TABLE orders (id BIGINT, amount DOUBLE, country STRING) WITH (
  'connector' = 'kafka',
  'topic' = 'orders',
  'properties.bootstrap.servers' = '{{ var("brokers", "127.0.0.1:9092") }}',
  'properties.group.id' = 'orders-by-country',
  'properties.auto.offset.reset' = 'earliest',
  'format' = 'json'
);

CREATE TEMPORARY VIEW positive_orders AS SELECT id, amount, country FROM orders WHERE amount > 0;

CREATE TABLE totals (country STRING, total DOUBLE) WITH ('connector' = 'print');

INSERT INTO totals SELECT country, SUM(amount) AS total FROM positive_orders GROUP BY country;
