-- The csv format with its parse options: a malformed line is skipped and counted.
CREATE TABLE readings (sensor STRING, reading DOUBLE, note STRING) WITH (
  'connector' = 'kafka',
  'topic' = 'readings',
  'properties.bootstrap.servers' = '{{ var("brokers", "127.0.0.1:9092") }}',
  'scan.startup.mode' = 'earliest-offset',
  'format' = 'csv',
  'csv.field-delimiter' = '|',
  'csv.null-literal' = 'NULL',
  'csv.ignore-parse-errors' = 'true'
);

CREATE TABLE out_readings (sensor STRING, reading DOUBLE) WITH ('connector' = 'print');

INSERT INTO out_readings SELECT sensor, reading FROM readings WHERE reading IS NOT NULL;
