-- scan.bounded.mode = 'group-offsets': read up to the consumer group's committed offsets when the query starts,
-- then the query finishes and `kafka-sql run` exits.
CREATE TABLE orders (
  id BIGINT,
  amount DOUBLE
) WITH (
  'connector' = 'kafka',
  'topic' = 'orders',
  'properties.bootstrap.servers' = '{{ var("brokers", "127.0.0.1:9092") }}',
  'scan.startup.mode' = 'earliest-offset',
  'properties.group.id' = 'orders-etl',
  'properties.auto.offset.reset' = 'earliest',
  'scan.bounded.mode' = 'group-offsets',
  'format' = 'json'
);

CREATE TABLE orders_copy (id BIGINT, amount DOUBLE) WITH (
  'connector' = 'filesystem',
  'path' = '/tmp/kafka-sql/orders_copy',
  'format' = 'parquet'
);

INSERT INTO orders_copy SELECT id, amount FROM orders;
