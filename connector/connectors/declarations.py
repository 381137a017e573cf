"""Declarations of every connector and format the pipelines can use, with their per-factory rules.

Names, defaults and error messages follow Flink (flink-connector-kafka 3.x-5.x, Flink 1.17-2.1 formats);
options marked Spark-only expose Spark Kafka-source knobs Flink lacks, under Flink-style names.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from datetime import timedelta

from connector.diagnostics import did_you_mean
from connector.options.framework import (
    BOOLEAN,
    CHAR,
    CHARSET,
    DURATION,
    ENUM,
    FLOAT,
    INT,
    LIST,
    LONG,
    MEMORY_SIZE,
    NUMBER,
    STRING,
    Check,
    ConfigOption,
    Factory,
    FixedValue,
    Format,
    FormatCheck,
    FormatSlot,
    OptionType,
    RequiredWhen,
    ResolvedOptions,
    at_least,
    fraction,
    parse_flink_type,
)

# The entry points live with the framework; re-exported for callers that think in factories.
from connector.options.framework import format_columns as format_columns
from connector.options.framework import format_options as format_options
from connector.options.framework import resolve as resolve
from connector.options.framework import validate_sink as validate_sink
from connector.options.framework import validate_sink_metadata as validate_sink_metadata
from connector.options.framework import validate_source as validate_source
from connector.options.framework import validate_table as validate_table
from connector.sql.catalog import Column, ColumnKind, Table

# ---------------------------------------------------------------------------------------------------------
# Kafka-specific option types
# ---------------------------------------------------------------------------------------------------------

SPECIFIC_OFFSETS_SYNTAX = "partition:0,offset:42;partition:1,offset:300"


def parse_specific_offsets(text: str, key: str) -> dict[int, int]:
    """Flink's `partition:0,offset:42;partition:1,offset:300` (strict: no spaces), as partition -> offset."""
    error = ValueError(
        f"Invalid properties '{key}' should follow the format '{SPECIFIC_OFFSETS_SYNTAX}', but is '{text}'."
    )
    offsets: dict[int, int] = {}
    for pair in text.split(";"):
        match = re.fullmatch(r"partition:([+-]?\d+),offset:([+-]?\d+)", pair)
        if match is None:
            raise error
        offsets[int(match.group(1))] = int(match.group(2))
    return offsets


class _SpecificOffsetsType(OptionType[dict[int, int]]):
    def parse(self, text: str, key: str) -> dict[int, int]:
        return parse_specific_offsets(text, key)

    def describe(self) -> str:
        return f"String `{SPECIFIC_OFFSETS_SYNTAX}`"

    def render(self, value: dict[int, int]) -> str:
        return ";".join(f"partition:{p},offset:{o}" for p, o in value.items())


SPECIFIC_OFFSETS: OptionType[dict[int, int]] = _SpecificOffsetsType()

PARTITIONERS = ("default", "fixed", "round-robin")


class _PartitionerType(OptionType[str]):
    """'default' | 'fixed' | 'round-robin' | a partitioner class name."""

    def parse(self, text: str, key: str) -> str:
        if text == "":
            raise ValueError(f"Option '{key}' should be a non-empty string.")
        if text in PARTITIONERS or re.fullmatch(r"[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)+", text):
            return text
        raise ValueError(
            f"Invalid value '{text}' for option '{key}': expected one of {', '.join(PARTITIONERS)} or the "
            f"fully-qualified name of a partitioner class.{did_you_mean(text.lower(), PARTITIONERS)}"
        )

    def describe(self) -> str:
        return "String: " + " | ".join(f"`{p}`" for p in PARTITIONERS) + " | class name"


PARTITIONER: OptionType[str] = _PartitionerType()

# ---------------------------------------------------------------------------------------------------------
# Kafka and upsert-kafka options
# ---------------------------------------------------------------------------------------------------------

STARTUP_MODES = ("earliest-offset", "latest-offset", "group-offsets", "timestamp", "specific-offsets")
BOUNDED_MODES = ("unbounded", "latest-offset", "group-offsets", "timestamp", "specific-offsets")


def _required_in_mode(kind: str, mode: str, companion: str) -> RequiredWhen:
    """A companion option of a startup/bounded mode, with Flink's exact error."""
    mode_key = f"scan.{kind}.mode"

    def applies(options: ResolvedOptions) -> bool:
        mode_option = KafkaOptions.SCAN_STARTUP_MODE if kind == "startup" else KafkaOptions.SCAN_BOUNDED_MODE
        return options.get(mode_option) == mode

    return RequiredWhen(
        condition=f"'{mode_key}' = '{mode}'",
        applies=applies,
        anchor=mode_key,
        message=f"'{companion}' is required in '{mode}' {kind} mode but missing.",
    )


