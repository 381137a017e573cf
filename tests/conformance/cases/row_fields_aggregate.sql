-- ROW fields in GROUP BY, aggregates and JOIN conditions: a nested field as the key, one table's ROW field joined to another's.
CREATE TABLE orders (
  id BIGINT,
  customer ROW<name STRING, addr ROW<city STRING, country STRING>>,
  amount ROW<`value` INT, currency STRING>
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("orders") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE cities (
  city ROW<name STRING, info ROW<region STRING>>
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("cities") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE per_city (city STRING, orders BIGINT, total INT, PRIMARY KEY (city) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = '{{ var("per_city") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'key.format' = 'json',
  'value.format' = 'json'
);

CREATE TABLE regions (id BIGINT, city STRING, region STRING
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("regions") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO per_city
SELECT customer.addr.city, COUNT(*), SUM(amount.`value`)
FROM orders
WHERE customer.addr.country = 'NO'
GROUP BY customer.addr.city;

INSERT INTO regions
SELECT o.id, o.customer.addr.city, c.city.info.region
FROM orders AS o JOIN cities AS c ON o.customer.addr.city = c.city.name
WHERE c.city.info.region IS NOT NULL;
