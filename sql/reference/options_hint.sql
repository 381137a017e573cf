-- Dynamic table options: an /*+ OPTIONS(...) */ hint overrides WITH options for one query.
CREATE TABLE orders (id BIGINT, amount DOUBLE) WITH (
  'connector' = 'kafka',
  'topic' = 'orders',
  'properties.bootstrap.servers' = '{{ var("brokers", "127.0.0.1:9092") }}',
  'properties.group.id' = 'orders-etl',
  'format' = 'json'
);

CREATE TABLE out_orders (id BIGINT, amount DOUBLE) WITH ('connector' = 'print');

INSERT INTO out_orders
SELECT id, amount FROM orders /*+ OPTIONS('scan.startup.mode' = 'earliest-offset') */;
