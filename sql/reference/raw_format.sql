-- The raw format: the whole value as one STRING column.
CREATE TABLE log_lines (line STRING) WITH (
  'connector' = 'kafka',
  'topic' = 'logs',
  'properties.bootstrap.servers' = '{{ var("brokers", "127.0.0.1:9092") }}',
  'scan.startup.mode' = 'earliest-offset',
  'format' = 'raw',
  'raw.charset' = 'UTF-8'
);

CREATE TABLE errors (line STRING) WITH ('connector' = 'print', 'print-identifier' = 'error');

INSERT INTO errors SELECT line FROM log_lines WHERE line LIKE '%ERROR%';
