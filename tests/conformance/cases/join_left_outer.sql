-- A left outer join of two topics, then grouped by order: unmatched orders keep NULL names; the final table per order.
-- refused: A regular LEFT JOIN of two streams is not supported
CREATE TABLE orders (
  order_id INT,
  customer_id INT
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
  PRIMARY KEY (order_id) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'key.format' = 'json',
  'value.format' = 'json'
);

INSERT INTO dst SELECT o.order_id, MAX(c.name) FROM orders AS o LEFT JOIN customers AS c ON o.customer_id = c.id
GROUP BY o.order_id;
