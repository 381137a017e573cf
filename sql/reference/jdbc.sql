-- PostgreSQL through Flink's jdbc connector: a table read once as a bounded source (split into id ranges), a
-- lookup join against another at processing time, and per-customer totals upserted by PRIMARY KEY.
CREATE TABLE orders (id BIGINT, customer_id BIGINT, amount DECIMAL(10, 2), proc_time AS PROCTIME()) WITH (
  'connector' = 'kafka',
  'topic' = 'orders',
  'properties.bootstrap.servers' = '{{ var("brokers", "127.0.0.1:9092") }}',
  'scan.startup.mode' = 'earliest-offset',
  'format' = 'json'
);

CREATE TABLE customers (id BIGINT, name STRING, tier INT, PRIMARY KEY (id) NOT ENFORCED) WITH (
  'connector' = 'jdbc',
  'url' = 'jdbc:postgresql://localhost:5432/shop',
  'table-name' = 'customers',
  'username' = 'etl',
  'password' = '{{ env_var("PGPASSWORD", "unset") }}'
);

CREATE TABLE archived_orders (id BIGINT, customer_id BIGINT, amount DECIMAL(10, 2)) WITH (
  'connector' = 'jdbc',
  'url' = 'jdbc:postgresql://localhost:5432/shop',
  'table-name' = 'orders_2025',
  'username' = 'etl',
  'password' = '{{ env_var("PGPASSWORD", "unset") }}',
  'scan.partition.column' = 'id',
  'scan.partition.num' = '4',
  'scan.partition.lower-bound' = '1',
  'scan.partition.upper-bound' = '1000000',
  'scan.fetch-size' = '1000'
);

CREATE TABLE enriched (id BIGINT, customer STRING, tier INT, amount DECIMAL(10, 2)) WITH (
  'connector' = 'kafka',
  'topic' = 'enriched_orders',
  'properties.bootstrap.servers' = '{{ var("brokers", "127.0.0.1:9092") }}',
  'format' = 'json'
);

CREATE TABLE customer_totals (customer_id BIGINT, orders BIGINT, total DECIMAL(20, 2),
  PRIMARY KEY (customer_id) NOT ENFORCED) WITH (
  'connector' = 'jdbc',
  'url' = 'jdbc:postgresql://localhost:5432/shop',
  'table-name' = 'customer_totals',
  'username' = 'etl',
  'password' = '{{ env_var("PGPASSWORD", "unset") }}'
);

CREATE TABLE archive_copy (id BIGINT, customer_id BIGINT, amount DECIMAL(10, 2)) WITH (
  'connector' = 'filesystem',
  'path' = '/tmp/kafka-sql/orders_2025',
  'format' = 'parquet'
);

EXECUTE STATEMENT SET BEGIN
INSERT INTO enriched
  SELECT o.id, c.name, c.tier, o.amount
  FROM orders AS o LEFT JOIN customers FOR SYSTEM_TIME AS OF o.proc_time AS c ON o.customer_id = c.id;
INSERT INTO customer_totals SELECT customer_id, COUNT(*), SUM(amount) FROM orders GROUP BY customer_id;
INSERT INTO archive_copy SELECT id, customer_id, amount FROM archived_orders;
END;
