-- Flink's catalog statements: an Iceberg catalog (Hadoop layout on a local warehouse) whose tables need no
-- connector options, a database in it, and a generic in-memory catalog for the Kafka table. Qualified names
-- (catalog.database.table) and USE both work; tables are still unique by name within a file.
CREATE CATALOG streams WITH ('type' = 'generic_in_memory');
CREATE CATALOG lake WITH (
  'type' = 'iceberg',
  'catalog-type' = 'hadoop',
  'warehouse' = 'file:///tmp/kafka-sql/warehouse'
);

USE CATALOG streams;
CREATE TABLE orders (id BIGINT, customer STRING, country STRING, amount DECIMAL(10, 2)) WITH (
  'connector' = 'kafka',
  'topic' = 'orders',
  'properties.bootstrap.servers' = '{{ var("brokers", "127.0.0.1:9092") }}',
  'scan.startup.mode' = 'earliest-offset',
  'format' = 'json'
);

USE CATALOG lake;
CREATE DATABASE IF NOT EXISTS sales;
USE sales;
CREATE TABLE orders_by_country (id BIGINT, customer STRING, country STRING, amount DECIMAL(10, 2))
PARTITIONED BY (country);

INSERT INTO lake.sales.orders_by_country SELECT id, customer, country, amount FROM streams.`default`.orders;
