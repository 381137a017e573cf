-- A regular inner join of two append-only topics (an append-only result), into a Kafka topic.
CREATE TABLE orders (
  order_id INT,
  customer_id INT,
  amount INT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("orders") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE customers (
  id INT,
  name STRING
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("customers") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE dst (
  order_id INT,
  name STRING,
  amount INT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst SELECT o.order_id, c.name, o.amount FROM orders AS o JOIN customers AS c ON o.customer_id = c.id;
