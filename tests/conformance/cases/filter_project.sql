-- Projection, filter and arithmetic over a JSON topic, into a JSON topic.
CREATE TABLE src (
  id BIGINT,
  customer STRING,
  amount DECIMAL(10, 2),
  country STRING
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE dst (
  id BIGINT,
  customer STRING,
  amount DECIMAL(12, 3),
  country STRING
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst SELECT id, UPPER(customer), amount * 1.2, country FROM src WHERE amount > 0;
