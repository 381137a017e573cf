-- Top-N: the two biggest amounts per category, keyed by rank, as a final table in upsert-kafka.
CREATE TABLE src (
  category STRING,
  item STRING,
  amount INT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE dst (
  category STRING,
  rn BIGINT,
  item STRING,
  amount INT,
  PRIMARY KEY (category, rn) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'key.format' = 'json',
  'value.format' = 'json'
);

INSERT INTO dst SELECT category, rn, item, amount FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY category ORDER BY amount DESC) AS rn FROM src
) WHERE rn <= 2;
