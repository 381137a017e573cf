-- The raw format as a key: a STRING key and a JSON value; the key written back as raw bytes.
CREATE TABLE src (
  k STRING,
  v INT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'key.format' = 'raw',
  'key.fields' = 'k',
  'value.format' = 'json',
  'value.fields-include' = 'EXCEPT_KEY'
);

CREATE TABLE dst (
  k STRING,
  v INT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'key.format' = 'raw',
  'key.fields' = 'k',
  'value.format' = 'json'
);

INSERT INTO dst SELECT k, v + 1 FROM src;
