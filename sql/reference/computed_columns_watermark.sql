-- Computed columns and a watermark on a computed event-time column.
CREATE TABLE payments (
  id BIGINT,
  epoch_ms BIGINT,
  amount_cents BIGINT,
  amount AS CAST(amount_cents AS DOUBLE) / 100,
  ts AS TO_TIMESTAMP_LTZ(epoch_ms, 3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH (
  'connector' = 'kafka',
  'topic' = 'payments',
  'properties.bootstrap.servers' = '{{ var("brokers", "127.0.0.1:9092") }}',
  'scan.startup.mode' = 'earliest-offset',
  'format' = 'json'
);

CREATE TABLE out_payments (id BIGINT, amount DOUBLE, ts TIMESTAMP_LTZ(3)) WITH ('connector' = 'print');

INSERT INTO out_payments SELECT id, amount, ts FROM payments;
