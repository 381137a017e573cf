-- JSON_OBJECT, JSON_ARRAY and JSON_STRING over columns: numbers, text with quotes and non-ASCII, BOOLEAN, TIMESTAMP(3), ARRAY and MAP values, nested JSON_OBJECT / JSON_ARRAY (JSON, not quoted), NULL ON NULL and ABSENT ON NULL, NULL inputs.
CREATE TABLE src (
  id INT,
  name STRING,
  amount DOUBLE,
  price DECIMAL(6, 2),
  ok BOOLEAN,
  ts TIMESTAMP(3),
  tags ARRAY<STRING>,
  attrs MAP<STRING, INT>
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE dst (
  id INT,
  obj STRING,
  sparse STRING,
  arr STRING,
  arr_with_nulls STRING,
  name_json STRING,
  amount_json STRING,
  ts_json STRING
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst SELECT
  id,
  JSON_OBJECT(
    KEY 'id' VALUE id, KEY 'name' VALUE name, KEY 'amount' VALUE amount, KEY 'price' VALUE price, KEY 'ok' VALUE ok,
    KEY 'ts' VALUE ts, KEY 'tags' VALUE tags, KEY 'attrs' VALUE attrs,
    KEY 'inner' VALUE JSON_OBJECT(KEY 'n' VALUE name), KEY 'list' VALUE JSON_ARRAY(id, name)
  ),
  JSON_OBJECT(KEY 'name' VALUE name, KEY 'amount' VALUE amount ABSENT ON NULL),
  JSON_ARRAY(id, name, ok, JSON_ARRAY(amount)),
  JSON_ARRAY(name, amount NULL ON NULL),
  JSON_STRING(name),
  JSON_STRING(amount),
  JSON_STRING(ts)
FROM src;
