{#-
  kafka.sql: Flink `kafka` connector tables.

    {% import 'kafka.sql' as kafka %}
    {{ kafka.kafka_source('orders', 'orders', {'id': 'BIGINT', 'amount': 'DOUBLE'}, group_id='billing') }};

  Both macros produce one CREATE TABLE statement without the closing semicolon. `columns` is a mapping
  of name -> type, a list of column definitions or a string (see column_list in common.sql). `topic`
  is one topic or a list of topics (joined with ';'); pass topic=none and
  extra={'topic-pattern': '...'} to subscribe by pattern. `extra` holds further WITH options
  ('properties.*', format options, ...), which replace the generated ones of the same key.
  `brokers` defaults to var('brokers'), so `--var brokers=host:9092` serves every table.

  kafka_source(name, topic, columns, brokers=var('brokers'), group_id=none, format='json',
               startup_mode='group-offsets', watermark=none, metadata=false, extra={})
      A source table. `startup_mode` is one of earliest-offset, latest-offset, group-offsets, timestamp,
      specific-offsets; group-offsets (Flink's default) needs a group_id. `watermark` is the text after
      WATERMARK FOR, e.g. "event_time AS event_time - INTERVAL '5' SECOND". metadata=true adds the
      Kafka metadata columns of common.sql's metadata_columns() (event_time, kafka_partition,
      kafka_offset).

  kafka_sink(name, topic, columns, brokers=var('brokers'), format='json',
             delivery_guarantee='at-least-once', transactional_id_prefix=none, extra={})
      A sink table. `delivery_guarantee` is one of none, at-least-once, exactly-once; exactly-once
      needs a transactional_id_prefix.
-#}
{% from 'common.sql' import column_list, metadata_columns, with_options %}
{% set _STARTUP_MODES = ['earliest-offset', 'latest-offset', 'group-offsets', 'timestamp', 'specific-offsets'] %}
{% set _DELIVERY_GUARANTEES = ['none', 'at-least-once', 'exactly-once'] %}

{% macro _topics(topic) -%}
{{ topic if topic is string or topic is none else topic | join(';') }}
{%- endmacro %}

{% macro kafka_source(name, topic, columns, brokers=var('brokers'), group_id=none, format='json',
                      startup_mode='group-offsets', watermark=none, metadata=false, extra={}) -%}
{% if startup_mode not in _STARTUP_MODES %}
{{ raise_error("kafka_source('" ~ name ~ "'): startup_mode '" ~ startup_mode ~ "' is not one of " ~ _STARTUP_MODES | join(', ')) }}
{% endif %}
{% if startup_mode == 'group-offsets' and not group_id and 'properties.group.id' not in extra %}
{{ raise_error("kafka_source('" ~ name ~ "'): startup_mode 'group-offsets' reads the consumer group's committed offsets and needs group_id") }}
{% endif %}
CREATE TABLE {{ name }} (
  {{ column_list(columns) }}
{%- if metadata %},
  {{ metadata_columns() }}
{%- endif %}
{%- if watermark %},
  WATERMARK FOR {{ watermark }}
{%- endif %}

) WITH (
  {{ with_options({
      'connector': 'kafka',
      'topic': _topics(topic) if topic is not none else none,
      'properties.bootstrap.servers': brokers,
      'properties.group.id': group_id,
      'scan.startup.mode': startup_mode,
      'format': format,
  }, extra) }}
)
{%- endmacro %}

{% macro kafka_sink(name, topic, columns, brokers=var('brokers'), format='json',
                    delivery_guarantee='at-least-once', transactional_id_prefix=none, extra={}) -%}
{% if delivery_guarantee not in _DELIVERY_GUARANTEES %}
{{ raise_error("kafka_sink('" ~ name ~ "'): delivery_guarantee '" ~ delivery_guarantee ~ "' is not one of " ~ _DELIVERY_GUARANTEES | join(', ')) }}
{% endif %}
{% if delivery_guarantee == 'exactly-once' and not transactional_id_prefix and 'sink.transactional-id-prefix' not in extra %}
{{ raise_error("kafka_sink('" ~ name ~ "'): delivery_guarantee 'exactly-once' needs a transactional_id_prefix") }}
{% endif %}
CREATE TABLE {{ name }} (
  {{ column_list(columns) }}
) WITH (
  {{ with_options({
      'connector': 'kafka',
      'topic': _topics(topic) if topic is not none else none,
      'properties.bootstrap.servers': brokers,
      'format': format,
      'sink.delivery-guarantee': delivery_guarantee,
      'sink.transactional-id-prefix': transactional_id_prefix,
  }, extra) }}
)
{%- endmacro %}
