-- Delta Lake sinks: an append-only log partitioned by country, and per-customer totals merged by PRIMARY KEY.
-- Each micro-batch is one Delta commit, exactly once per checkpoint; the tables are created from this DDL.
CREATE TABLE orders (id BIGINT, customer STRING, country STRING, amount DECIMAL(10, 2)) WITH (
  'connector' = 'kafka',
  'topic' = 'orders',
  'properties.bootstrap.servers' = '{{ var("brokers", "127.0.0.1:9092") }}',
  'scan.startup.mode' = 'earliest-offset',
  'format' = 'json'
);

CREATE TABLE orders_lake (id BIGINT, customer STRING, country STRING, amount DECIMAL(10, 2))
PARTITIONED BY (country) WITH (
  'connector' = 'delta',
  'table-path' = '/tmp/kafka-sql/lake/orders'
);

CREATE TABLE customer_totals (
  customer STRING, orders BIGINT, total DECIMAL(20, 2), PRIMARY KEY (customer) NOT ENFORCED
) WITH (
  'connector' = 'delta',
  'table-path' = '/tmp/kafka-sql/lake/customer_totals'
);

EXECUTE STATEMENT SET BEGIN
INSERT INTO orders_lake SELECT id, customer, country, amount FROM orders;
INSERT INTO customer_totals SELECT customer, COUNT(*), SUM(amount) FROM orders GROUP BY customer;
END;
