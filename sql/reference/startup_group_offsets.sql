-- scan.startup.mode = 'group-offsets' (Flink's default): start from the consumer group's committed offsets.
-- Partitions without a committed offset follow 'properties.auto.offset.reset' (default none: the query fails
-- naming them). Offsets are committed back to the group after each completed micro-batch.
CREATE TABLE orders (
  id BIGINT,
  amount DOUBLE
) WITH (
  'connector' = 'kafka',
  'topic' = 'orders',
  'properties.bootstrap.servers' = '{{ var("brokers", "127.0.0.1:9092") }}',
  'properties.group.id' = 'orders-etl',
  'properties.auto.offset.reset' = 'earliest',
  'scan.startup.mode' = 'group-offsets',
  'format' = 'json'
);

CREATE TABLE out_orders (id BIGINT, amount DOUBLE) WITH ('connector' = 'print');

INSERT INTO out_orders SELECT id, amount FROM orders;
