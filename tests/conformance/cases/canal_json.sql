-- canal-json source into upsert-kafka: messages of several rows, updates with their "old" values, a DDL message and another table's rows skipped (canal-json.table.include); Flink's final table.
CREATE TABLE products (
  id INT,
  name STRING,
  weight DECIMAL(10, 2),
  updated TIMESTAMP(3),
  origin STRING METADATA FROM 'value.table' VIRTUAL,
  keys ARRAY<STRING> METADATA FROM 'value.pk-names' VIRTUAL,
  ingested TIMESTAMP_LTZ(3) METADATA FROM 'value.ingestion-timestamp' VIRTUAL,
  happened TIMESTAMP_LTZ(3) METADATA FROM 'value.event-timestamp' VIRTUAL,
  PRIMARY KEY (id) NOT ENFORCED
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("products") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'canal-json',
  'canal-json.table.include' = 'prod.*'
);

CREATE TABLE latest (
  id INT,
  name STRING,
  weight DECIMAL(10, 2),
  updated TIMESTAMP(3),
  origin STRING,
  keys ARRAY<STRING>,
  ingested TIMESTAMP_LTZ(3),
  happened TIMESTAMP_LTZ(3),
  PRIMARY KEY (id) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = '{{ var("latest") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'key.format' = 'json',
  'value.format' = 'json'
);

INSERT INTO latest SELECT id, UPPER(name), weight, updated, origin, keys, ingested, happened FROM products;
