-- The avro format reads what Flink wrote (Flink's output of case avro_format) and a NULL message (no row).
CREATE TABLE src (
  b BOOLEAN, t TINYINT, s SMALLINT, i INT NOT NULL, l BIGINT, f FLOAT, d DOUBLE, amount DECIMAL(10, 2),
  name STRING, bin BYTES, dt DATE, tm TIME(3), ts TIMESTAMP(3), tags ARRAY<INT>, attrs MAP<STRING, DOUBLE>,
  addr ROW<city STRING, zip SMALLINT>
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'avro'
);

CREATE TABLE dst (
  b BOOLEAN, t TINYINT, s SMALLINT, i INT, l BIGINT, f FLOAT, d DOUBLE, amount DECIMAL(10, 2), name STRING,
  bin BYTES, dt DATE, tm TIME(3), ts TIMESTAMP(3), tags ARRAY<INT>, attrs MAP<STRING, DOUBLE>,
  addr ROW<city STRING, zip SMALLINT>
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst SELECT * FROM src;
