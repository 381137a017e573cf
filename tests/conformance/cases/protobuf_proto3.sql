-- protobuf (proto3) read and written: scalars, unsigned and zigzag integers, enums as names and numbers, nested messages, repeated fields and maps; unset scalars read their defaults, unset messages and empty lists NULL; NULLs inside arrays written as the null literal, unknown enum names as the first value; malformed records skipped.
CREATE TABLE orders (
  id BIGINT,
  customer STRING,
  amount DOUBLE,
  ratio FLOAT,
  paid BOOLEAN,
  tag BYTES,
  units INT,
  status STRING,
  status_code INT,
  address ROW<city STRING, zip INT>,
  labels ARRAY<STRING>,
  lines ARRAY<ROW<sku STRING, qty INT>>,
  counts MAP<STRING, INT>,
  priority INT,
  delta BIGINT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("orders") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'protobuf',
  'protobuf.descriptor-file' = '{{ var("proto_descriptor") }}',
  'protobuf.message-class-name' = 'com.example.shop.Order',
  'protobuf.ignore-parse-errors' = 'true'
);

CREATE TABLE decoded (
  id BIGINT,
  customer STRING,
  amount DOUBLE,
  ratio FLOAT,
  paid BOOLEAN,
  tag BYTES,
  units INT,
  status STRING,
  status_code INT,
  address ROW<city STRING, zip INT>,
  labels ARRAY<STRING>,
  lines ARRAY<ROW<sku STRING, qty INT>>,
  count_a INT,
  count_n INT,
  priority INT,
  delta BIGINT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("decoded") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

CREATE TABLE encoded (
  id BIGINT,
  customer STRING,
  amount DOUBLE,
  units INT,
  status STRING,
  status_code INT,
  address ROW<city STRING, zip INT>,
  labels ARRAY<STRING>,
  lines ARRAY<ROW<sku STRING, qty INT>>,
  counts MAP<STRING, INT>,
  priority INT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("encoded") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'protobuf',
  'protobuf.descriptor-file' = '{{ var("proto_descriptor") }}',
  'protobuf.message-class-name' = 'com.example.shop.Order',
  'protobuf.write-null-string-literal' = 'n/a'
);

EXECUTE STATEMENT SET BEGIN
INSERT INTO decoded
SELECT id, customer, amount, ratio, paid, tag, units, status, status_code, address, labels, lines,
  counts['a'], CARDINALITY(counts), priority, delta
FROM orders;
INSERT INTO encoded
SELECT id, UPPER(customer), amount * 2, units,
  CASE WHEN id = 1 THEN 'BOGUS' ELSE status END,
  CASE WHEN id = 1 THEN 7 ELSE status_code END,
  CASE WHEN id = 3 THEN CAST(NULL AS ROW<city STRING, zip INT>) ELSE address END,
  ARRAY[customer, CAST(NULL AS STRING)],
  lines,
  MAP['k', CAST(id AS INT)],
  CASE WHEN id = 1 THEN CAST(NULL AS INT) ELSE priority END
FROM orders;
END;
