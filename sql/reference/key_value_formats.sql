-- Key and value formats: the key is a JSON object of key.fields, the value a CSV line of the other columns.
-- key.fields-prefix keeps key column names apart from value column names (requires EXCEPT_KEY).
CREATE TABLE clicks (
  k_user_id BIGINT,
  url STRING,
  duration_ms INT
) WITH (
  'connector' = 'kafka',
  'topic' = 'clicks',
  'properties.bootstrap.servers' = '{{ var("brokers", "127.0.0.1:9092") }}',
  'scan.startup.mode' = 'earliest-offset',
  'key.format' = 'json',
  'key.fields' = 'k_user_id',
  'key.fields-prefix' = 'k_',
  'value.format' = 'csv',
  'value.csv.field-delimiter' = ';',
  'value.csv.ignore-parse-errors' = 'true',
  'value.fields-include' = 'EXCEPT_KEY'
);

CREATE TABLE out_clicks (user_id BIGINT, url STRING) WITH ('connector' = 'print');

INSERT INTO out_clicks SELECT k_user_id, url FROM clicks;
