-- scan.startup.mode = 'timestamp': the first record at or after the given epoch milliseconds; partitions with
-- no such record start at their latest offset.
CREATE TABLE orders (
  id BIGINT,
  amount DOUBLE
) WITH (
  'connector' = 'kafka',
  'topic' = 'orders',
  'properties.bootstrap.servers' = '{{ var("brokers", "127.0.0.1:9092") }}',
  'scan.startup.mode' = 'timestamp',
  'scan.startup.timestamp-millis' = '1735689600000',
  'format' = 'json'
);

CREATE TABLE out_orders (id BIGINT, amount DOUBLE) WITH ('connector' = 'print');

INSERT INTO out_orders SELECT id, amount FROM orders;
