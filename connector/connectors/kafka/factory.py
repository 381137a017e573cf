"""The `kafka` connector's factory: its options, formats, metadata and Flink's validation rules; the rules
shared with `upsert-kafka` live here too."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from connector.catalog.model import Column, ColumnKind, Table
from connector.connectors.kafka import describe
from connector.connectors.kafka.java_properties import JAAS, librdkafka_properties, refused_property
from connector.connectors.kafka.options import BOUNDED_MODES, STARTUP_MODES, KafkaOptions
from connector.connectors.kafka.settings import IGNORED_PROPERTIES, NOT_CLIENT_PROPERTIES
from connector.diagnostics import did_you_mean
from connector.options.declarations import ResolvedOptions
from connector.options.factory import Check, Factory, Format, FormatSlot
from connector.quality.options import QUALITY_OPTIONS

K = KafkaOptions


def _topic_or_pattern(check: Check) -> None:
    options = check.options
    if options.is_set(K.TOPIC) and options.is_set(K.TOPIC_PATTERN):
        check.report(
            "option-conflict",
            "Option 'topic' and 'topic-pattern' shouldn't be set together.",
            K.TOPIC_PATTERN.key,
        )
    elif not options.is_set(K.TOPIC) and not options.is_set(K.TOPIC_PATTERN):
        check.report("missing-option", "Either 'topic' or 'topic-pattern' must be set.")
    elif options.is_set(K.TOPIC) and not options.get(K.TOPIC):
        check.report(
            "invalid-option-value",
            "Option 'topic' names no topic: give a topic name, or 'topic-1;topic-2'.",
            K.TOPIC.key,
        )


def _topics(options: ResolvedOptions) -> list[str]:
    topics: list[str] = options.get(K.TOPIC) or []
    return topics


def _single_topic(options: ResolvedOptions) -> bool:
    return options.is_set(K.TOPIC) and len(_topics(options)) == 1


def _specific_offsets_single_topic(check: Check) -> None:
    for mode in (K.SCAN_STARTUP_MODE, K.SCAN_BOUNDED_MODE):
        if check.options.get(mode) == "specific-offsets" and not _single_topic(check.options):
            check.report(
                "option-conflict",
                "Currently Kafka source only supports specific offset for single topic. "
                f"'{mode.key}' = 'specific-offsets' needs exactly one 'topic'.",
                mode.key,
            )


def _round_robin_without_key(check: Check) -> None:
    if check.options.get(K.SINK_PARTITIONER) == "round-robin" and check.options.is_set(K.KEY_FIELDS):
        check.report(
            "option-conflict",
            "Currently 'round-robin' partitioner only works when option 'key.fields' is not specified.",
            K.SINK_PARTITIONER.key,
        )


def _key_prefix_needs_except_key(check: Check) -> None:
    if check.options.is_set(K.KEY_FIELDS_PREFIX) and check.options.get(K.VALUE_FIELDS_INCLUDE) == "ALL":
        check.report(
            "option-conflict",
            "A key prefix is not allowed when option 'value.fields-include' is set to 'ALL'. "
            "Set it to 'EXCEPT_KEY' instead to avoid field overlaps.",
            K.KEY_FIELDS_PREFIX.key,
        )


def _key_fields_are_prefixed(check: Check, fields: list[str], key: str) -> None:
    prefix = check.options.get(K.KEY_FIELDS_PREFIX)
    for name in fields:
        if prefix and not name.startswith(prefix):
            check.report(
                "invalid-option-value",
                f"All fields in 'key.fields' must be prefixed with '{prefix}' when option "
                "'key.fields-prefix' "
                f"is set but field '{name}' is not prefixed.",
                key,
            )


def _key_format_and_fields(check: Check) -> None:
    options = check.options
    fields: list[str] = options.get(K.KEY_FIELDS) or []
    if options.is_set(K.KEY_FORMAT) and not fields:
        check.report(
            "missing-option",
            "A key format 'key.format' requires the declaration of one or more of key fields using "
            "'key.fields'.",
            K.KEY_FORMAT.key,
        )
    if options.is_set(K.KEY_FIELDS) and not options.is_set(K.KEY_FORMAT):
        check.report(
            "missing-option",
            "The option 'key.fields' can only be declared if a key format is defined using 'key.format'.",
            K.KEY_FIELDS.key,
        )
    physical = [c.name for c in check.table.physical_columns]
    for name in fields:
        if name not in physical:
            check.report(
                "invalid-option-value",
                f"Could not find the field '{name}' in the table schema for usage in the key format. A key "
                "field "
                "must be a regular, physical column. The following columns can be selected in the "
                "'key.fields' "
                f"option: {', '.join(physical)}.{did_you_mean(name, physical)}",
                K.KEY_FIELDS.key,
            )
    _key_fields_are_prefixed(check, fields, K.KEY_FIELDS.key)


def _value_format(check: Check) -> Format | None:
    identifier = check.options.get(K.VALUE_FORMAT)
    return next((f for f in check.factory.formats if f.identifier == identifier), None)


def _kafka_primary_key(check: Check) -> None:
    fmt = _value_format(check)
    if check.table.primary_key and fmt is not None and fmt.supported and not fmt.changelog:
        check.report(
            "primary-key",
            f"The Kafka table '{check.table.name}' with '{fmt.identifier}' format doesn't support defining "
            "PRIMARY "
            "KEY constraint on the table, because it can't guarantee the semantic of primary key. Use the "
            "'upsert-kafka' connector for a table keyed by its PRIMARY KEY.",
            K.VALUE_FORMAT.key,
        )


def _changelog_format_sink(check: Check) -> None:
    """Flink writes a changelog format's UPDATE as a delete of the old row plus an insert of the new one: the
    formats that write changes (debezium-json) get them from the query; the others are refused."""
    fmt = _value_format(check)
    if fmt is None or not fmt.changelog:
        return
    if fmt.codec is None or not fmt.codec.writes_changes:
        check.report(
            "unsupported-format",
            f"Writing format '{fmt.identifier}' is not supported yet. Write the changelog as 'debezium-json', to "
            "an 'upsert-kafka' table (upserts and tombstones by PRIMARY KEY) or to jdbc with a PRIMARY KEY.",
            K.VALUE_FORMAT.key,
        )
        return
    for key, value in check.table.options.items():
        if key.endswith(f"{fmt.identifier}.schema-include") and value.strip().lower() == "true":
            check.report(
                "unsupported-format",
                f"'{key}' is not supported for writing: Flink writes the Kafka Connect schema of every record; "
                "write the change events without it.",
                key,
            )


def _upsert_primary_key(check: Check) -> None:
    if not check.table.primary_key:
        check.report(
            "primary-key",
            "'upsert-kafka' tables require to define a PRIMARY KEY constraint. The PRIMARY KEY specifies "
            "which "
            "columns should be read from or write to the Kafka message key. The PRIMARY KEY also defines "
            "records "
            "in the 'upsert-kafka' table should update or delete on which keys.",
        )
    _key_fields_are_prefixed(check, list(check.table.primary_key), K.KEY_FIELDS_PREFIX.key)


def _buffer_flush_together(check: Check) -> None:
    rows = check.options.get(K.SINK_BUFFER_FLUSH_MAX_ROWS) or 0
    interval = check.options.get(K.SINK_BUFFER_FLUSH_INTERVAL) or timedelta(0)
    if (rows > 0) != (interval > timedelta(0)):
        set_key = K.SINK_BUFFER_FLUSH_MAX_ROWS if rows > 0 else K.SINK_BUFFER_FLUSH_INTERVAL
        check.report(
            "option-conflict",
            "'sink.buffer-flush.max-rows' and 'sink.buffer-flush.interval' must be set to be greater than "
            "zero "
            "together to enable sink buffer flushing.",
            set_key.key,
        )


def _group_id_for_committed_offsets(check: Check) -> None:
    """Flink's KafkaSourceBuilder refuses committed-offset initializers and commits without a group id."""
    options = check.options
    if options.is_set(K.GROUP_ID):
        return
    for mode, others in ((K.SCAN_STARTUP_MODE, STARTUP_MODES), (K.SCAN_BOUNDED_MODE, BOUNDED_MODES)):
        if options.get(mode) == "group-offsets" and not options.is_invalid(mode):  # else the value's error says it
            default = "" if options.is_set(mode) else " (Flink's default)"
            alternatives = ", ".join(m for m in others if m != "group-offsets")
            check.report(
                "missing-option",
                "Property group.id is required when using committed offset for offsets initializer: "
                f"'{mode.key}' is 'group-offsets'{default}. Set 'properties.group.id', or choose another "
                f"'{mode.key}': {alternatives}.",
                mode.key if options.is_set(mode) else None,
            )
    if options.is_set(K.COMMIT_OFFSETS_ON_CHECKPOINT) and options.get(K.COMMIT_OFFSETS_ON_CHECKPOINT):
        check.report(
            "missing-option",
            "Property group.id is required when offset commit is enabled: set 'properties.group.id'.",
            K.COMMIT_OFFSETS_ON_CHECKPOINT.key,
        )


