-- A jdbc table as a bounded source: read whole, and split by 'scan.partition.*' into ranges of id (a row outside the bounds is not read, as in Flink), each type as Flink reads it.
-- postgres: CREATE TABLE {{ var("db_items") }} (id BIGINT, name VARCHAR(40), ok BOOLEAN, amount NUMERIC(10, 2), ratio DOUBLE PRECISION, day DATE, tm TIME(3), ts TIMESTAMP(3), qty INTEGER)
-- postgres: INSERT INTO {{ var("db_items") }} VALUES (1, 'ann', TRUE, 10.5, 0.25, DATE '2024-02-29', TIME '12:34:56.789', TIMESTAMP '2024-05-06 07:08:09.123', 3), (2, 'bob', FALSE, -3, 1e300, DATE '1969-12-31', TIME '00:00:00', TIMESTAMP '1969-12-31 23:59:59.999', NULL), (5, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL), (9, 'cy', TRUE, 0.01, -0.5, DATE '2000-01-01', TIME '23:59:59', TIMESTAMP '2000-01-01 00:00:00', 7), (12, 'out of bounds', TRUE, 1, 1, DATE '2000-01-02', TIME '01:02:03', TIMESTAMP '2000-01-02 03:04:05', 1)
CREATE TABLE items (
  id BIGINT, name STRING, ok BOOLEAN, amount DECIMAL(10, 2), ratio DOUBLE, `day` DATE, tm TIME(3), ts TIMESTAMP(3),
  qty INT
) WITH (
  'connector' = 'jdbc',
  'url' = '{{ var("jdbc_url") }}',
  'table-name' = '{{ var("db_items") }}',
  'username' = 'kafka_sql',
  'password' = '{{ var("jdbc_password") }}'
);

CREATE TABLE ranged_items (id BIGINT, name STRING, qty INT) WITH (
  'connector' = 'jdbc',
  'url' = '{{ var("jdbc_url") }}',
  'table-name' = '{{ var("db_items") }}',
  'username' = 'kafka_sql',
  'password' = '{{ var("jdbc_password") }}',
  'scan.partition.column' = 'id',
  'scan.partition.num' = '3',
  'scan.partition.lower-bound' = '1',
  'scan.partition.upper-bound' = '10',
  'scan.fetch-size' = '2'
);

CREATE TABLE all_out (
  id BIGINT, name STRING, ok BOOLEAN, amount DECIMAL(10, 2), ratio DOUBLE, `day` DATE, tm TIME(3), ts TIMESTAMP(3),
  qty INT, total DECIMAL(21, 2)
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("all_out") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

CREATE TABLE ranged_out (id BIGINT, name STRING, qty INT) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("ranged_out") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

EXECUTE STATEMENT SET BEGIN
INSERT INTO all_out SELECT id, name, ok, amount, ratio, `day`, tm, ts, qty, amount * qty FROM items;
INSERT INTO ranged_out SELECT id, name, qty FROM ranged_items;
END;
