-- Quickstart: read orders from Kafka, drop refunds (non-positive amounts), and total the revenue per customer
-- per one-minute event-time window. Run it with `make quickstart` (starts a broker and produces sample data).
SET 'pipeline.name' = 'quickstart';

CREATE TABLE orders (
  id BIGINT,
  customer STRING,
  amount DOUBLE,
  order_time TIMESTAMP(3),
  WATERMARK FOR order_time AS order_time - INTERVAL '5' SECOND
) WITH (
  'connector' = 'kafka',
  'topic' = 'quickstart_orders',
  'properties.bootstrap.servers' = '{{ var("brokers", "127.0.0.1:9092") }}',
  'properties.group.id' = 'quickstart',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE refunds (id BIGINT, customer STRING, amount DOUBLE) WITH (
  'connector' = 'print',
  'print-identifier' = 'refund'
);

CREATE TABLE revenue_per_minute (
  window_start TIMESTAMP(3),
  window_end TIMESTAMP(3),
  customer STRING,
  orders BIGINT,
  revenue DOUBLE
) WITH (
  'connector' = 'print',
  'print-identifier' = 'revenue'
);

EXECUTE STATEMENT SET
BEGIN
  INSERT INTO refunds SELECT id, customer, amount FROM orders WHERE amount <= 0;

  INSERT INTO revenue_per_minute
  SELECT window_start, window_end, customer, COUNT(*) AS orders, SUM(amount) AS revenue
  FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(order_time), INTERVAL '1' MINUTE))
  WHERE amount > 0
  GROUP BY window_start, window_end, customer;
END;
