-- avro-confluent through a schema registry: records of two schema versions read into the table, written back.
CREATE TABLE src (
  id BIGINT, name STRING, amount DOUBLE, dt DATE, ts TIMESTAMP(3)
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'avro-confluent',
  'avro-confluent.url' = '{{ var("registry_url") }}'
);

CREATE TABLE dst (
  id BIGINT, name STRING, amount DOUBLE, dt DATE, ts TIMESTAMP(3)
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'avro-confluent',
  'avro-confluent.url' = '{{ var("registry_url") }}'
);

INSERT INTO dst SELECT id, UPPER(name), amount * 2, dt, ts FROM src;
