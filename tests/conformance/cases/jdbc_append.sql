-- A jdbc table without a key: every row appended, each type as Flink's PostgreSQL dialect writes it (no ARRAY: Flink fails on it).
-- postgres: CREATE TABLE {{ var("db_log") }} (id BIGINT, name VARCHAR(40), ok BOOLEAN, amount NUMERIC(10, 2), ratio DOUBLE PRECISION, day DATE, tm TIME(3), ts TIMESTAMP(3), bin BYTEA)
CREATE TABLE src (
  id BIGINT, name STRING, ok BOOLEAN, amount DECIMAL(10, 2), ratio DOUBLE, d DATE, tm TIME(3), ts TIMESTAMP(3),
  bin BYTES
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE log (
  id BIGINT, name STRING, ok BOOLEAN, amount DECIMAL(10, 2), ratio DOUBLE, `day` DATE, tm TIME(3), ts TIMESTAMP(3),
  bin BYTES
) WITH (
  'connector' = 'jdbc',
  'url' = '{{ var("jdbc_url") }}',
  'table-name' = '{{ var("db_log") }}',
  'username' = 'kafka_sql',
  'password' = '{{ var("jdbc_password") }}'
);

INSERT INTO log SELECT id, UPPER(name), ok, amount, ratio, d, tm, ts, bin FROM src WHERE id <> 3;
