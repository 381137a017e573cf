-- A GROUP BY over maxwell-json into upsert-kafka: each update retracts its old row (rebuilt from "old"), as Flink.
CREATE TABLE orders (
  id INT,
  customer STRING,
  amount DOUBLE
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("orders") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'maxwell-json'
);

CREATE TABLE per_customer (
  customer STRING,
  orders BIGINT,
  total DOUBLE,
  PRIMARY KEY (customer) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = '{{ var("per_customer") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'key.format' = 'json',
  'value.format' = 'json'
);

INSERT INTO per_customer SELECT customer, COUNT(*) AS orders, SUM(amount) AS total FROM orders GROUP BY customer;
