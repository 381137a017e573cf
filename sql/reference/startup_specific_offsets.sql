-- scan.startup.mode = 'specific-offsets': per-partition start offsets (the next record to read). Partitions not
-- listed start from the group's committed offset, else from earliest, with a warning.
CREATE TABLE orders (
  id BIGINT,
  amount DOUBLE
) WITH (
  'connector' = 'kafka',
  'topic' = 'orders',
  'properties.bootstrap.servers' = '{{ var("brokers", "127.0.0.1:9092") }}',
  'scan.startup.mode' = 'specific-offsets',
  'scan.startup.specific-offsets' = 'partition:0,offset:42;partition:1,offset:300',
  'format' = 'json'
);

CREATE TABLE out_orders (id BIGINT, amount DOUBLE) WITH ('connector' = 'print');

INSERT INTO out_orders SELECT id, amount FROM orders;
