-- Data-quality gate: every micro-batch written to clean_orders is checked before it is written and before its
-- offsets commit. Inline rules decide per row; the suite file adds great-expectations rules (batch-level ones
-- decide for the whole batch). Rejected rows, and records the JSON format skips, go to a dead-letter topic.
CREATE TABLE orders (id BIGINT, amount DOUBLE, country STRING) WITH (
  'connector' = 'kafka',
  'topic' = 'orders',
  'properties.bootstrap.servers' = '{{ var("brokers", "127.0.0.1:9092") }}',
  'properties.group.id' = 'orders-quality',
  'scan.startup.mode' = 'earliest-offset',
  'format' = 'json',
  'json.ignore-parse-errors' = 'true'
);

CREATE TABLE clean_orders (
  id BIGINT,
  amount DOUBLE,
  country STRING,
  CONSTRAINT has_id EXPECT (id IS NOT NULL) ON VIOLATION FAIL UPDATE,
  CONSTRAINT positive EXPECT (amount > 0) ON VIOLATION DROP ROW,
  CONSTRAINT eu EXPECT (country IN ('DE', 'FR', 'IT')) ON VIOLATION QUARANTINE,
  CONSTRAINT plausible EXPECT (amount < 10000)
) WITH (
  'connector' = 'kafka',
  'topic' = 'clean_orders',
  'properties.bootstrap.servers' = '{{ var("brokers", "127.0.0.1:9092") }}',
  'format' = 'json',
  'quality.suite' = 'quality_gate_suite.json',
  'quality.on-failure' = 'quarantine',
  'quality.quarantine.table' = 'dead_letters',
  'quality.quarantine.malformed' = 'true'
);

CREATE TABLE dead_letters (
  id BIGINT,
  amount DOUBLE,
  country STRING,
  failed_expectations ARRAY<STRING>,
  source_topic STRING,
  source_partition INT,
  source_offset BIGINT,
  raw_value STRING
) WITH (
  'connector' = 'kafka',
  'topic' = 'orders_dead_letters',
  'properties.bootstrap.servers' = '{{ var("brokers", "127.0.0.1:9092") }}',
  'format' = 'json'
);

INSERT INTO clean_orders SELECT id, amount, country FROM orders;