class KafkaOptions:
    """Options of the `kafka` and `upsert-kafka` connectors (Flink's KafkaConnectorOptions)."""

    TOPIC = ConfigOption(
        "topic",
        LIST,
        "Source: topic(s) to read, several separated by semicolon ('topic-1;topic-2'). Sink: the topic to "
        "write "
        "to; a list is an allow-list for a writable `topic` metadata column, which must then be provided. "
        "Exactly one of 'topic' and 'topic-pattern' must be set.",
    )
    TOPIC_PATTERN = ConfigOption(
        "topic-pattern",
        STRING,
        "Java regular expression. Source: read every matching topic; topics created later are found by "
        "partition discovery. Sink: the `topic` metadata column must be provided and match it. Exactly one "
        "of "
        "'topic' and 'topic-pattern' must be set.",
    )
    BOOTSTRAP_SERVERS = ConfigOption(
        "properties.bootstrap.servers", STRING, "Comma-separated list of Kafka brokers.", required=True
    )
    GROUP_ID = ConfigOption(
        "properties.group.id",
        STRING,
        "Consumer group of the source. Needed by 'group-offsets' startup/bounded mode and to commit offsets; "
        "without it nothing is committed. Not used by sinks.",
    )
    AUTO_OFFSET_RESET = ConfigOption(
        "properties.auto.offset.reset",
        ENUM("earliest", "latest", "none"),
        "Where 'group-offsets' starts in partitions the group has no committed offset for. Flink's default "
        "is "
        "'none': the job fails. Every other startup mode overrides it.",
        default="none",
    )
    COMMIT_OFFSETS_ON_CHECKPOINT = ConfigOption(
        "properties.commit.offsets.on.checkpoint",
        BOOLEAN,
        "Commit the consumed offsets (next record to read) to the consumer group when a checkpoint completes "
        "(here: when a micro-batch completes). For monitoring only: restores use the checkpoint. Off when "
        "'properties.group.id' is missing.",
        default=True,
    )
    VALUE_FORMAT = ConfigOption(
        "value.format",
        STRING,
        "Format of the message value. Its options are written '<format>.<option>' when set with 'format' and "
        "'value.<format>.<option>' when set with 'value.format'.",
        required=True,
        fallback_keys=("format",),
    )
    KEY_FORMAT = ConfigOption(
        "key.format",
        STRING,
        "Format of the message key; its options are written 'key.<format>.<option>'. The kafka connector "
        "needs 'key.fields' with it; upsert-kafka uses the PRIMARY KEY columns.",
    )
    KEY_FIELDS = ConfigOption(
        "key.fields",
        LIST,
        "Physical columns forming the message key, in order, separated by semicolon: 'field1;field2'. Empty: "
        "messages have no key.",
        default=[],
    )
    KEY_FIELDS_PREFIX = ConfigOption(
        "key.fields-prefix",
        STRING,
        "Prefix of the key columns in the table schema, to avoid clashes with value columns; stripped inside "
        "the key format. 'key.fields' uses the prefixed names. Requires 'value.fields-include' = "
        "'EXCEPT_KEY'.",
    )
    VALUE_FIELDS_INCLUDE = ConfigOption(
        "value.fields-include",
        ENUM("ALL", "EXCEPT_KEY"),
        "'ALL': the value holds every physical column, key columns included. 'EXCEPT_KEY': key columns are "
        "left out of the value.",
        default="ALL",
    )
    SCAN_STARTUP_MODE = ConfigOption(
        "scan.startup.mode",
        ENUM(*STARTUP_MODES),
        "Where a fresh start begins reading: 'earliest-offset'; 'latest-offset'; 'group-offsets' (the "
        "group's "
        "committed offsets, else 'properties.auto.offset.reset'); 'timestamp' (first record at or after "
        "'scan.startup.timestamp-millis', the latest offset in partitions without one); 'specific-offsets' "
        "('scan.startup.specific-offsets'; unlisted partitions use the committed offset). A restart from a "
        "checkpoint always resumes at the checkpointed offsets; partitions found later start at the "
        "earliest.",
        default="group-offsets",
    )
    SCAN_STARTUP_SPECIFIC_OFFSETS = ConfigOption(
        "scan.startup.specific-offsets",
        SPECIFIC_OFFSETS,
        "Start offset (next record to read) per partition for 'specific-offsets' mode, exactly "
        f"'{SPECIFIC_OFFSETS_SYNTAX}' without spaces. Single 'topic' only.",
        required_when=_required_in_mode("startup", "specific-offsets", "scan.startup.specific-offsets"),
    )
    SCAN_STARTUP_TIMESTAMP_MILLIS = ConfigOption(
        "scan.startup.timestamp-millis",
        LONG,
        "Epoch milliseconds to start from in 'timestamp' startup mode.",
        required_when=_required_in_mode("startup", "timestamp", "scan.startup.timestamp-millis"),
    )
    SCAN_BOUNDED_MODE = ConfigOption(
        "scan.bounded.mode",
        ENUM(*BOUNDED_MODES),
        "Where the source stops: 'unbounded' (never); 'latest-offset' or 'group-offsets' (evaluated when a "
        "partition starts being read); 'timestamp'; 'specific-offsets'. The source finishes once every "
        "partition reached its end.",
        default="unbounded",
    )
    SCAN_BOUNDED_SPECIFIC_OFFSETS = ConfigOption(
        "scan.bounded.specific-offsets",
        SPECIFIC_OFFSETS,
        "End offset (exclusive) per partition for 'specific-offsets' bounded mode, same syntax as "
        "'scan.startup.specific-offsets'. Partitions without an entry are not read at all. Single 'topic' "
        "only.",
        required_when=_required_in_mode("bounded", "specific-offsets", "scan.bounded.specific-offsets"),
    )
    SCAN_BOUNDED_TIMESTAMP_MILLIS = ConfigOption(
        "scan.bounded.timestamp-millis",
        LONG,
        "Epoch milliseconds to stop at in 'timestamp' bounded mode.",
        required_when=_required_in_mode("bounded", "timestamp", "scan.bounded.timestamp-millis"),
    )
    PARTITION_DISCOVERY_INTERVAL = ConfigOption(
        "scan.topic-partition-discovery.interval",
        DURATION,
        "How often to look for new partitions and new topics matching 'topic-pattern'; they are read from "
        "the "
        "earliest offset. '0' disables discovery. Off for bounded sources.",
        default=timedelta(minutes=5),
    )
    SCAN_PARALLELISM = ConfigOption(
        "scan.parallelism", INT, "Parallelism of the source.", constraint=at_least(1)
    )
    SINK_PARTITIONER = ConfigOption(
        "sink.partitioner",
        PARTITIONER,
        "How rows map to Kafka partitions: 'default' (Kafka's partitioner: hash of the key, sticky for null "
        "keys), 'fixed' (each sink task writes to one partition), 'round-robin' (Kafka's sticky round-robin; "
        "not "
        "with 'key.fields'), or the class name of a custom partitioner.",
        default="default",
    )
    DELIVERY_GUARANTEE = ConfigOption(
        "sink.delivery-guarantee",
        ENUM("none", "at-least-once", "exactly-once"),
        "'none', 'at-least-once', or 'exactly-once' (Kafka transactions committed with the checkpoint; needs "
        "'sink.transactional-id-prefix', and consumers with isolation.level=read_committed).",
        default="at-least-once",
        deprecated_keys=("sink.semantic",),
    )
    TRANSACTIONAL_ID_PREFIX = ConfigOption(
        "sink.transactional-id-prefix",
        STRING,
        "Prefix of the transactional ids of the Kafka transactions of 'exactly-once'; unique per job on the "
        "Kafka cluster.",
        required_when=RequiredWhen(
            condition="'sink.delivery-guarantee' = 'exactly-once'",
            applies=lambda options: options.get(KafkaOptions.DELIVERY_GUARANTEE) == "exactly-once",
            anchor="sink.delivery-guarantee",
            message="sink.transactional-id-prefix must be specified when using "
            "DeliveryGuarantee.EXACTLY_ONCE.",
        ),
    )
    TRANSACTION_NAMING_STRATEGY = ConfigOption(
        "sink.transaction-naming-strategy",
        ENUM("INCREMENTING", "POOLING"),
        "How 'exactly-once' names its transactional ids: 'INCREMENTING', or 'POOLING' (reuses ids; brokers "
        ">= "
        "Kafka 3.0).",
        default="INCREMENTING",
    )
    SINK_PARALLELISM = ConfigOption(
        "sink.parallelism",
        INT,
        "Parallelism of the sink; the upstream parallelism by default.",
        constraint=at_least(1),
    )
    SINK_BUFFER_FLUSH_MAX_ROWS = ConfigOption(
        "sink.buffer-flush.max-rows",
        INT,
        "Rows buffered before a flush; the buffer keeps only the last row per key. '0' disables buffering; "
        "'sink.buffer-flush.max-rows' and 'sink.buffer-flush.interval' must both be > 0 to enable it.",
        default=0,
        constraint=at_least(0),
    )
    SINK_BUFFER_FLUSH_INTERVAL = ConfigOption(
        "sink.buffer-flush.interval",
        DURATION,
        "Interval between flushes of the buffer; '0' disables buffering (see 'sink.buffer-flush.max-rows').",
        default=timedelta(0),
    )
    WATERMARK_EMIT_STRATEGY = ConfigOption(
        "scan.watermark.emit.strategy",
        ENUM("on-event", "on-periodic"),
        "Flink framework option: emit watermarks after every record ('on-event') or every "
        "pipeline.auto-watermark-interval ('on-periodic').",
        default="on-periodic",
    )
    WATERMARK_IDLE_TIMEOUT = ConfigOption(
        "scan.watermark.idle-timeout",
        DURATION,
        "Flink framework option: a split without records for this long is idle and no longer holds back the "
        "watermark; overrides table.exec.source.idle-timeout for this table.",
    )
    WATERMARK_ALIGNMENT_GROUP = ConfigOption(
        "scan.watermark.alignment.group", STRING, "Flink framework option: watermark alignment group."
    )
    WATERMARK_ALIGNMENT_MAX_DRIFT = ConfigOption(
        "scan.watermark.alignment.max-drift",
        DURATION,
        "Flink framework option: how far a source may run ahead of its alignment group's watermark.",
    )
    WATERMARK_ALIGNMENT_UPDATE_INTERVAL = ConfigOption(
        "scan.watermark.alignment.update-interval",
        DURATION,
        "Flink framework option: how often watermark alignment is recomputed.",
        default=timedelta(seconds=1),
    )
    MAX_RECORDS_PER_BATCH = ConfigOption(
        "scan.max-records-per-batch",
        LONG,
        "Spark's maxOffsetsPerTrigger: at most this many records per micro-batch, split across "
        "partitions in proportion to their backlog. Unlimited when unset.",
        constraint=at_least(1),
        spark_only=True,
    )
    FAIL_ON_DATA_LOSS = ConfigOption(
        "scan.fail-on-data-loss",
        BOOLEAN,
        "Spark's failOnDataLoss: fail when offsets still to be read are gone (deleted by "
        "retention, topic recreated); 'false' skips the lost range with a warning.",
        default=True,
        spark_only=True,
    )
    MIN_PARTITIONS = ConfigOption(
        "scan.min-partitions",
        INT,
        "Spark's minPartitions: read with at least this many tasks, splitting large partition "
        "ranges into several tasks. One task per Kafka partition when unset.",
        constraint=at_least(1),
        spark_only=True,
    )
    BOUNDED_END_WATERMARK = ConfigOption(
        "scan.bounded.end-watermark",
        BOOLEAN,
        "With a WATERMARK and a 'scan.bounded.mode': when the bounded scan ends, the table's watermark moves to "
        "the end of time, so every pending event-time window fires, as Flink's final watermark at the end of "
        "bounded input does. Spark keeps that watermark in the checkpoint: a later run on the same checkpoint "
        "would treat new records as late in windows, so start it with a new checkpoint, or set 'false' (then "
        "windows the data has not closed stay open).",
        default=True,
        spark_only=True,
    )
    POLL_TIMEOUT = ConfigOption(
        "scan.poll-timeout",
        DURATION,
        "Spark's kafkaConsumer.pollTimeoutMs: how long a read task waits in one Kafka poll.",
        default=timedelta(minutes=2),
        spark_only=True,
    )


