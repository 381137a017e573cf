-- A GROUP BY of two columns into a sink keyed by one of them: Flink 2.3 refuses it (the query's upsert key differs from the sink's primary key; it asks for ON CONFLICT).
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

INSERT INTO counts SELECT a, b, COUNT(*) FROM src GROUP BY a, b;
