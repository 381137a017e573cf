-- GROUP BY with HAVING into upsert-kafka: a key whose group no longer qualifies is deleted from the final table.
CREATE TABLE src (
  k STRING,
  amount INT
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
  total INT,
  PRIMARY KEY (k) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = '{{ var("agg") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'key.format' = 'json',
  'value.format' = 'json'
);

INSERT INTO agg SELECT k, SUM(amount) FROM src GROUP BY k HAVING SUM(amount) > 5;