# 'properties.*' that configure Flink's source or sink, or that the source sets itself: not for the offline check.
def _client_properties(check: Check) -> None:
    """'properties.*' that no Kafka client could use (a JAAS text that does not parse, a login module that needs a
    JVM, a store that does not open, a Java property librdkafka has no equivalent for) are an error here, not when
    the run connects (`java_properties`)."""
    for key in check.table.options:
        if key.startswith("properties.") and key[len("properties.") :] in IGNORED_PROPERTIES:
            check.report(
                "ignored-property",
                f"'{key}' is a setting of Kafka's old Scala clients: Kafka's clients (Flink's, kafka-sql's) ignore it.",
                position=check.table.option_position(key),
                severity="warning",
            )
    properties = {
        key[len("properties.") :]: value
        for key, value in check.table.options.items()
        if key.startswith("properties.") and key[len("properties.") :] not in NOT_CLIENT_PROPERTIES
    }
    try:
        refused = refused_property(librdkafka_properties(properties))
    except ValueError as error:
        key = f"properties.{getattr(error, 'key', JAAS)}"  # a keystores.StoreError names its property
        check.report("security", str(error), position=check.table.option_position(key))
        return
    if refused is not None:
        key = f"properties.{refused[0]}"
        check.report("unknown-property", f"'{key}': {refused[1]}.", position=check.table.option_position(key))


