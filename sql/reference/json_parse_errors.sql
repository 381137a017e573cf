-- json parse-error options: fail on a missing field, or skip malformed records and count them.
CREATE TABLE strict_orders (id BIGINT, amount DOUBLE) WITH (
  'connector' = 'kafka',
  'topic' = 'orders',
  'properties.bootstrap.servers' = '{{ var("brokers", "127.0.0.1:9092") }}',
  'scan.startup.mode' = 'earliest-offset',
  'format' = 'json',
  'json.fail-on-missing-field' = 'true'
);

CREATE TABLE lenient_orders (id BIGINT, amount DOUBLE) WITH (
  'connector' = 'kafka',
  'topic' = 'orders',
  'properties.bootstrap.servers' = '{{ var("brokers", "127.0.0.1:9092") }}',
  'scan.startup.mode' = 'earliest-offset',
  'format' = 'json',
  'json.ignore-parse-errors' = 'true'
);

CREATE TABLE out_orders (id BIGINT, amount DOUBLE) WITH ('connector' = 'blackhole');

INSERT INTO out_orders SELECT id, amount FROM lenient_orders;
