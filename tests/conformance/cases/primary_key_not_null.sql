-- A NULL written into a PRIMARY KEY column (NOT NULL by definition) fails the job, as Flink's sink NOT NULL enforcer does.
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
  total INT,
  PRIMARY KEY (country) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = '{{ var("agg") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'key.format' = 'json',
  'value.format' = 'json'
);

INSERT INTO agg SELECT country, SUM(amount) FROM src GROUP BY country;