# ---------------------------------------------------------------------------------------------------------
# Formats
# ---------------------------------------------------------------------------------------------------------


class JsonOptions:
    """Options of the `json` format, written 'json.<key>' (or 'key.json.<key>' / 'value.json.<key>')."""

    FAIL_ON_MISSING_FIELD = ConfigOption(
        "fail-on-missing-field",
        BOOLEAN,
        "Fail when a field of the schema is missing from a record; otherwise it reads as null.",
        default=False,
    )
    IGNORE_PARSE_ERRORS = ConfigOption(
        "ignore-parse-errors",
        BOOLEAN,
        "Skip rows and fields that do not parse (they read as null) instead of failing.",
        default=False,
    )
    TIMESTAMP_FORMAT_STANDARD = ConfigOption(
        "timestamp-format.standard",
        ENUM("SQL", "ISO-8601"),
        "Text form of TIMESTAMP / TIMESTAMP_LTZ values: 'SQL' ('2020-12-30 12:13:14.123', LTZ with a 'Z') or "
        "'ISO-8601' ('2020-12-30T12:13:14.123').",
        default="SQL",
    )
    MAP_NULL_KEY_MODE = ConfigOption(
        "map-null-key.mode",
        ENUM("FAIL", "DROP", "LITERAL"),
        "Writing a MAP entry with a null key: 'FAIL', 'DROP' the entry, or write it under "
        "'map-null-key.literal' ('LITERAL').",
        default="FAIL",
    )
    MAP_NULL_KEY_LITERAL = ConfigOption(
        "map-null-key.literal", STRING, "Key written for null map keys in 'LITERAL' mode.", default="null"
    )
    ENCODE_DECIMAL_AS_PLAIN_NUMBER = ConfigOption(
        "encode.decimal-as-plain-number",
        BOOLEAN,
        "Write DECIMAL values as plain numbers (0.000000027) rather than in scientific notation (2.7E-8).",
        default=False,
    )
    ENCODE_IGNORE_NULL_FIELDS = ConfigOption(
        "encode.ignore-null-fields",
        BOOLEAN,
        "Leave out fields whose value is null when writing.",
        default=False,
    )
    DECODE_JSON_PARSER_ENABLED = ConfigOption(
        "decode.json-parser.enabled",
        BOOLEAN,
        "Flink: decode with the streaming JsonParser rather than a JsonNode tree (faster, same results).",
        default=True,
    )


