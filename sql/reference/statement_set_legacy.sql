-- The SQL client's legacy statement set form: BEGIN STATEMENT SET; ... END;
CREATE TABLE orders (id BIGINT, amount DOUBLE) WITH (
  'connector' = 'kafka',
  'topic' = 'orders',
  'properties.bootstrap.servers' = '{{ var("brokers", "127.0.0.1:9092") }}',
  'scan.startup.mode' = 'earliest-offset',
  'format' = 'json'
);

CREATE TABLE small_orders (id BIGINT, amount DOUBLE) WITH ('connector' = 'print');
CREATE TABLE large_orders (id BIGINT, amount DOUBLE) WITH ('connector' = 'print');

BEGIN STATEMENT SET;
INSERT INTO small_orders SELECT id, amount FROM orders WHERE amount <= 100;
INSERT INTO large_orders SELECT id, amount FROM orders WHERE amount > 100;
END;
