-- A kafka sink: JSON value, key from 'id', a writable record timestamp and headers, at-least-once.
CREATE TABLE orders (id BIGINT, amount DOUBLE, ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp') WITH (
  'connector' = 'kafka',
  'topic' = 'orders',
  'properties.bootstrap.servers' = '{{ var("brokers", "127.0.0.1:9092") }}',
  'scan.startup.mode' = 'earliest-offset',
  'format' = 'json'
);

CREATE TABLE enriched (
  id BIGINT,
  amount DOUBLE,
  ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp',
  hdrs MAP<STRING, BYTES> METADATA FROM 'headers'
) WITH (
  'connector' = 'kafka',
  'topic' = 'orders_enriched',
  'properties.bootstrap.servers' = '{{ var("brokers", "127.0.0.1:9092") }}',
  'key.format' = 'raw',
  'key.fields' = 'id',
  'value.format' = 'json',
  'sink.partitioner' = 'default',
  'sink.delivery-guarantee' = 'at-least-once'
);

INSERT INTO enriched SELECT id, amount * 1.2, ts, MAP['source', CAST('orders' AS BYTES)] FROM orders;
