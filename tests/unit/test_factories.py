"""Connector and format rules: each user mistake gives one diagnostic, at the key, naming culprit and fix."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

import pytest

from connector.catalog.model import Column, ColumnKind, Table
from connector.connectors.datagen.factory import DatagenOptions
from connector.connectors.filesystem.factory import FilesystemOptions
from connector.connectors.kafka.options import KafkaOptions
from connector.connectors.registry import (
    format_columns,
    format_options,
    resolve,
    validate_sink,
    validate_sink_metadata,
    validate_source,
    validate_table,
)
from connector.diagnostics import Diagnostic, Position
from connector.formats import registry as format_registry
from connector.options.factory import Format

FILE = "pipeline.sql"
Metadata = tuple[str, str, str | None, bool]  # name, type, FROM key (None: the name), VIRTUAL


def make_table(
    options: dict[str, str],
    columns: Sequence[tuple[str, str]] = (("id", "BIGINT"), ("name", "STRING")),
    *,
    metadata: Sequence[Metadata] = (),
    primary_key: Sequence[str] = (),
) -> Table:
    """A table as the loader builds it: columns on lines 2.., then one option per line, keys at column 3."""
    table = Table("orders", Position(FILE, 1, 1), primary_key=list(primary_key))
    line = 2
    for name, type_sql in columns:
        table.columns.append(Column(name, ColumnKind.PHYSICAL, Position(FILE, line, 3), type_sql=type_sql))
        line += 1
    for name, type_sql, key, virtual in metadata:
        column = Column(
            name,
            ColumnKind.METADATA,
            Position(FILE, line, 3),
            type_sql=type_sql,
            metadata_key=key,
            virtual=virtual,
        )
        table.columns.append(column)
        line += 1
    for key, value in options.items():
        table.options[key] = value
        table.option_positions[key] = Position(FILE, line, 3)
        line += 1
    return table


KAFKA = {
    "connector": "kafka",
    "topic": "orders",
    "properties.bootstrap.servers": "localhost:9092",
    "properties.group.id": "g1",
    "format": "json",
}
UPSERT = {
    "connector": "upsert-kafka",
    "topic": "orders",
    "properties.bootstrap.servers": "localhost:9092",
    "key.format": "json",
    "value.format": "json",
}


def kafka(**overrides: str) -> dict[str, str]:
    """KAFKA with options replaced or added; keys use '_' for '.' and '__' for '-'."""
    return {**KAFKA, **{k.replace("__", "-").replace("_", "."): v for k, v in overrides.items()}}


def single(diagnostics: list[Diagnostic], code: str) -> Diagnostic:
    found = [d for d in diagnostics if d.code == code]
    assert len(found) == 1, diagnostics
    return found[0]


def assert_at(diagnostic: Diagnostic, position: Position) -> None:
    assert (diagnostic.file, diagnostic.line, diagnostic.column) == (
        position.file,
        position.line,
        position.column,
    )


def only_error(table: Table, code: str, key: str | None = None) -> Diagnostic:
    """The one diagnostic validate_table reports, with `code`, at `key` (or at the table)."""
    diagnostics = validate_table(table)
    assert len(diagnostics) == 1, diagnostics
    diagnostic = single(diagnostics, code)
    assert_at(diagnostic, table.option_position(key) if key else table.position)
    return diagnostic


# -- kafka: valid tables ----------------------------------------------------------------------------


def test_valid_kafka_source_and_sink_have_no_diagnostics() -> None:
    table = make_table(
        {**KAFKA, "scan.startup.mode": "earliest-offset", "json.ignore-parse-errors": "true"},
        metadata=[("ts", "TIMESTAMP_LTZ(3)", "timestamp", False), ("off", "BIGINT", "offset", True)],
    )
    assert validate_table(table) == []
    assert validate_source(table) == []
    assert validate_sink(table) == []


def test_sink_without_group_id_is_valid_because_group_id_only_matters_for_reading() -> None:
    options = {k: v for k, v in KAFKA.items() if k != "properties.group.id"}
    table = make_table(options)
    assert validate_table(table) == []
    assert validate_sink(table) == []


# -- kafka: topic / topic-pattern -------------------------------------------------------------------


def test_topic_and_topic_pattern_together_is_flinks_error() -> None:
    table = make_table(kafka(topic__pattern="orders-.*"))
    d = only_error(table, "option-conflict", "topic-pattern")
    assert d.message == "Option 'topic' and 'topic-pattern' shouldn't be set together."


def test_neither_topic_nor_pattern_is_flinks_error() -> None:
    table = make_table({k: v for k, v in KAFKA.items() if k != "topic"})
    d = only_error(table, "missing-option")
    assert d.message == "Either 'topic' or 'topic-pattern' must be set."


def test_topic_list_resolves_to_names() -> None:
    assert resolve(make_table(kafka(topic="a; b;c"))).get(KafkaOptions.TOPIC) == ["a", "b", "c"]


# -- kafka: startup and bounded modes ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode_key", "mode", "message"),
    [
        (
            "scan.startup.mode",
            "timestamp",
            "'scan.startup.timestamp-millis' is required in 'timestamp' startup mode",
        ),
        (
            "scan.startup.mode",
            "specific-offsets",
            "'scan.startup.specific-offsets' is required in 'specific-offsets' startup mode",
        ),
        (
            "scan.bounded.mode",
            "timestamp",
            "'scan.bounded.timestamp-millis' is required in 'timestamp' bounded mode",
        ),
        (
            "scan.bounded.mode",
            "specific-offsets",
            "'scan.bounded.specific-offsets' is required in 'specific-offsets' bounded mode",
        ),
    ],
)
def test_mode_without_its_companion_option_is_flinks_error(mode_key: str, mode: str, message: str) -> None:
    table = make_table({**KAFKA, mode_key: mode})
    d = only_error(table, "missing-option", mode_key)
    assert d.message == message + " but missing."


def test_specific_offsets_parse_to_partition_offsets() -> None:
    table = make_table(
        {
            **KAFKA,
            "scan.startup.mode": "specific-offsets",
            "scan.startup.specific-offsets": "partition:0,offset:42;partition:1,offset:300",
        }
    )
    assert validate_table(table) == []
    assert resolve(table).get(KafkaOptions.SCAN_STARTUP_SPECIFIC_OFFSETS) == {0: 42, 1: 300}


@pytest.mark.parametrize(
    "text",
    ["partition:0, offset:42", "partition:0,offset:42; partition:1,offset:300", "p:0,o:1", "partition:0"],
)
def test_specific_offsets_syntax_is_strict_with_flinks_message(text: str) -> None:
    key = "scan.startup.specific-offsets"
    table = make_table({**KAFKA, "scan.startup.mode": "specific-offsets", key: text})
    d = only_error(table, "invalid-option-value", key)
    assert d.message == (
        f"Invalid properties '{key}' should follow the format "
        f"'partition:0,offset:42;partition:1,offset:300', but is '{text}'."
    )


@pytest.mark.parametrize("subscription", [{"topic": "a;b"}, {"topic-pattern": "orders-.*"}])
def test_specific_offsets_need_a_single_topic(subscription: dict[str, str]) -> None:
    options = {k: v for k, v in KAFKA.items() if k != "topic"} | subscription
    options |= {
        "scan.bounded.mode": "specific-offsets",
        "scan.bounded.specific-offsets": "partition:0,offset:5",
    }
    d = only_error(make_table(options), "option-conflict", "scan.bounded.mode")
    assert d.message.startswith("Currently Kafka source only supports specific offset for single topic.")


def test_invalid_startup_mode_lists_the_modes_and_suggests_one() -> None:
    d = only_error(make_table(kafka(scan_startup_mode="earliest")), "invalid-option-value", "scan.startup.mode")
    assert "'earliest'" in d.message and "'scan.startup.mode'" in d.message
    assert "earliest-offset, latest-offset, group-offsets, timestamp, specific-offsets" in d.message
    assert "Did you mean 'earliest-offset'?" in d.message


def test_invalid_startup_mode_is_one_error_not_also_group_offsets_default() -> None:
    """An invalid mode is not Flink's default 'group-offsets': no 'group.id is required' besides the value's error."""
    options = {k: v for k, v in kafka(scan_startup_mode="earliest").items() if k != "properties.group.id"}
    table = make_table(options)
    errors = validate_table(table) + validate_source(table)
    assert [d.code for d in errors] == ["invalid-option-value"]


def test_timestamp_millis_must_be_a_number() -> None:
    table = make_table(kafka(scan_startup_mode="timestamp", scan_startup_timestamp__millis="yesterday"))
    d = only_error(table, "invalid-option-value", "scan.startup.timestamp-millis")
    assert "'yesterday'" in d.message and "integer" in d.message


# -- kafka: group offsets ---------------------------------------------------------------------------


def test_default_group_offsets_without_group_id_fails_as_source_only() -> None:
    table = make_table({k: v for k, v in KAFKA.items() if k != "properties.group.id"})
    assert validate_table(table) == []
    d = single(validate_source(table), "missing-option")
    assert_at(d, table.position)
    assert d.message.startswith("Property group.id is required when using committed offset for offsets initializer")
    assert "(Flink's default)" in d.message and "'properties.group.id'" in d.message
    assert "earliest-offset, latest-offset, timestamp, specific-offsets" in d.message


def test_explicit_group_offsets_without_group_id_points_at_the_mode() -> None:
    options = {k: v for k, v in KAFKA.items() if k != "properties.group.id"} | {"scan.startup.mode": "GROUP-OFFSETS"}
    table = make_table(options)
    d = single(validate_source(table), "missing-option")
    assert_at(d, table.option_position("scan.startup.mode"))


def test_commit_on_checkpoint_without_group_id_fails_as_source() -> None:
    options = {k: v for k, v in KAFKA.items() if k != "properties.group.id"}
    table = make_table(
        options | {"scan.startup.mode": "latest-offset", "properties.commit.offsets.on.checkpoint": "true"}
    )
    d = single(validate_source(table), "missing-option")
    assert_at(d, table.option_position("properties.commit.offsets.on.checkpoint"))
    assert d.message.startswith("Property group.id is required when offset commit is enabled")


def test_commit_on_checkpoint_is_typed_under_properties() -> None:
    assert resolve(make_table(KAFKA)).get(KafkaOptions.COMMIT_OFFSETS_ON_CHECKPOINT) is True
    table = make_table(kafka(properties_commit_offsets_on_checkpoint="false"))
    assert resolve(table).get(KafkaOptions.COMMIT_OFFSETS_ON_CHECKPOINT) is False
    assert resolve(table).properties["commit.offsets.on.checkpoint"] == "false"
    bad = make_table(kafka(properties_commit_offsets_on_checkpoint="yes"))
    d = only_error(bad, "invalid-option-value", "properties.commit.offsets.on.checkpoint")
    assert "'true' or 'false'" in d.message


def test_auto_offset_reset_accepts_only_earliest_latest_none() -> None:
    table = make_table({**KAFKA, "properties.auto.offset.reset": "smallest"})
    d = only_error(table, "invalid-option-value", "properties.auto.offset.reset")
    assert "'smallest'" in d.message and "earliest, latest, none" in d.message
    assert resolve(make_table(KAFKA)).get(KafkaOptions.AUTO_OFFSET_RESET) == "none"
    assert (
        resolve(make_table({**KAFKA, "properties.auto.offset.reset": "Earliest"})).get(KafkaOptions.AUTO_OFFSET_RESET)
        == "earliest"
    )


# -- kafka: sink options ----------------------------------------------------------------------------


def test_round_robin_partitioner_with_key_fields_is_flinks_error() -> None:
    table = make_table({**KAFKA, "key.format": "json", "key.fields": "id", "sink.partitioner": "round-robin"})
    d = only_error(table, "option-conflict", "sink.partitioner")
    assert d.message == "Currently 'round-robin' partitioner only works when option 'key.fields' is not specified."


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("", "Option 'sink.partitioner' should be a non-empty string."),
        ("roundrobin", "Did you mean 'round-robin'?"),
    ],
)
def test_bad_partitioner_names_the_choices(value: str, expected: str) -> None:
    d = only_error(make_table({**KAFKA, "sink.partitioner": value}), "invalid-option-value", "sink.partitioner")
    assert expected in d.message


def test_partitioner_class_name_is_accepted() -> None:
    table = make_table({**KAFKA, "sink.partitioner": "com.example.MyPartitioner"})
    assert validate_table(table) == []
    assert resolve(table).get(KafkaOptions.SINK_PARTITIONER) == "com.example.MyPartitioner"


def test_exactly_once_needs_a_transactional_id_prefix() -> None:
    table = make_table({**KAFKA, "sink.delivery-guarantee": "exactly-once"})
    d = only_error(table, "missing-option", "sink.delivery-guarantee")
    assert d.message == "sink.transactional-id-prefix must be specified when using DeliveryGuarantee.EXACTLY_ONCE."
    ok = make_table({**KAFKA, "sink.delivery-guarantee": "exactly-once", "sink.transactional-id-prefix": "job-1"})
    assert validate_table(ok) == []


def test_deprecated_sink_semantic_still_sets_the_delivery_guarantee_with_a_warning() -> None:
    table = make_table({**KAFKA, "sink.semantic": "EXACTLY_ONCE", "sink.transactional-id-prefix": "job-1"})
    d = only_error(table, "deprecated-option", "sink.semantic")
    assert d.severity == "warning" and "'sink.delivery-guarantee'" in d.message
    assert resolve(table).get(KafkaOptions.DELIVERY_GUARANTEE) == "exactly-once"


def test_exactly_once_via_sink_semantic_points_at_sink_semantic() -> None:
    table = make_table({**KAFKA, "sink.semantic": "exactly-once"})
    d = single(validate_table(table), "missing-option")
    assert_at(d, table.option_position("sink.semantic"))


def test_kafka_rejects_upsert_kafka_buffer_options() -> None:
    d = only_error(
        make_table({**KAFKA, "sink.buffer-flush.max-rows": "10"}),
        "unknown-option",
        "sink.buffer-flush.max-rows",
    )
    assert "Unsupported option 'sink.buffer-flush.max-rows' for connector 'kafka'" in d.message


# -- kafka: key and value fields --------------------------------------------------------------------


def test_key_prefix_requires_except_key_with_flinks_message() -> None:
    table = make_table(
        {**KAFKA, "key.format": "json", "key.fields": "k_id", "key.fields-prefix": "k_"},
        columns=[("k_id", "BIGINT"), ("name", "STRING")],
    )
    d = only_error(table, "option-conflict", "key.fields-prefix")
    assert d.message == (
        "A key prefix is not allowed when option 'value.fields-include' is set to 'ALL'. "
        "Set it to 'EXCEPT_KEY' instead to avoid field overlaps."
    )


def test_key_fields_must_carry_the_prefix() -> None:
    table = make_table(
        {
            **KAFKA,
            "key.format": "json",
            "key.fields": "id",
            "key.fields-prefix": "k_",
            "value.fields-include": "EXCEPT_KEY",
        }
    )
    d = only_error(table, "invalid-option-value", "key.fields")
    assert "must be prefixed with 'k_'" in d.message and "field 'id'" in d.message


def test_key_format_requires_key_fields() -> None:
    d = only_error(make_table({**KAFKA, "key.format": "json"}), "missing-option", "key.format")
    assert d.message == (
        "A key format 'key.format' requires the declaration of one or more of key fields using 'key.fields'."
    )


def test_key_fields_require_a_key_format() -> None:
    d = only_error(make_table({**KAFKA, "key.fields": "id"}), "missing-option", "key.fields")
    assert d.message == "The option 'key.fields' can only be declared if a key format is defined using 'key.format'."


def test_key_fields_must_name_physical_columns() -> None:
    table = make_table(
        {**KAFKA, "key.format": "json", "key.fields": "idd"}, metadata=[("off", "BIGINT", "offset", True)]
    )
    d = only_error(table, "invalid-option-value", "key.fields")
    assert "Could not find the field 'idd'" in d.message
    assert "can be selected in the 'key.fields' option: id, name." in d.message
    assert "Did you mean 'id'?" in d.message


def test_key_and_value_columns_follow_key_fields_and_value_fields_include() -> None:
    options = {**KAFKA, "key.format": "csv", "key.fields": "name;id", "value.fields-include": "except_key"}
    table = make_table(options, columns=[("id", "BIGINT"), ("name", "STRING"), ("amount", "DOUBLE")])
    assert validate_table(table) == []
    assert [c.name for c in format_columns(table, "key")] == ["name", "id"]
    assert [c.name for c in format_columns(table, "value")] == ["amount"]
    assert resolve(table).get(KafkaOptions.VALUE_FIELDS_INCLUDE) == "EXCEPT_KEY"


def test_primary_key_on_kafka_with_insert_only_format_is_flinks_error() -> None:
    table = make_table(KAFKA, primary_key=["id"])
    d = only_error(table, "primary-key", "format")
    assert d.message.startswith(
        "The Kafka table 'orders' with 'json' format doesn't support defining PRIMARY KEY constraint on the "
        "table, because it can't guarantee the semantic of primary key."
    )
    assert "'upsert-kafka'" in d.message


# -- kafka: Spark-only options ----------------------------------------------------------------------


def test_spark_only_options_are_typed_with_defaults() -> None:
    resolved = resolve(make_table({**KAFKA, "scan.max-records-per-batch": "1000", "scan.min-partitions": "4"}))
    assert resolved.get(KafkaOptions.MAX_RECORDS_PER_BATCH) == 1000
    assert resolved.get(KafkaOptions.MIN_PARTITIONS) == 4
    assert resolved.get(KafkaOptions.FAIL_ON_DATA_LOSS) is True
    assert resolved.get(KafkaOptions.POLL_TIMEOUT) == timedelta(minutes=2)
    assert KafkaOptions.MAX_RECORDS_PER_BATCH.spark_only and not KafkaOptions.TOPIC.spark_only


def test_spark_only_options_are_validated() -> None:
    d = only_error(
        make_table({**KAFKA, "scan.max-records-per-batch": "0"}),
        "invalid-option-value",
        "scan.max-records-per-batch",
    )
    assert d.message == "Invalid value '0' for option 'scan.max-records-per-batch': must be at least 1."


# -- formats ----------------------------------------------------------------------------------------


def test_a_declared_but_unsupported_format_is_rejected_with_its_reason() -> None:
    """A plugin may declare a format it cannot run (no codec) so tables get its reason, not 'Unknown format'."""
    fmt = "orc-kafka"
    format_registry.register(Format(fmt, "ORC records in Kafka.", refusal="Spark reads ORC files only."))
    try:
        table = make_table({**KAFKA, "format": fmt, f"{fmt}.some-option": "x"})
        d = only_error(table, "unsupported-format", "format")
    finally:
        format_registry.unregister(fmt)
    supported = "json, csv, raw, avro, avro-confluent, debezium-json, canal-json, maxwell-json, debezium-avro-confluent"
    assert d.message == (
        f"format '{fmt}' is not supported yet. Spark reads ORC files only. Supported formats: {supported}, protobuf."
    )


def test_unknown_format_suggests_a_known_one() -> None:
    d = only_error(make_table({**KAFKA, "format": "jsonn"}), "unsupported-format", "format")
    assert "Unknown format 'jsonn'. Did you mean 'json'?" in d.message and "json, csv, raw" in d.message


def test_parquet_is_filesystem_only() -> None:
    d = only_error(make_table({**KAFKA, "format": "parquet"}), "unsupported-format", "format")
    assert "format 'parquet' is a file format; connector 'kafka' carries messages" in d.message
    assert "json, csv, raw" in d.message


def test_format_options_use_the_prefix_of_the_key_that_chose_the_format() -> None:
    options = {k: v for k, v in KAFKA.items() if k != "format"} | {"value.format": "json"}
    table = make_table(options | {"json.ignore-parse-errors": "true"})
    d = only_error(table, "unknown-option", "json.ignore-parse-errors")
    assert "Did you mean 'value.json.ignore-parse-errors'?" in d.message
    good = make_table(options | {"value.json.ignore-parse-errors": "true"})
    assert validate_table(good) == []
    fmt, values = format_options(good, "value") or ("", {})
    assert fmt == "json" and values["ignore-parse-errors"] is True and values["timestamp-format.standard"] == "SQL"


def test_unknown_format_option_lists_the_formats_options() -> None:
    d = only_error(
        make_table({**KAFKA, "json.ignore-parse-error": "true"}), "unknown-option", "json.ignore-parse-error"
    )
    assert "Unsupported option 'json.ignore-parse-error' for format 'json'." in d.message
    assert "Did you mean 'json.ignore-parse-errors'?" in d.message and "json.fail-on-missing-field" in d.message


def test_format_and_value_format_together_conflict() -> None:
    d = only_error(make_table({**KAFKA, "value.format": "json"}), "option-conflict", "format")
    assert "'value.format' and 'format'" in d.message


def test_missing_value_format_lists_supported_formats() -> None:
    d = only_error(make_table({k: v for k, v in KAFKA.items() if k != "format"}), "missing-option")
    assert (
        "'value.format' (or 'format')" in d.message
        and "Supported formats: json, csv, raw, avro, avro-confluent, debezium-json, canal-json, "
        "maxwell-json, debezium-avro-confluent, protobuf." in d.message
    )


def test_json_cannot_both_fail_on_missing_fields_and_ignore_parse_errors() -> None:
    table = make_table({**KAFKA, "json.fail-on-missing-field": "true", "json.ignore-parse-errors": "true"})
    d = only_error(table, "option-conflict", "json.ignore-parse-errors")
    assert d.message == "json.fail-on-missing-field and json.ignore-parse-errors shouldn't both be true."


def test_json_enum_options_list_their_values() -> None:
    table = make_table({**KAFKA, "json.timestamp-format.standard": "RFC-3339"})
    d = only_error(table, "invalid-option-value", "json.timestamp-format.standard")
    assert "SQL, ISO-8601" in d.message


def test_csv_delimiter_is_one_character_after_unescaping() -> None:
    d = only_error(
        make_table({**KAFKA, "format": "csv", "csv.field-delimiter": ";;"}),
        "invalid-option-value",
        "csv.field-delimiter",
    )
    assert d.message == "Option 'csv.field-delimiter' must be a string with single character, but was: ;;"
    tab = make_table({**KAFKA, "format": "csv", "csv.field-delimiter": "\\t"})
    assert validate_table(tab) == []
    assert (format_options(tab, "value") or ("", {}))[1]["field-delimiter"] == "\t"


def test_csv_quote_character_conflicts_with_disabled_quoting() -> None:
    table = make_table({**KAFKA, "format": "csv", "csv.disable-quote-character": "true", "csv.quote-character": "'"})
    d = only_error(table, "option-conflict", "csv.quote-character")
    assert d.message.startswith("Format cannot define a quote character and disabled quote character")


def test_raw_needs_exactly_one_physical_column_in_the_value() -> None:
    d = only_error(make_table({**KAFKA, "format": "raw"}), "unsupported-format", "format")
    assert "only supports a single physical column" in d.message and "has 2: id, name" in d.message
    keyed = {
        **KAFKA,
        "format": "raw",
        "key.format": "raw",
        "key.fields": "id",
        "value.fields-include": "EXCEPT_KEY",
    }
    assert validate_table(make_table(keyed)) == []


def test_raw_rejects_structured_column_types() -> None:
    table = make_table({**KAFKA, "format": "raw"}, columns=[("tags", "ARRAY<STRING>")])
    d = only_error(table, "unsupported-format", "format")
    assert "'ARRAY<STRING>'" in d.message and "column 'tags'" in d.message


def test_raw_charset_must_exist() -> None:
    table = make_table({**KAFKA, "format": "raw", "raw.charset": "UTF-9"}, columns=[("line", "STRING")])
    d = only_error(table, "invalid-option-value", "raw.charset")
    assert "'UTF-9'" in d.message and "charset" in d.message


# -- metadata columns -------------------------------------------------------------------------------


def test_unknown_metadata_key_lists_the_connectors_keys() -> None:
    table = make_table(KAFKA, metadata=[("off", "BIGINT", "offest", True)])
    d = single(validate_table(table), "metadata")
    assert_at(d, table.columns[-1].position)
    assert "Invalid metadata key 'offest' in column 'off'" in d.message and "Did you mean 'offset'?" in d.message
    assert "headers, leader-epoch, offset, partition, timestamp, timestamp-type, topic" in d.message


@pytest.mark.parametrize(
    ("declared", "key", "ok"),
    [
        ("BIGINT", "timestamp", True),
        ("TIMESTAMP(3)", "timestamp", True),
        ("STRING", "partition", True),
        ("MAP<BYTES, BYTES>", "headers", True),
        ("MAP<STRING, STRING>", "headers", True),
        ("INT", "headers", False),
        ("MAP<STRING, INT>", "headers", False),
        ("BOOLEAN", "offset", True),
        ("DATE", "offset", False),
    ],
)
def test_metadata_type_must_be_castable_from_the_metadata_type(declared: str, key: str, ok: bool) -> None:
    table = make_table(KAFKA, metadata=[("m", declared, key, True)])
    diagnostics = validate_table(table)
    if ok:
        assert diagnostics == []
    else:
        d = single(diagnostics, "metadata")
        assert f"cannot be declared as '{declared}'" in d.message and "castable from metadata type" in d.message


def test_map_column_from_int_metadata_is_rejected() -> None:
    d = single(
        validate_table(make_table(KAFKA, metadata=[("p", "MAP<STRING, STRING>", "partition", True)])),
        "metadata",
    )
    assert "'INT NOT NULL'" in d.message


def test_read_only_metadata_must_be_virtual_when_written() -> None:
    table = make_table(KAFKA, metadata=[("part", "INT", "partition", False), ("ts", "TIMESTAMP_LTZ(3)", None, False)])
    table.columns[-1].name = "timestamp"
    assert validate_table(table) == []
    d = single(validate_sink_metadata(table), "metadata")
    assert_at(d, table.columns[2].position)
    assert "'part' (key 'partition') is read-only" in d.message and "VIRTUAL" in d.message
    assert "Writable metadata keys: headers, timestamp, topic." in d.message
    table.columns[2].virtual = True
    assert validate_sink_metadata(table) == []


def test_sink_over_several_topics_needs_a_topic_metadata_column() -> None:
    table = make_table(kafka(topic="a;b"))
    d = single(validate_sink(table), "metadata")
    assert_at(d, table.option_position("topic"))
    with_column = make_table(kafka(topic="a;b"), metadata=[("topic", "STRING", None, False)])
    assert validate_sink(with_column) == []


# -- upsert-kafka -----------------------------------------------------------------------------------


def test_valid_upsert_kafka_table() -> None:
    table = make_table(UPSERT, primary_key=["id"])
    assert validate_table(table) == []
    assert validate_source(table) == []
    assert validate_sink(table) == []
    assert resolve(table).get(KafkaOptions.SCAN_STARTUP_MODE) == "earliest-offset"
    assert [c.name for c in format_columns(table, "key")] == ["id"]


def test_upsert_kafka_key_is_the_primary_key_with_its_prefix() -> None:
    options = {**UPSERT, "key.fields-prefix": "k_", "value.fields-include": "EXCEPT_KEY"}
    table = make_table(options, columns=[("k_id", "BIGINT"), ("name", "STRING")], primary_key=["k_id"])
    assert validate_table(table) == []
    assert [c.name for c in format_columns(table, "key")] == ["k_id"]
    assert [c.name for c in format_columns(table, "value")] == ["name"]
    unprefixed = make_table(options, primary_key=["id"])
    d = only_error(unprefixed, "invalid-option-value", "key.fields-prefix")
    assert "must be prefixed with 'k_'" in d.message and "field 'id'" in d.message


def test_upsert_kafka_needs_a_primary_key() -> None:
    d = only_error(make_table(UPSERT), "primary-key")
    assert d.message.startswith("'upsert-kafka' tables require to define a PRIMARY KEY constraint.")


def test_upsert_kafka_needs_key_and_value_formats() -> None:
    table = make_table({k: v for k, v in UPSERT.items() if k != "key.format"}, primary_key=["id"])
    d = only_error(table, "missing-option")
    assert "Missing required option 'key.format' for connector 'upsert-kafka'" in d.message
    assert "Supported formats: json, csv, raw, avro, avro-confluent, protobuf." in d.message


@pytest.mark.parametrize(
    ("key", "value", "reason"),
    [
        ("scan.startup.mode", "latest-offset", "earliest offset"),
        ("key.fields", "id", "PRIMARY KEY"),
        ("sink.partitioner", "fixed", "partitioned by their key"),
        ("format", "json", "'key.format' and 'value.format'"),
    ],
)
def test_upsert_kafka_forbids_options_with_the_reason(key: str, value: str, reason: str) -> None:
    d = only_error(make_table({**UPSERT, key: value}, primary_key=["id"]), "unknown-option", key)
    assert d.message.startswith(f"Option '{key}' is not supported by connector 'upsert-kafka': ")
    assert reason in d.message


def test_upsert_kafka_buffer_flush_needs_both_options() -> None:
    table = make_table({**UPSERT, "sink.buffer-flush.max-rows": "100"}, primary_key=["id"])
    d = only_error(table, "option-conflict", "sink.buffer-flush.max-rows")
    assert d.message == (
        "'sink.buffer-flush.max-rows' and 'sink.buffer-flush.interval' must be set to be greater than zero "
        "together to enable sink buffer flushing."
    )
    both = make_table(
        {**UPSERT, "sink.buffer-flush.max-rows": "100", "sink.buffer-flush.interval": "1 s"},
        primary_key=["id"],
    )
    assert validate_table(both) == []
    assert resolve(both).get(KafkaOptions.SINK_BUFFER_FLUSH_INTERVAL) == timedelta(seconds=1)


def test_upsert_kafka_bounded_group_offsets_need_a_group_id() -> None:
    options = {k: v for k, v in UPSERT.items()} | {"scan.bounded.mode": "group-offsets"}
    table = make_table(options, primary_key=["id"])
    d = single(validate_source(table), "missing-option")
    assert_at(d, table.option_position("scan.bounded.mode"))


# -- filesystem -------------------------------------------------------------------------------------

FILES = {"connector": "filesystem", "path": "file:///tmp/out", "format": "json"}


def test_valid_filesystem_table_with_typed_options() -> None:
    table = make_table({**FILES, "sink.rolling-policy.file-size": "64 mb", "source.monitor-interval": "10s"})
    assert validate_table(table) == []
    resolved = resolve(table)
    assert resolved.get(FilesystemOptions.ROLLING_FILE_SIZE) == 64 << 20
    assert resolved.get(FilesystemOptions.SOURCE_MONITOR_INTERVAL) == timedelta(seconds=10)
    assert resolved.get(FilesystemOptions.ROLLING_ROLLOVER_INTERVAL) == timedelta(minutes=30)


def test_filesystem_requires_path_and_format() -> None:
    d = only_error(make_table({"connector": "filesystem", "format": "csv"}), "missing-option")
    assert "Missing required option 'path' for connector 'filesystem'" in d.message
    d = only_error(make_table({"connector": "filesystem", "path": "/x"}), "missing-option")
    assert "'format'" in d.message and "Supported formats: json, csv, parquet." in d.message


def test_parquet_passes_its_writer_options_through() -> None:
    table = make_table({**FILES, "format": "parquet", "parquet.compression": "SNAPPY"})
    assert validate_table(table) == []
    assert format_options(table, "value") == ("parquet", {"compression": "SNAPPY", "utc-timezone": False})


def test_custom_time_extractor_needs_a_class() -> None:
    table = make_table({**FILES, "partition.time-extractor.kind": "custom"})
    d = only_error(table, "missing-option", "partition.time-extractor.kind")
    assert "'partition.time-extractor.class' is required when 'partition.time-extractor.kind' = 'custom'" in d.message


def test_partition_commit_policies_are_checked_one_by_one() -> None:
    table = make_table({**FILES, "sink.partition-commit.policy.kind": "metastore,sucess-file"})
    d = only_error(table, "invalid-option-value", "sink.partition-commit.policy.kind")
    assert "'sucess-file'" in d.message and "Did you mean 'success-file'?" in d.message


def test_filesystem_metadata() -> None:
    table = make_table(FILES, metadata=[("path", "STRING", "file.path", True), ("sz", "BIGINT", "file.size", True)])
    assert validate_table(table) == []


# -- datagen, print, blackhole ----------------------------------------------------------------------

DATAGEN = {"connector": "datagen"}


def test_valid_datagen_table_with_per_column_options() -> None:
    table = make_table(
        {
            **DATAGEN,
            "number-of-rows": "100",
            "fields.id.kind": "sequence",
            "fields.id.start": "1",
            "fields.id.end": "100",
            "fields.name.length": "5",
        }
    )
    assert validate_table(table) == []
    resolved = resolve(table)
    assert resolved.get(DatagenOptions.ROWS_PER_SECOND) == 10000
    assert resolved.get(DatagenOptions.KIND.for_column("id")) == "sequence"
    assert resolved.get(DatagenOptions.END.for_column("id")) == 100
    assert resolved.get(DatagenOptions.KIND.for_column("name")) == "random"


def test_datagen_field_option_for_an_unknown_column() -> None:
    d = only_error(make_table({**DATAGEN, "fields.nme.length": "5"}), "unknown-option", "fields.nme.length")
    assert "refers to column 'nme'" in d.message and "Did you mean 'name'?" in d.message
    assert "Physical columns: id, name." in d.message


def test_datagen_sequence_needs_start_and_end() -> None:
    table = make_table({**DATAGEN, "fields.id.kind": "sequence", "fields.id.start": "1"})
    d = only_error(table, "missing-option", "fields.id.kind")
    assert d.message == "Could not find required property 'fields.id.end' for sequence generator."


def test_datagen_random_options_do_not_apply_to_sequences() -> None:
    table = make_table(
        {
            **DATAGEN,
            "fields.id.kind": "sequence",
            "fields.id.start": "1",
            "fields.id.end": "9",
            "fields.id.min": "0",
        }
    )
    d = only_error(table, "option-conflict", "fields.id.min")
    assert "only applies to 'random' fields" in d.message and "'fields.id.kind' is 'sequence'" in d.message


def test_datagen_bounds_and_rates_are_checked() -> None:
    d = only_error(
        make_table({**DATAGEN, "fields.id.min": "10", "fields.id.max": "1"}),
        "invalid-option-value",
        "fields.id.min",
    )
    assert "'fields.id.min' (10) must not be greater than 'fields.id.max' (1)" in d.message
    d = only_error(make_table({**DATAGEN, "fields.id.null-rate": "1.5"}), "invalid-option-value", "fields.id.null-rate")
    assert "must be between 0.0 and 1.0" in d.message


@pytest.mark.parametrize(
    ("options", "validate", "message"),
    [
        (DATAGEN, validate_sink, "connector 'datagen' can only be used as a source"),
        ({"connector": "print"}, validate_source, "connector 'print' can only be used as a sink"),
        ({"connector": "blackhole"}, validate_source, "connector 'blackhole' can only be used as a sink"),
    ],
)
def test_connectors_used_the_wrong_way(options: dict[str, str], validate: object, message: str) -> None:
    table = make_table(options)
    assert callable(validate)
    d = single(validate(table), "connector-usage")
    assert_at(d, table.option_position("connector"))
    assert message in d.message


def test_print_and_blackhole_sinks() -> None:
    table = make_table({"connector": "print", "print-identifier": "out", "standard-error": "true"})
    assert validate_table(table) == [] and validate_sink(table) == []
    d = only_error(make_table({"connector": "blackhole", "path": "/x"}), "unknown-option", "path")
    assert (
        "Unsupported option 'path' for connector 'blackhole'. Supported options: connector, quality.on-failure, "
        "quality.quarantine.malformed, quality.quarantine.table, quality.results.path, quality.suite." in d.message
    )


def test_upsert_kafka_refuses_a_changelog_format_with_flinks_words() -> None:
    options = {"connector": "upsert-kafka", "topic": "t", "properties.bootstrap.servers": "b:9092",
               "key.format": "json", "value.format": "debezium-json"}  # fmt: skip
    messages = [d.message for d in validate_table(make_table(options, primary_key=["id"])) if d.severity == "error"]
    assert any(
        "'upsert-kafka' connector doesn't support 'debezium-json' as value format, because 'debezium-json' is not in "
        "insert-only mode." in m
        for m in messages
    ), messages
