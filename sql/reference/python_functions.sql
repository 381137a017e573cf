-- Python functions declared as Flink SQL declares them: scalar functions called per row, a table function
-- joined with LATERAL TABLE. Their module, text_functions.py, is found beside this file and shipped to the
-- executors; `validate` checks each call's arguments against the functions' annotations.
CREATE TEMPORARY FUNCTION initials AS 'text_functions.initials' LANGUAGE PYTHON;
CREATE FUNCTION with_vat AS 'text_functions.with_vat' LANGUAGE PYTHON;
CREATE FUNCTION tags AS 'text_functions.tags' LANGUAGE PYTHON;

CREATE TABLE orders (id BIGINT, customer STRING, amount DECIMAL(10, 2), labels STRING) WITH (
  'connector' = 'kafka',
  'topic' = 'orders',
  'properties.bootstrap.servers' = '{{ var("brokers", "127.0.0.1:9092") }}',
  'scan.startup.mode' = 'earliest-offset',
  'format' = 'json'
);

CREATE TABLE billed (id BIGINT, who STRING, gross DECIMAL(10, 2)) WITH (
  'connector' = 'kafka',
  'topic' = 'billed',
  'properties.bootstrap.servers' = '{{ var("brokers", "127.0.0.1:9092") }}',
  'format' = 'json'
);

CREATE TABLE order_tags (id BIGINT, tag STRING, pos BIGINT) WITH (
  'connector' = 'kafka',
  'topic' = 'order_tags',
  'properties.bootstrap.servers' = '{{ var("brokers", "127.0.0.1:9092") }}',
  'format' = 'json'
);

EXECUTE STATEMENT SET BEGIN
INSERT INTO billed SELECT id, initials(customer), with_vat(amount, CAST(0.2 AS DECIMAL(3, 2))) FROM orders;
INSERT INTO order_tags SELECT o.id, t.tag, t.pos FROM orders AS o, LATERAL TABLE(tags(o.labels)) AS t(tag, pos);
END;
