-- An Apache Iceberg sink (Flink's 'connector' = 'iceberg' table options, Hadoop catalog on a local warehouse):
-- a GROUP BY upserted by its PRIMARY KEY, each micro-batch one Iceberg commit, exactly once per checkpoint.
-- The database and the table are created from this DDL when missing.
CREATE TABLE orders (id BIGINT, customer STRING, amount DECIMAL(10, 2)) WITH (
  'connector' = 'kafka',
  'topic' = 'orders',
  'properties.bootstrap.servers' = '{{ var("brokers", "127.0.0.1:9092") }}',
  'scan.startup.mode' = 'earliest-offset',
  'format' = 'json'
);

CREATE TABLE customer_totals (
  customer STRING, orders BIGINT, total DECIMAL(20, 2), PRIMARY KEY (customer) NOT ENFORCED
) WITH (
  'connector' = 'iceberg',
  'catalog-name' = 'local',
  'catalog-type' = 'hadoop',
  'warehouse' = 'file:///tmp/kafka-sql/warehouse',
  'catalog-database' = 'shop'
);

INSERT INTO customer_totals SELECT customer, COUNT(*), SUM(amount) FROM orders GROUP BY customer;
