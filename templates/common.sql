{#-
  common.sql: small helpers for Flink SQL pipeline files.

    {% from 'common.sql' import metadata_columns, with_options %}

  metadata_columns(timestamp='event_time', partition='kafka_partition', offset='kafka_offset', topic=none)
      The standard read-only Kafka metadata columns of a source table, one per line, comma-separated:
        event_time TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL,
        kafka_partition INT METADATA FROM 'partition' VIRTUAL,
        kafka_offset BIGINT METADATA FROM 'offset' VIRTUAL
      Pass a column name for `topic` to add `<topic> STRING METADATA FROM 'topic' VIRTUAL`;
      pass none for any other argument to leave that column out.

  column_list(columns)
      Column definitions, comma-separated one per line. `columns` is a mapping of name -> type
      ({'id': 'BIGINT', 'name': 'STRING'}), a list of definitions (['id BIGINT', 'name STRING']) or a
      string used as written.

  with_options(options, extra={})
      The body of a WITH clause: 'key' = 'value' pairs, one per line, values quoted and escaped.
      Entries of `extra` are added after `options` and replace an option of the same key; an option
      whose value is none is left out.

  Continuation lines are indented by two spaces, to sit inside a `CREATE TABLE ... (` block.
-#}
{% macro metadata_columns(timestamp='event_time', partition='kafka_partition', offset='kafka_offset', topic=none) -%}
{% set columns = [] %}
{% if timestamp %}{% set _ = columns.append(timestamp ~ " TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL") %}{% endif %}
{% if partition %}{% set _ = columns.append(partition ~ " INT METADATA FROM 'partition' VIRTUAL") %}{% endif %}
{% if offset %}{% set _ = columns.append(offset ~ " BIGINT METADATA FROM 'offset' VIRTUAL") %}{% endif %}
{% if topic %}{% set _ = columns.append(topic ~ " STRING METADATA FROM 'topic' VIRTUAL") %}{% endif %}
{{ columns | join(",\n  ") }}
{%- endmacro %}

{% macro column_list(columns) -%}
{% if columns is string %}
{{ columns }}
{%- elif columns is mapping %}
{% for name, type in columns.items() %}{{ name }} {{ type }}{{ ",\n  " if not loop.last }}{% endfor %}
{%- else %}
{{ columns | join(",\n  ") }}
{%- endif %}
{%- endmacro %}

{% macro with_options(options, extra={}) -%}
{% set pairs = [] %}
{% for key, value in options.items() if key not in extra and value is not none %}
{% set _ = pairs.append(key | sql_string ~ " = " ~ value | sql_string) %}
{% endfor %}
{% for key, value in extra.items() if value is not none %}
{% set _ = pairs.append(key | sql_string ~ " = " ~ value | sql_string) %}
{% endfor %}
{{ pairs | join(",\n  ") }}
{%- endmacro %}
