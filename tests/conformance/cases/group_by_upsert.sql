-- GROUP BY into upsert-kafka: the final table per key.
CREATE TABLE src (
  country STRING,
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
  country STRING,
  orders BIGINT,
  total INT,
  biggest INT,
  PRIMARY KEY (country) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = '{{ var("agg") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'key.format' = 'json',
  'value.format' = 'json'
);

INSERT INTO agg SELECT country, COUNT(*), SUM(amount), MAX(amount) FROM src GROUP BY country;
