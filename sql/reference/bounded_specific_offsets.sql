-- scan.bounded.mode = 'specific-offsets': read up to the given offsets (exclusive); partitions not listed are not read,
-- then the query finishes and `kafka-sql run` exits.
CREATE TABLE orders (
  id BIGINT,
  amount DOUBLE
) WITH (
  'connector' = 'kafka',
  'topic' = 'orders',
  'properties.bootstrap.servers' = '{{ var("brokers", "127.0.0.1:9092") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.specific-offsets' = 'partition:0,offset:100;partition:1,offset:200',
  'scan.bounded.mode' = 'specific-offsets',
  'format' = 'json'
);

CREATE TABLE orders_copy (id BIGINT, amount DOUBLE) WITH (
  'connector' = 'filesystem',
  'path' = '/tmp/kafka-sql/orders_copy',
  'format' = 'parquet'
);

INSERT INTO orders_copy SELECT id, amount FROM orders;
