-- CSV options: a tab delimiter, a null literal, no quoting, an array column.
CREATE TABLE src (
  id INT,
  s STRING,
  arr ARRAY<INT>
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'csv',
  'csv.field-delimiter' = '\t',
  'csv.null-literal' = 'N/A'
);

CREATE TABLE dst (
  id INT,
  s STRING,
  arr ARRAY<INT>
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'csv',
  'csv.field-delimiter' = '|',
  'csv.null-literal' = 'NULL',
  'csv.disable-quote-character' = 'true'
);

INSERT INTO dst SELECT * FROM src;