class CsvOptions:
    """Options of the `csv` format, written 'csv.<key>'."""

    FIELD_DELIMITER = ConfigOption(
        "field-delimiter", CHAR(unescape=True), "Field separator, one character ('\\t' for tab).", default=","
    )
    DISABLE_QUOTE_CHARACTER = ConfigOption(
        "disable-quote-character",
        BOOLEAN,
        "Do not quote values; 'quote-character' must not be set then.",
        default=False,
    )
    QUOTE_CHARACTER = ConfigOption(
        "quote-character", CHAR(), "Character enclosing field values.", default='"'
    )
    ALLOW_COMMENTS = ConfigOption(
        "allow-comments", BOOLEAN, "Ignore lines starting with '#' (and skip empty lines).", default=False
    )
    IGNORE_PARSE_ERRORS = ConfigOption(
        "ignore-parse-errors",
        BOOLEAN,
        "Skip rows and fields that do not parse (they read as null) instead of failing.",
        default=False,
    )
    ARRAY_ELEMENT_DELIMITER = ConfigOption(
        "array-element-delimiter", STRING, "Separator of ARRAY and ROW elements inside a field.", default=";"
    )
    ESCAPE_CHARACTER = ConfigOption(
        "escape-character", CHAR(), "Character escaping special characters; none by default."
    )
    NULL_LITERAL = ConfigOption(
        "null-literal", STRING, "Field text read and written as SQL NULL; none by default."
    )


class RawOptions:
    """Options of the `raw` format: one physical column holding the whole key or value."""

    CHARSET = ConfigOption("charset", CHARSET, "Charset of STRING values.", default="UTF-8")
    ENDIANNESS = ConfigOption(
        "endianness",
        ENUM("big-endian", "little-endian"),
        "Byte order of numeric values.",
        default="big-endian",
    )


class ParquetOptions:
    """Options of the `parquet` format (filesystem only); other 'parquet.*' keys go to the Parquet writer."""

    UTC_TIMEZONE = ConfigOption(
        "utc-timezone",
        BOOLEAN,
        "Convert timestamps using UTC rather than the local time zone (as Hive 3 does).",
        default=False,
    )


def _json_error_modes(check: FormatCheck) -> None:
    fail = check.options.get(JsonOptions.FAIL_ON_MISSING_FIELD)
    ignore = check.options.get(JsonOptions.IGNORE_PARSE_ERRORS)
    if fail and ignore:
        check.report(
            "option-conflict",
            f"{check.key(JsonOptions.FAIL_ON_MISSING_FIELD)} and "
            f"{check.key(JsonOptions.IGNORE_PARSE_ERRORS)} "
            "shouldn't both be true.",
            JsonOptions.IGNORE_PARSE_ERRORS.key,
        )


def _csv_quote(check: FormatCheck) -> None:
    if check.options.get(CsvOptions.DISABLE_QUOTE_CHARACTER) and check.options.is_set(
        CsvOptions.QUOTE_CHARACTER
    ):
        check.report(
            "option-conflict",
            "Format cannot define a quote character and disabled quote character at the same time "
            f"('{check.key(CsvOptions.QUOTE_CHARACTER)}' and "
            f"'{check.key(CsvOptions.DISABLE_QUOTE_CHARACTER)}').",
            CsvOptions.QUOTE_CHARACTER.key,
        )


