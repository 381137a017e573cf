-- A filesystem sink: parquet files, exactly-once through Spark's file sink log.
CREATE TABLE orders (id BIGINT, amount DOUBLE) WITH (
  'connector' = 'kafka',
  'topic' = 'orders',
  'properties.bootstrap.servers' = '{{ var("brokers", "127.0.0.1:9092") }}',
  'scan.startup.mode' = 'earliest-offset',
  'format' = 'json'
);

CREATE TABLE orders_archive (id BIGINT, amount DOUBLE) WITH (
  'connector' = 'filesystem',
  'path' = '/tmp/kafka-sql/orders_archive',
  'format' = 'parquet'
);

INSERT INTO orders_archive SELECT id, amount FROM orders;
