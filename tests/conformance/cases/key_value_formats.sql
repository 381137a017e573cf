-- Key and value formats: 'key.fields' with 'key.fields-prefix' and 'value.fields-include' = 'EXCEPT_KEY', read and written.
CREATE TABLE src (
  k_id INT,
  name STRING,
  amount INT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'key.format' = 'json',
  'key.fields' = 'k_id',
  'key.fields-prefix' = 'k_',
  'value.format' = 'json',
  'value.fields-include' = 'EXCEPT_KEY'
);

CREATE TABLE dst (
  k_id INT,
  name STRING,
  doubled INT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'key.format' = 'json',
  'key.fields' = 'k_id',
  'key.fields-prefix' = 'k_',
  'value.format' = 'json',
  'value.fields-include' = 'EXCEPT_KEY'
);

INSERT INTO dst SELECT k_id, UPPER(name), amount * 2 FROM src;