RAW_COLUMN_TYPES = (
    "CHAR", "VARCHAR", "BINARY", "VARBINARY", "RAW", "BOOLEAN", "TINYINT", "SMALLINT", "INTEGER", "BIGINT",
    "FLOAT", "DOUBLE",
)  # fmt: skip


def _raw_single_column(check: FormatCheck) -> None:
    names = [c.name for c in check.columns]
    where = check.table.option_position(check.format_key)
    if len(names) != 1:
        check.report(
            "unsupported-format",
            f"The 'raw' format only supports a single physical column, but the {check.role} of table "
            f"'{check.table.name}' has {len(names)}: {', '.join(names) or 'none'}. Use another format, or "
            "'key.fields' / 'value.fields-include' = 'EXCEPT_KEY' to leave a single column in the "
            f"{check.role}.",
            position=where,
        )
        return
    column = check.columns[0]
    parsed = parse_flink_type(column.type_sql)
    if parsed is not None and parsed.root not in RAW_COLUMN_TYPES:
        check.report(
            "unsupported-format",
            f"The 'raw' format doesn't support '{column.type_sql}' as column type (column '{column.name}'). "
            "Supported: STRING/VARCHAR/CHAR, BYTES/VARBINARY/BINARY, BOOLEAN, TINYINT, SMALLINT, INT, "
            "BIGINT, "
            "FLOAT, DOUBLE.",
            position=where,
        )


JSON = Format(
    "json",
    "JSON objects, one per message (Kafka) or per line (filesystem).",
    options=tuple(v for v in vars(JsonOptions).values() if isinstance(v, ConfigOption)),
    rules=(_json_error_modes,),
)
CSV = Format(
    "csv",
    "RFC-4180 CSV, one row per message (Kafka) or per line (filesystem).",
    options=tuple(v for v in vars(CsvOptions).values() if isinstance(v, ConfigOption)),
    rules=(_csv_quote,),
)
RAW = Format(
    "raw",
    "The raw bytes of the key or value as one column (STRING decoded with 'raw.charset').",
    options=(RawOptions.CHARSET, RawOptions.ENDIANNESS),
    connectors=("kafka", "upsert-kafka"),
    rules=(_raw_single_column,),
)
PARQUET = Format(
    "parquet",
    "Apache Parquet files. Other 'parquet.*' keys (e.g. 'parquet.compression') are passed to the writer.",
    options=(ParquetOptions.UTC_TIMEZONE,),
    connectors=("filesystem",),
    open_options=True,
)
UNSUPPORTED_FORMATS = (
    Format("avro", "Apache Avro, schema derived from the table.", supported=False),
    Format("avro-confluent", "Avro with the Confluent Schema Registry wire format.", supported=False),
    Format("debezium-json", "Debezium CDC changelog in JSON.", supported=False, changelog=True),
    Format("canal-json", "Canal CDC changelog in JSON.", supported=False, changelog=True),
    Format("maxwell-json", "Maxwell CDC changelog in JSON.", supported=False, changelog=True),
    Format("protobuf", "Protocol Buffers.", supported=False),
)
FORMATS = (JSON, CSV, RAW, PARQUET, *UNSUPPORTED_FORMATS)

# ---------------------------------------------------------------------------------------------------------
# Kafka rules
# ---------------------------------------------------------------------------------------------------------

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
        if options.get(mode) == "group-offsets":
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

class QualityOptions:
    """The data-quality gate of a table that is written (`connector.quality.gate`): its expectations are its
    `CONSTRAINT ... EXPECT` clauses plus the suite file; every micro-batch is checked before it is written."""

    SUITE = ConfigOption(
        "quality.suite",
        STRING,
        "Path of a great-expectations suite JSON file (relative to the pipeline file) whose expectations "
        "every micro-batch written to this table must meet.",
    )
    ON_FAILURE = ConfigOption(
        "quality.on-failure",
        ENUM("fail", "drop", "quarantine"),
        "What a failed suite expectation does: 'fail' stops the query before the batch is written (nothing "
        "is committed; exit code 3); 'drop' leaves the failing rows out (the whole batch for batch-level "
        "expectations); 'quarantine' writes them to 'quality.quarantine.table' instead.",
        default="fail",
    )
    QUARANTINE_TABLE = ConfigOption(
        "quality.quarantine.table",
        STRING,
        "A table of this pipeline that receives quarantined rows, by column name: the table's columns plus "
        "`failed_expectations`, `source_topic`, `source_partition`, `source_offset`, `batch_id`, "
        "`gated_table`.",
    )
    QUARANTINE_MALFORMED = ConfigOption(
        "quality.quarantine.malformed",
        BOOLEAN,
        "Also send the records the query's sources skip as malformed ('<format>.ignore-parse-errors' = 'true') "
        "to 'quality.quarantine.table', in the batch that read them: `failed_expectations` = "
        "['malformed_record'], their `source_topic` / `source_partition` / `source_offset` (the file for "
        "filesystem sources), the undecoded `raw_key` and `raw_value` (BYTES, or STRING as UTF-8), NULL "
        "data columns. They reach the driver with the batch's metrics: meant for the occasional bad record.",
        default=False,
    )
    RESULTS_PATH = ConfigOption(
        "quality.results.path",
        STRING,
        "Directory of the per-batch validation results: one JSON file per micro-batch, under a directory "
        "named after the query. By default `quality/` under the query's checkpoint.",
    )


QUALITY_OPTIONS = tuple(v for v in vars(QualityOptions).values() if isinstance(v, ConfigOption))

