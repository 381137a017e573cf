-- scan.bounded.mode = 'timestamp': read up to the first offset at or after the given timestamp,
-- then the query finishes and `kafka-sql run` exits.
CREATE TABLE orders (
  id BIGINT,
  amount DOUBLE
) WITH (
  'connector' = 'kafka',
  'topic' = 'orders',
  'properties.bootstrap.servers' = '{{ var("brokers", "127.0.0.1:9092") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.timestamp-millis' = '1735693200000',
  'scan.bounded.mode' = 'timestamp',
  'format' = 'json'
);

CREATE TABLE orders_copy (id BIGINT, amount DOUBLE) WITH (
  'connector' = 'filesystem',
  'path' = '/tmp/kafka-sql/orders_copy',
  'format' = 'parquet'
);

INSERT INTO orders_copy SELECT id, amount FROM orders;
