-- debezium-json with 'debezium-json.schema-include' (Kafka Connect's schemas.enable) into a jdbc table with a PRIMARY KEY: deletes remove rows.
-- postgres: CREATE TABLE {{ var("db_customers") }} (id INT PRIMARY KEY, email VARCHAR(40), vip BOOLEAN)
CREATE TABLE customers (
  id INT,
  email STRING,
  vip BOOLEAN,
  PRIMARY KEY (id) NOT ENFORCED
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("customers") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'debezium-json',
  'debezium-json.schema-include' = 'true'
);

CREATE TABLE current_customers (
  id INT, email STRING, vip BOOLEAN, PRIMARY KEY (id) NOT ENFORCED
) WITH (
  'connector' = 'jdbc',
  'url' = '{{ var("jdbc_url") }}',
  'table-name' = '{{ var("db_customers") }}',
  'username' = 'kafka_sql',
  'password' = '{{ var("jdbc_password") }}'
);

INSERT INTO current_customers SELECT id, email, vip FROM customers;
