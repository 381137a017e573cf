-- A source over several topics: 'topic' with ';'-separated names.
CREATE TABLE orders (id BIGINT, amount DOUBLE, src STRING METADATA FROM 'topic' VIRTUAL) WITH (
  'connector' = 'kafka',
  'topic' = 'orders_eu;orders_us',
  'properties.bootstrap.servers' = '{{ var("brokers", "127.0.0.1:9092") }}',
  'scan.startup.mode' = 'earliest-offset',
  'format' = 'json'
);

CREATE TABLE out_orders (id BIGINT, src STRING) WITH ('connector' = 'print');

INSERT INTO out_orders SELECT id, src FROM orders;
