-- 'topic-pattern' subscribes to every topic matching a regular expression. With a discovery interval, topics
-- and partitions that appear while the query runs are picked up and read from their earliest offset.
CREATE TABLE orders (id BIGINT, amount DOUBLE, src STRING METADATA FROM 'topic' VIRTUAL) WITH (
  'connector' = 'kafka',
  'topic-pattern' = 'orders_.*',
  'properties.bootstrap.servers' = '{{ var("brokers", "127.0.0.1:9092") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.topic-partition-discovery.interval' = '10 s',
  'format' = 'json'
);

CREATE TABLE out_orders (id BIGINT, src STRING) WITH ('connector' = 'print');

INSERT INTO out_orders SELECT id, src FROM orders;
