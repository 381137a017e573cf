-- Templates: macros from templates/ (shipped with the project), var() with a default and env_var().
-- Render with `kafka-sql render sql/reference/templates_macros.sql --var brokers=host:9092`.
{% import 'kafka.sql' as kafka %}
{% set brokers = var("brokers", "127.0.0.1:9092") %}

{{ kafka.kafka_source('orders', 'orders', {'id': 'BIGINT', 'amount': 'DOUBLE'},
                      brokers=brokers, group_id=env_var('ORDERS_GROUP', 'orders-etl'),
                      startup_mode='group-offsets', metadata=true,
                      extra={'properties.auto.offset.reset': 'earliest'}) }};

{{ kafka.kafka_sink('large_orders', 'large_orders', {'id': 'BIGINT', 'amount': 'DOUBLE'}, brokers=brokers) }};

INSERT INTO large_orders SELECT id, amount FROM orders WHERE amount > {{ var("threshold", "100") }};
