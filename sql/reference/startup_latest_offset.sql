-- scan.startup.mode = 'latest-offset': only records produced after the query starts.
CREATE TABLE orders (
  id BIGINT,
  amount DOUBLE
) WITH (
  'connector' = 'kafka',
  'topic' = 'orders',
  'properties.bootstrap.servers' = '{{ var("brokers", "127.0.0.1:9092") }}',
  'scan.startup.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE out_orders (id BIGINT, amount DOUBLE) WITH ('connector' = 'print');

INSERT INTO out_orders SELECT id, amount FROM orders;
