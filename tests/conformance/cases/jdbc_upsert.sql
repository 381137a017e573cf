-- GROUP BY into a jdbc table with a PRIMARY KEY: the PostgreSQL table holds Flink's final rows.
-- postgres: CREATE TABLE {{ var("db_totals") }} (customer VARCHAR(20) PRIMARY KEY, orders BIGINT, total NUMERIC(12, 2), last_at TIMESTAMP(3))
CREATE TABLE src (
  id BIGINT, customer STRING, amount DECIMAL(10, 2), ts TIMESTAMP(3)
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE totals (
  customer STRING, orders BIGINT, total DECIMAL(12, 2), last_at TIMESTAMP(3), PRIMARY KEY (customer) NOT ENFORCED
) WITH (
  'connector' = 'jdbc',
  'url' = '{{ var("jdbc_url") }}',
  'table-name' = '{{ var("db_totals") }}',
  'username' = 'kafka_sql',
  'password' = '{{ var("jdbc_password") }}'
);

INSERT INTO totals SELECT customer, COUNT(*), SUM(amount), MAX(ts) FROM src GROUP BY customer;
