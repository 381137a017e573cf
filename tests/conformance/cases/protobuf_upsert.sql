-- A GROUP BY into upsert-kafka with protobuf keys and values: each customer's last total, the key a protobuf message of its own.
CREATE TABLE orders (
  customer STRING,
  amount DOUBLE
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("orders") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE totals (
  customer STRING,
  orders BIGINT,
  amount DOUBLE,
  PRIMARY KEY (customer) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = '{{ var("totals") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'key.format' = 'protobuf',
  'key.protobuf.descriptor-file' = '{{ var("proto_descriptor") }}',
  'key.protobuf.message-class-name' = 'com.example.totals.Totals$CustomerKey',
  'value.format' = 'protobuf',
  'value.protobuf.descriptor-file' = '{{ var("proto_descriptor") }}',
  'value.protobuf.message-class-name' = 'com.example.totals.Totals$CustomerTotal',
  'value.fields-include' = 'EXCEPT_KEY'
);

INSERT INTO totals SELECT customer, COUNT(*), SUM(amount) FROM orders GROUP BY customer;
