-- Top-N and keep-last deduplication written as debezium-json: each change Flink's rank operators emit per record (a row entering the N, the row it pushes out, each rank whose row changes, a key's new last row replacing its old one) is a message.
CREATE TABLE src (
  category STRING,
  item STRING,
  amount INT,
  pt AS PROCTIME()
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE top_rows (category STRING, item STRING, amount INT) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("top_rows") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'debezium-json'
);

CREATE TABLE top_ranks (category STRING, rn BIGINT, item STRING, amount INT) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("top_ranks") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'debezium-json'
);

CREATE TABLE last_rows (category STRING, item STRING) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("last_rows") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'debezium-json'
);

EXECUTE STATEMENT SET BEGIN
INSERT INTO top_rows SELECT category, item, amount FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY category ORDER BY amount DESC) AS rn FROM src
) WHERE rn <= 2;
INSERT INTO top_ranks SELECT category, rn, item, amount FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY category ORDER BY amount DESC) AS rn FROM src
) WHERE rn <= 2;
INSERT INTO last_rows SELECT category, item FROM (
  SELECT category, item, ROW_NUMBER() OVER (PARTITION BY category ORDER BY pt DESC) AS rn FROM src
) WHERE rn = 1;
END;