def _dynamic_topic_needs_metadata(check: Check) -> None:
    """A sink over several topics (list or pattern) takes each row's topic from a `topic` metadata column."""
    options = check.options
    several = options.is_set(K.TOPIC_PATTERN) or len(_topics(options)) > 1
    has_column = any(
        c.kind is ColumnKind.METADATA and (c.metadata_key or c.name) == "topic" and not c.virtual
        for c in check.table.columns
    )
    if several and not has_column:
        key = K.TOPIC_PATTERN.key if options.is_set(K.TOPIC_PATTERN) else K.TOPIC.key
        check.report(
            "metadata",
            f"Table '{check.table.name}' is written to with '{key}' naming several topics: declare a "
            "writable "
            "`topic` metadata column (e.g. `topic STRING METADATA`) that gives each row's topic.",
            key,
        )


def _kafka_key_fields(table: Table, options: ResolvedOptions) -> list[str]:
    fields: list[str] = options.get(K.KEY_FIELDS) or []
    return fields


def _primary_key_fields(table: Table, options: ResolvedOptions) -> list[str]:
    return list(table.primary_key)


def _kafka_columns(
    key_fields: Callable[[Table, ResolvedOptions], list[str]],
) -> Callable[[Table, ResolvedOptions, str], list[Column]]:
    """Key format: the key fields in order. Value format: all physical columns, or the rest (EXCEPT_KEY)."""

    def columns(table: Table, options: ResolvedOptions, role: str) -> list[Column]:
        keys = key_fields(table, options)
        physical = table.physical_columns
        if role == "key":
            return [c for name in keys for c in physical if c.name == name]
        if options.get(K.VALUE_FIELDS_INCLUDE) == "EXCEPT_KEY":
            return [c for c in physical if c.name not in keys]
        return physical

    return columns


