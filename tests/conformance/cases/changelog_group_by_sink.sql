-- A GROUP BY of a stream of inserts written as debezium-json, canal-json and maxwell-json: each record that changes a group's result retracts the old one and adds the new one (one that changes nothing writes nothing), HAVING filters both, and a global aggregate, as Flink's group aggregate writes them.
CREATE TABLE orders (
  user_id STRING,
  amount INT,
  price DECIMAL(10, 2)
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("orders") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE dbz_out (
  user_id STRING,
  cnt BIGINT,
  doubled INT,
  avg_price DECIMAL(38, 6)
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dbz_out") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'debezium-json'
);

CREATE TABLE canal_out (
  user_id STRING,
  top_amount INT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("canal_out") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'canal-json'
);

CREATE TABLE maxwell_out (
  cnt BIGINT,
  lowest INT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("maxwell_out") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'maxwell-json'
);

EXECUTE STATEMENT SET BEGIN
INSERT INTO dbz_out
SELECT user_id, COUNT(*) AS cnt, SUM(amount) * 2 AS doubled, AVG(price) AS avg_price
FROM orders GROUP BY user_id HAVING SUM(amount) > 1;
INSERT INTO canal_out SELECT user_id, MAX(amount) FROM orders WHERE user_id <> 'c' GROUP BY user_id;
INSERT INTO maxwell_out SELECT COUNT(*), MIN(amount) FROM orders;
END;
