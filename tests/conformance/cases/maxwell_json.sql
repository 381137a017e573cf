-- maxwell-json source into upsert-kafka: inserts, updates with their "old" values and deletes leave Flink's final table.
CREATE TABLE products (
  id INT,
  name STRING,
  weight DECIMAL(10, 2),
  updated TIMESTAMP(3),
  origin STRING METADATA FROM 'value.table' VIRTUAL,
  db STRING METADATA FROM 'value.database' VIRTUAL,
  ingested TIMESTAMP_LTZ(3) METADATA FROM 'value.ingestion-timestamp' VIRTUAL,
  PRIMARY KEY (id) NOT ENFORCED
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("products") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'maxwell-json'
);

CREATE TABLE latest (
  id INT,
  name STRING,
  weight DECIMAL(10, 2),
  updated TIMESTAMP(3),
  origin STRING,
  db STRING,
  ingested TIMESTAMP_LTZ(3),
  PRIMARY KEY (id) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = '{{ var("latest") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'key.format' = 'json',
  'value.format' = 'json'
);

INSERT INTO latest SELECT id, UPPER(name), weight, updated, origin, db, ingested FROM products;