KAFKA_READABLE_METADATA = {
    "topic": "STRING NOT NULL",
    "partition": "INT NOT NULL",
    "headers": "MAP<STRING, BYTES> NOT NULL",
    "leader-epoch": "INT NULL",
    "offset": "BIGINT NOT NULL",
    "timestamp": "TIMESTAMP_LTZ(3) NOT NULL",
    "timestamp-type": "STRING NOT NULL",
}
KAFKA_WRITABLE_METADATA = {key: KAFKA_READABLE_METADATA[key] for key in ("topic", "headers", "timestamp")}


_KAFKA_SOURCE_OPTIONS = (
    K.MAX_RECORDS_PER_BATCH,
    K.FAIL_ON_DATA_LOSS,
    K.MIN_PARTITIONS,
    K.POLL_TIMEOUT,
    K.RETRY_TIMEOUT,
    K.BOUNDED_END_WATERMARK,
    K.WATERMARK_EMIT_STRATEGY,
    K.WATERMARK_IDLE_TIMEOUT,
    K.WATERMARK_ALIGNMENT_GROUP,
    K.WATERMARK_ALIGNMENT_MAX_DRIFT,
    K.WATERMARK_ALIGNMENT_UPDATE_INTERVAL,
)

FACTORY = Factory(
    "kafka",
    "Reads and writes Kafka topics as an append-only table (Flink's KafkaDynamicTableFactory). Keys not "
    "listed are rejected, except 'properties.*' (Kafka client properties) and the options of the formats "
    "in use.",
    options=(
        K.TOPIC,
        K.TOPIC_PATTERN,
        K.BOOTSTRAP_SERVERS,
        K.GROUP_ID,
        K.AUTO_OFFSET_RESET,
        K.COMMIT_OFFSETS_ON_CHECKPOINT,
        K.VALUE_FORMAT,
        K.KEY_FORMAT,
        K.KEY_FIELDS,
        K.KEY_FIELDS_PREFIX,
        K.VALUE_FIELDS_INCLUDE,
        K.SCAN_STARTUP_MODE,
        K.SCAN_STARTUP_SPECIFIC_OFFSETS,
        K.SCAN_STARTUP_TIMESTAMP_MILLIS,
        K.SCAN_BOUNDED_MODE,
        K.SCAN_BOUNDED_SPECIFIC_OFFSETS,
        K.SCAN_BOUNDED_TIMESTAMP_MILLIS,
        K.PARTITION_DISCOVERY_INTERVAL,
        K.SCAN_PARALLELISM,
        K.SINK_PARTITIONER,
        K.DELIVERY_GUARANTEE,
        K.TRANSACTIONAL_ID_PREFIX,
        K.TRANSACTION_NAMING_STRATEGY,
        K.SINK_PARALLELISM,
        *_KAFKA_SOURCE_OPTIONS,
        *QUALITY_OPTIONS,
    ),
    reader="connector.connectors.kafka.reading",
    writer="connector.connectors.kafka.writing",
    describe_source=describe.describe_source,
    describe_sink=describe.describe_sink,
    format_slots=(FormatSlot("value", K.VALUE_FORMAT), FormatSlot("key", K.KEY_FORMAT)),
    readable_metadata=KAFKA_READABLE_METADATA,
    writable_metadata=KAFKA_WRITABLE_METADATA,
    passthrough_prefixes=("properties.",),
    rules=(
        _topic_or_pattern,
        _client_properties,
        _specific_offsets_single_topic,
        _round_robin_without_key,
        _key_prefix_needs_except_key,
        _key_format_and_fields,
        _kafka_primary_key,
    ),
    source_rules=(_group_id_for_committed_offsets,),
    sink_rules=(_dynamic_topic_needs_metadata, _changelog_format_sink),
    format_columns=_kafka_columns(_kafka_key_fields),
    carries="messages",
    topic_option=K.TOPIC.key,
    commits_offsets=True,
    record_provenance=True,
    stand_in={"connector": "kafka", "format": "json"},
)