_KAFKA_SOURCE_OPTIONS = (
    K.MAX_RECORDS_PER_BATCH,
    K.FAIL_ON_DATA_LOSS,
    K.MIN_PARTITIONS,
    K.POLL_TIMEOUT,
    K.BOUNDED_END_WATERMARK,
    K.WATERMARK_EMIT_STRATEGY,
    K.WATERMARK_IDLE_TIMEOUT,
    K.WATERMARK_ALIGNMENT_GROUP,
    K.WATERMARK_ALIGNMENT_MAX_DRIFT,
    K.WATERMARK_ALIGNMENT_UPDATE_INTERVAL,
)

KAFKA = Factory(
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
    source=True,
    sink=True,
    format_slots=(FormatSlot("value", K.VALUE_FORMAT), FormatSlot("key", K.KEY_FORMAT)),
    formats=FORMATS,
    readable_metadata=KAFKA_READABLE_METADATA,
    writable_metadata=KAFKA_WRITABLE_METADATA,
    passthrough_prefixes=("properties.",),
    rules=(
        _topic_or_pattern,
        _specific_offsets_single_topic,
        _round_robin_without_key,
        _key_prefix_needs_except_key,
        _key_format_and_fields,
        _kafka_primary_key,
    ),
    source_rules=(_group_id_for_committed_offsets,),
    sink_rules=(_dynamic_topic_needs_metadata,),
    format_columns=_kafka_columns(_kafka_key_fields),
)

UPSERT_KAFKA = Factory(
    "upsert-kafka",
    "A Kafka topic as a changelog keyed by the PRIMARY KEY: a message is an upsert for its key, a null value "
    "(tombstone) a delete. Reads always start at the earliest offset. Writes send INSERT/UPDATE_AFTER as "
    "messages and DELETE as tombstones, partitioned by the key.",
    options=(
        K.TOPIC,
        K.TOPIC_PATTERN,
        K.BOOTSTRAP_SERVERS,
        K.GROUP_ID,
        K.COMMIT_OFFSETS_ON_CHECKPOINT,
        dataclasses.replace(K.VALUE_FORMAT, fallback_keys=()),
        K.KEY_FORMAT.as_required(),
        K.KEY_FIELDS_PREFIX,
        K.VALUE_FIELDS_INCLUDE,
        K.SCAN_BOUNDED_MODE,
        K.SCAN_BOUNDED_SPECIFIC_OFFSETS,
        K.SCAN_BOUNDED_TIMESTAMP_MILLIS,
        K.PARTITION_DISCOVERY_INTERVAL,
        K.SCAN_PARALLELISM,
        K.DELIVERY_GUARANTEE,
        K.TRANSACTIONAL_ID_PREFIX,
        K.TRANSACTION_NAMING_STRATEGY,
        K.SINK_PARALLELISM,
        K.SINK_BUFFER_FLUSH_MAX_ROWS,
        K.SINK_BUFFER_FLUSH_INTERVAL,
        *_KAFKA_SOURCE_OPTIONS,
        *QUALITY_OPTIONS,
    ),
    source=True,
    sink=True,
    format_slots=(FormatSlot("value", K.VALUE_FORMAT), FormatSlot("key", K.KEY_FORMAT)),
    formats=FORMATS,
    readable_metadata=KAFKA_READABLE_METADATA,
    writable_metadata=KAFKA_WRITABLE_METADATA,
    passthrough_prefixes=("properties.",),
    forbidden={
        "scan.startup.mode": "upsert-kafka always reads from the earliest offset to keep data integrity.",
        "key.fields": "the key columns are the PRIMARY KEY columns.",
        "sink.partitioner": "rows are partitioned by their key so that updates of a key stay in order.",
        "format": "set 'key.format' and 'value.format'.",
    },
    fixed=(FixedValue(K.SCAN_STARTUP_MODE, "earliest-offset"),),
    rules=(
        _topic_or_pattern,
        _specific_offsets_single_topic,
        _key_prefix_needs_except_key,
        _upsert_primary_key,
        _buffer_flush_together,
    ),
    source_rules=(_group_id_for_committed_offsets,),
    sink_rules=(_dynamic_topic_needs_metadata,),
    format_columns=_kafka_columns(_primary_key_fields),
)

# ---------------------------------------------------------------------------------------------------------
# Filesystem, datagen, print, blackhole
# ---------------------------------------------------------------------------------------------------------


class _CommaSetType(OptionType[list[str]]):
    """A comma-separated subset of fixed names ('metastore,success-file')."""

    def __init__(self, choices: tuple[str, ...]) -> None:
        self.choices = choices

    def parse(self, text: str, key: str) -> list[str]:
        items = [item.strip() for item in text.split(",") if item.strip()]
        for item in items:
            if item not in self.choices:
                raise ValueError(
                    f"Invalid value '{item}' in option '{key}': expected a comma-separated list of "
                    f"{', '.join(self.choices)}.{did_you_mean(item, self.choices)}"
                )
        return items

    def describe(self) -> str:
        return "Comma-separated: " + ", ".join(f"`{c}`" for c in self.choices)

    def render(self, value: list[str]) -> str:
        return ",".join(value)


