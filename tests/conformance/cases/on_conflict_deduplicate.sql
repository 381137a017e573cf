-- ON CONFLICT DO DEDUPLICATE: Flink 2.3 keeps the latest record of each sink key among the query's upsert keys; kafka-sql refuses it (Spark's upsert sinks write a micro-batch's rows in no order).
-- refused: [on-conflict]
CREATE TABLE src (
  a INT,
  b INT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE counts (
  a INT,
  b INT,
  n BIGINT,
  PRIMARY KEY (b) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = '{{ var("counts") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'key.format' = 'json',
  'value.format' = 'json'
);

INSERT INTO counts SELECT a, b, COUNT(*) FROM src GROUP BY a, b ON CONFLICT DO DEDUPLICATE;
