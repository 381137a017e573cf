-- Aggregates into upsert-kafka: AVG of INT stays INT in Flink, SUM, MIN/MAX of strings, COUNT(DISTINCT), COUNT of a column with NULLs.
CREATE TABLE src (
  k STRING,
  i INT,
  s STRING,
  d DOUBLE
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE agg (
  k STRING,
  avg_i INT,
  sum_i INT,
  min_s STRING,
  max_s STRING,
  distinct_s BIGINT,
  count_s BIGINT,
  avg_d DOUBLE,
  PRIMARY KEY (k) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = '{{ var("agg") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'key.format' = 'json',
  'value.format' = 'json'
);

INSERT INTO agg SELECT k, AVG(i), SUM(i), MIN(s), MAX(s), COUNT(DISTINCT s), COUNT(s), AVG(d) FROM src GROUP BY k;
