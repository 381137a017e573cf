-- Orders cleaning: keep valid orders with the customer name normalised and the amount in EUR; send the rest
-- to a reject sink. Sample data: `kafka-sql produce orders sql/examples/orders.jsonl --key-field id`.
-- Tested with expectations in tests/e2e/test_examples.py (the kafka-sql pytest plugin).
SET 'pipeline.name' = 'orders';

CREATE TABLE orders (
  id BIGINT,
  customer STRING,
  amount DOUBLE,
  currency STRING,
  order_time TIMESTAMP(3)
) WITH (
  'connector' = 'kafka',
  'topic' = 'orders',
  'properties.bootstrap.servers' = '{{ var("brokers", "127.0.0.1:9092") }}',
  'properties.group.id' = 'orders-cleaning',
  'properties.auto.offset.reset' = 'earliest',
  'format' = 'json'
);

CREATE TABLE clean_orders (
  id BIGINT,
  customer STRING,
  amount_eur DOUBLE,
  order_time TIMESTAMP(3)
) WITH (
  'connector' = 'kafka',
  'topic' = 'clean_orders',
  'properties.bootstrap.servers' = '{{ var("brokers", "127.0.0.1:9092") }}',
  'key.format' = 'json',
  'key.fields' = 'id',
  'value.format' = 'json'
);

CREATE TABLE rejected_orders (id BIGINT, customer STRING, amount DOUBLE, currency STRING) WITH (
  'connector' = 'print',
  'print-identifier' = 'rejected'
);

EXECUTE STATEMENT SET
BEGIN
  INSERT INTO clean_orders
  SELECT id, UPPER(TRIM(customer)), CASE currency WHEN 'USD' THEN ROUND(amount * 0.92, 2) ELSE amount END, order_time
  FROM orders
  WHERE id IS NOT NULL AND amount > 0 AND currency IN ('EUR', 'USD');

  INSERT INTO rejected_orders
  SELECT id, customer, amount, currency
  FROM orders
  WHERE id IS NULL OR amount IS NULL OR amount <= 0 OR currency IS NULL OR currency NOT IN ('EUR', 'USD');
END;