class FilesystemOptions:
    """Options of the `filesystem` connector (Flink's FileSystemConnectorOptions)."""

    PATH = ConfigOption(
        "path", STRING, "Directory of the table (file:///..., s3://..., hdfs://...).", required=True
    )
    FORMAT = ConfigOption(
        "format", STRING, "Format of the files; its options are written '<format>.<option>'.", required=True
    )
    SOURCE_MONITOR_INTERVAL = ConfigOption(
        "source.monitor-interval",
        DURATION,
        "Streaming read: how often to look for new files. Unset: read the files present at start only "
        "(bounded).",
    )
    PARTITION_DEFAULT_NAME = ConfigOption(
        "partition.default-name",
        STRING,
        "Partition directory name for a null or empty partition value.",
        default="__DEFAULT_PARTITION__",
    )
    ROLLING_FILE_SIZE = ConfigOption(
        "sink.rolling-policy.file-size",
        MEMORY_SIZE,
        "Maximum part file size before rolling.",
        default=128 << 20,
    )
    ROLLING_ROLLOVER_INTERVAL = ConfigOption(
        "sink.rolling-policy.rollover-interval",
        DURATION,
        "Maximum time a part file stays open before rolling (checked every "
        "'sink.rolling-policy.check-interval').",
        default=timedelta(minutes=30),
    )
    ROLLING_CHECK_INTERVAL = ConfigOption(
        "sink.rolling-policy.check-interval",
        DURATION,
        "How often the time-based rolling policies are checked.",
        default=timedelta(minutes=1),
    )
    ROLLING_INACTIVITY_INTERVAL = ConfigOption(
        "sink.rolling-policy.inactivity-interval",
        DURATION,
        "Maximum time a part file may receive no data before rolling.",
        default=timedelta(minutes=30),
    )
    AUTO_COMPACTION = ConfigOption(
        "auto-compaction",
        BOOLEAN,
        "Compact the files written in one checkpoint into larger ones; files are visible after compaction.",
        default=False,
    )
    COMPACTION_FILE_SIZE = ConfigOption(
        "compaction.file-size",
        MEMORY_SIZE,
        "Target file size of compaction; the rolling file size by default.",
    )
    SHUFFLE_BY_PARTITION = ConfigOption(
        "sink.shuffle-by-partition.enable",
        BOOLEAN,
        "Shuffle rows by their dynamic partition values before writing: fewer files, possible skew.",
        default=False,
    )
    PARTITION_COMMIT_TRIGGER = ConfigOption(
        "sink.partition-commit.trigger",
        ENUM("process-time", "partition-time"),
        "When a partition is committed: 'process-time' (machine time passes partition creation time + delay) "
        "or "
        "'partition-time' (the watermark passes the time extracted from the partition values + delay).",
        default="process-time",
    )
    PARTITION_COMMIT_DELAY = ConfigOption(
        "sink.partition-commit.delay",
        DURATION,
        "A partition is not committed before this delay: '1 d' for daily partitions, '1 h' for hourly ones.",
        default=timedelta(0),
    )
    PARTITION_COMMIT_WATERMARK_TIME_ZONE = ConfigOption(
        "sink.partition-commit.watermark-time-zone",
        STRING,
        "Time zone in which a TIMESTAMP_LTZ watermark is compared with partition time (e.g. "
        "'Asia/Shanghai').",
        default="UTC",
    )
    PARTITION_COMMIT_POLICY_KIND = ConfigOption(
        "sink.partition-commit.policy.kind",
        _CommaSetType(("metastore", "success-file", "custom")),
        "How a partition is committed: 'metastore' (add it to the metastore), 'success-file' (write a "
        "success "
        "file in its directory), 'custom' (a class); several comma-separated.",
    )
    PARTITION_COMMIT_POLICY_CLASS = ConfigOption(
        "sink.partition-commit.policy.class",
        STRING,
        "Class implementing PartitionCommitPolicy, for the 'custom' policy.",
        required_when=RequiredWhen(
            condition="'sink.partition-commit.policy.kind' contains 'custom'",
            applies=lambda o: "custom" in (o.get(FilesystemOptions.PARTITION_COMMIT_POLICY_KIND) or []),
            anchor="sink.partition-commit.policy.kind",
        ),
    )
    PARTITION_COMMIT_POLICY_CLASS_PARAMETERS = ConfigOption(
        "sink.partition-commit.policy.class.parameters",
        LIST,
        "Constructor arguments of the custom policy class, separated by semicolon.",
    )
    PARTITION_COMMIT_SUCCESS_FILE_NAME = ConfigOption(
        "sink.partition-commit.success-file.name",
        STRING,
        "File name of the 'success-file' policy.",
        default="_SUCCESS",
    )
    TIME_EXTRACTOR_KIND = ConfigOption(
        "partition.time-extractor.kind",
        ENUM("default", "custom"),
        "How time is extracted from partition values: 'default' (with 'partition.time-extractor.timestamp-"
        "pattern') or 'custom' (a class).",
        default="default",
    )
    TIME_EXTRACTOR_CLASS = ConfigOption(
        "partition.time-extractor.class",
        STRING,
        "Class implementing PartitionTimeExtractor, for the 'custom' extractor.",
        required_when=RequiredWhen(
            condition="'partition.time-extractor.kind' = 'custom'",
            applies=lambda o: o.get(FilesystemOptions.TIME_EXTRACTOR_KIND) == "custom",
            anchor="partition.time-extractor.kind",
        ),
    )
    TIME_EXTRACTOR_TIMESTAMP_PATTERN = ConfigOption(
        "partition.time-extractor.timestamp-pattern",
        STRING,
        "Builds a timestamp from partition fields: '$dt', '$year-$month-$day $hour:00:00', '$dt "
        "$hour:00:00'. "
        "By default the first partition field, as 'yyyy-MM-dd hh:mm:ss'.",
    )
    TIME_EXTRACTOR_TIMESTAMP_FORMATTER = ConfigOption(
        "partition.time-extractor.timestamp-formatter",
        STRING,
        "DateTimeFormatter pattern parsing the string built by the timestamp pattern.",
        default="yyyy-MM-dd HH:mm:ss",
    )
    SINK_PARALLELISM = KafkaOptions.SINK_PARALLELISM


