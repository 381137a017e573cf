-- EXECUTE STATEMENT SET: several INSERTs of one job; here each becomes its own Spark query and checkpoint.
CREATE TABLE orders (id BIGINT, amount DOUBLE, country STRING) WITH (
  'connector' = 'kafka',
  'topic' = 'orders',
  'properties.bootstrap.servers' = '{{ var("brokers", "127.0.0.1:9092") }}',
  'scan.startup.mode' = 'earliest-offset',
  'format' = 'json'
);

CREATE TABLE big_orders (id BIGINT, amount DOUBLE) WITH ('connector' = 'print', 'print-identifier' = 'big');
CREATE TABLE all_orders (id BIGINT, country STRING) WITH ('connector' = 'blackhole');

EXECUTE STATEMENT SET
BEGIN
  INSERT INTO big_orders SELECT id, amount FROM orders WHERE amount > 100;
  INSERT INTO all_orders SELECT id, country FROM orders;
END;
