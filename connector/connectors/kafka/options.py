"""Options of the `kafka` and `upsert-kafka` connectors, with Flink's names, defaults and error messages
(flink-connector-kafka 3.x-5.x); options marked Spark-only expose Spark Kafka-source knobs Flink lacks."""

from __future__ import annotations

import re
from datetime import timedelta

from connector.diagnostics import did_you_mean
from connector.options import shared
from connector.options.declarations import ConfigOption, RequiredWhen, ResolvedOptions, at_least
from connector.options.types import BOOLEAN, DURATION, ENUM, INT, LIST, LONG, STRING, OptionType

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
    SCAN_PARALLELISM = shared.SCAN_PARALLELISM
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
    SINK_PARALLELISM = shared.SINK_PARALLELISM
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
    RETRY_TIMEOUT = ConfigOption(
        "scan.retry-timeout",
        DURATION,
        "How long the planning of a micro-batch retries Kafka requests that fail with a retriable error (a "
        "broker restarting or unreachable, leader changes, fenced leader epochs, a coordinator loading), with "
        "backoff, before the query fails; Java clients, and so Flink, retry these too.",
        default=timedelta(minutes=3),
        spark_only=True,
    )