FILESYSTEM = Factory(
    "filesystem",
    "Reads and writes files under a directory, partitioned Hive-style (`PARTITIONED BY`).",
    options=(*(v for v in vars(FilesystemOptions).values() if isinstance(v, ConfigOption)), *QUALITY_OPTIONS),
    source=True,
    sink=True,
    format_slots=(FormatSlot("value", FilesystemOptions.FORMAT),),
    formats=FORMATS,
    readable_metadata={
        "file.path": "STRING NOT NULL",
        "file.name": "STRING NOT NULL",
        "file.size": "BIGINT NOT NULL",
        "file.modification-time": "TIMESTAMP_LTZ(3) NOT NULL",
    },
)


class DatagenOptions:
    """Options of the `datagen` connector; `fields.#.*` are per physical column ('fields.id.kind')."""

    ROWS_PER_SECOND = ConfigOption(
        "rows-per-second", LONG, "Rows generated per second.", default=10000, constraint=at_least(1)
    )
    NUMBER_OF_ROWS = ConfigOption(
        "number-of-rows",
        LONG,
        "Total rows to generate (bounded); unlimited when unset.",
        constraint=at_least(0),
    )
    SCAN_PARALLELISM = KafkaOptions.SCAN_PARALLELISM
    KIND = ConfigOption(
        "fields.#.kind",
        ENUM("random", "sequence"),
        "Generator of the column: 'random' values or a 'sequence' from 'start' to 'end'.",
        default="random",
    )
    MIN = ConfigOption("fields.#.min", NUMBER, "Random generator: smallest value (numeric columns).")
    MAX = ConfigOption("fields.#.max", NUMBER, "Random generator: largest value (numeric columns).")
    MAX_PAST = ConfigOption(
        "fields.#.max-past",
        DURATION,
        "Random generator: largest distance into the past from now (timestamp columns).",
        default=timedelta(0),
    )
    LENGTH = ConfigOption(
        "fields.#.length",
        INT,
        "Random generator: length of strings, bytes and collections.",
        default=100,
        constraint=at_least(0),
    )
    VAR_LEN = ConfigOption(
        "fields.#.var-len", BOOLEAN, "Random generator: variable-length strings and bytes.", default=False
    )
    START = ConfigOption("fields.#.start", NUMBER, "Sequence generator: first value (required).")
    END = ConfigOption("fields.#.end", NUMBER, "Sequence generator: last value (required).")
    NULL_RATE = ConfigOption(
        "fields.#.null-rate", FLOAT, "Fraction of null values.", default=0.0, constraint=fraction()
    )


_RANDOM_ONLY = (
    DatagenOptions.MIN,
    DatagenOptions.MAX,
    DatagenOptions.MAX_PAST,
    DatagenOptions.LENGTH,
    DatagenOptions.VAR_LEN,
)
_SEQUENCE_ONLY = (DatagenOptions.START, DatagenOptions.END)


def _datagen_generators(check: Check) -> None:
    """Each generator kind takes its own options; sequences need both ends, bounds must be ordered."""
    options = check.options
    for column in check.table.physical_columns:
        kind_option = DatagenOptions.KIND.for_column(column.name)
        kind = options.get(kind_option)
        wrong = _SEQUENCE_ONLY if kind == "random" else _RANDOM_ONLY
        for template in wrong:
            option = template.for_column(column.name)
            if options.is_set(option):
                check.report(
                    "option-conflict",
                    f"Option '{option.key}' only applies to "
                    f"'{'random' if kind == 'sequence' else 'sequence'}' "
                    f"fields, but '{kind_option.key}' is '{kind}'.",
                    option.key,
                )
        if kind == "sequence":
            for template in _SEQUENCE_ONLY:
                option = template.for_column(column.name)
                if not options.is_set(option):
                    check.report(
                        "missing-option",
                        f"Could not find required property '{option.key}' for sequence generator.",
                        kind_option.key,
                    )
        for low, high in (
            (DatagenOptions.MIN, DatagenOptions.MAX),
            (DatagenOptions.START, DatagenOptions.END),
        ):
            low_value = options.get(low.for_column(column.name))
            high_value = options.get(high.for_column(column.name))
            if low_value is not None and high_value is not None and low_value > high_value:
                check.report(
                    "invalid-option-value",
                    f"'{low.for_column(column.name).key}' ({low_value}) must not be greater than "
                    f"'{high.for_column(column.name).key}' ({high_value}).",
                    low.for_column(column.name).key,
                )


DATAGEN = Factory(
    "datagen",
    "Generates rows: random values or sequences per column, at 'rows-per-second', optionally bounded.",
    options=tuple(v for v in vars(DatagenOptions).values() if isinstance(v, ConfigOption)),
    source=True,
    sink=False,
    rules=(_datagen_generators,),
)


class PrintOptions:
    """Options of the `print` connector."""

    PRINT_IDENTIFIER = ConfigOption("print-identifier", STRING, "Prefix of every printed row.")
    STANDARD_ERROR = ConfigOption(
        "standard-error", BOOLEAN, "Print to standard error instead of standard output.", default=False
    )
    SINK_PARALLELISM = KafkaOptions.SINK_PARALLELISM


PRINT = Factory(
    "print",
    "Prints every row, with its change kind (+I, -U, +U, -D), to standard output.",
    options=(*(v for v in vars(PrintOptions).values() if isinstance(v, ConfigOption)), *QUALITY_OPTIONS),
    source=False,
    sink=True,
)

BLACKHOLE = Factory(
    "blackhole",
    "Swallows every row; for tests and benchmarks.",
    options=QUALITY_OPTIONS,
    source=False,
    sink=True,
)

CONNECTORS = (KAFKA, UPSERT_KAFKA, FILESYSTEM, DATAGEN, PRINT, BLACKHOLE)

FACTORIES = {f.identifier: f for f in CONNECTORS}
