-- Lookup joins against a jdbc (PostgreSQL) table at processing time: LEFT JOIN keeps orders without a customer, JOIN drops them; a filter on the looked-up row.
-- postgres: CREATE TABLE {{ var("db_customers") }} (id BIGINT PRIMARY KEY, name VARCHAR(20), tier INT, since DATE)
-- postgres: INSERT INTO {{ var("db_customers") }} VALUES (1, 'ann', 1, DATE '2020-01-02'), (2, 'bob', NULL, NULL), (3, 'cy', 2, DATE '2024-02-29')
CREATE TABLE orders (
  id BIGINT,
  customer_id BIGINT,
  amount DOUBLE,
  proc_time AS PROCTIME()
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("orders") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE customers (
  id BIGINT,
  name STRING,
  tier INT,
  since DATE,
  PRIMARY KEY (id) NOT ENFORCED
) WITH (
  'connector' = 'jdbc',
  'url' = '{{ var("jdbc_url") }}',
  'table-name' = '{{ var("db_customers") }}',
  'username' = 'kafka_sql',
  'password' = '{{ var("jdbc_password") }}',
  'lookup.cache' = 'PARTIAL',
  'lookup.partial-cache.max-rows' = '100',
  'lookup.partial-cache.expire-after-write' = '1 min'
);

CREATE TABLE enriched (
  id BIGINT,
  name STRING,
  tier INT,
  since DATE,
  amount DOUBLE
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("enriched") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

CREATE TABLE ranked (
  id BIGINT,
  name STRING,
  tier INT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("ranked") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

EXECUTE STATEMENT SET BEGIN
INSERT INTO enriched
SELECT o.id, c.name, c.tier, c.since, o.amount
FROM orders AS o LEFT JOIN customers FOR SYSTEM_TIME AS OF o.proc_time AS c ON o.customer_id = c.id;
INSERT INTO ranked
SELECT o.id, UPPER(c.name), c.tier
FROM orders AS o JOIN customers FOR SYSTEM_TIME AS OF o.proc_time AS c ON o.customer_id = c.id
WHERE c.tier IS NOT NULL;
END;
