"""The `flink-kafka` source options (Flink option names) parsed into `SourceSettings`.

Parsing happens once, where the source is loaded; the runner and the executors get the settings pickled,
so this module stays free of Kafka and Spark imports, and imports the option declarations only to parse.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from enum import Enum
from typing import TYPE_CHECKING, TypeVar

from connector.connectors.kafka.errors import KafkaSourceError
from connector.connectors.kafka.java_properties import librdkafka_properties

if TYPE_CHECKING:
    from connector.options.declarations import ConfigOption

T = TypeVar("T")
# Properties that configure Flink's KafkaSource itself, not the Kafka client; never passed to librdkafka.
FLINK_SOURCE_PROPERTIES = frozenset(
    {
        "commit.offsets.on.checkpoint",
        "partition.discovery.interval.ms",
        "client.id.prefix",
        "register.consumer.metrics",
    }
)
# Java-client properties without a librdkafka equivalent (the source reads raw bytes and bounds its own
# batches), dropped rather than failing the client.
JAVA_ONLY_PROPERTIES = frozenset(
    {
        "key.deserializer",
        "value.deserializer",
        "max.poll.records",
        "interceptor.classes",
        "default.api.timeout.ms",
        "exclude.internal.topics",
    }
)
# Settings of Kafka's old Scala clients, which Kafka's Java clients ignore (with a log line) and Flink passes on:
# dropped, and `validate` warns that they do nothing (`factory._client_properties`).
IGNORED_PROPERTIES = frozenset(
    {"zookeeper.connect", "zookeeper.connection.timeout.ms", "zookeeper.session.timeout.ms", "zookeeper.sync.time.ms"}
)
# Set by the source per client; the user's values are read into SourceSettings instead.
MANAGED_PROPERTIES = frozenset({"group.id", "auto.offset.reset", "enable.auto.commit", "isolation.level"})
# 'properties.*' no Kafka client of the project is given (sources and sinks alike): Flink's source options, the
# Java-only ones, what the source manages per client, and Java's serializer classes.
NOT_CLIENT_PROPERTIES = (
    FLINK_SOURCE_PROPERTIES
    | JAVA_ONLY_PROPERTIES
    | IGNORED_PROPERTIES
    | MANAGED_PROPERTIES
    | {"key.serializer", "value.serializer"}
)
# Set by kafka-sql's engine, never by users: the value fields the reader decodes from JSON (`json_arrow`), and the
# optional columns (`OPTIONAL_COLUMNS`, comma-separated) the reader produces (default: all).
VALUE_JSON_FIELDS = "kafka-sql.value-json-fields"
RECORD_COLUMNS = "kafka-sql.record-columns"
# The columns of the source's schema (`records.SCHEMA`) a reader may leave out when asked to (the others locate a
# record, or hold its value): kafka-sql's engine asks for those its table reads, since every column of every record
# costs the reader building it and the JVM copying it into Spark's rows (a fifth of the JVM's time in a JSON
# pipeline, measured with JFR).
OPTIONAL_COLUMNS = ("key", "timestamp", "timestamp_type", "headers", "leader_epoch")


class StartupMode(Enum):
    EARLIEST = "earliest-offset"
    LATEST = "latest-offset"
    GROUP_OFFSETS = "group-offsets"
    TIMESTAMP = "timestamp"
    SPECIFIC_OFFSETS = "specific-offsets"


class BoundedMode(Enum):
    UNBOUNDED = "unbounded"
    LATEST = "latest-offset"
    GROUP_OFFSETS = "group-offsets"
    TIMESTAMP = "timestamp"
    SPECIFIC_OFFSETS = "specific-offsets"


class OffsetReset(Enum):
    """`properties.auto.offset.reset` as Flink reads it for group-offsets (Kafka's OffsetResetStrategy)."""

    EARLIEST = "earliest"
    LATEST = "latest"
    NONE = "none"


@dataclass(frozen=True)
class Subscription:
    """`topic` (one name or a `;`-separated list) or `topic-pattern` (a Java regex, whole-name match)."""

    topics: tuple[str, ...] = ()
    pattern: str | None = None

    def matches(self, topic: str) -> bool:
        if self.pattern is not None:
            return re.fullmatch(self.pattern, topic) is not None
        return topic in self.topics

    def __str__(self) -> str:
        return f"topic-pattern '{self.pattern}'" if self.pattern is not None else f"topic '{';'.join(self.topics)}'"


@dataclass(frozen=True)
class SourceSettings:
    """The source options, parsed once; everything the runner and the executors need to know."""

    bootstrap_servers: str
    subscription: Subscription
    group_id: str | None = None
    client_properties: Mapping[str, str] = field(default_factory=dict)  # passed to librdkafka as-is
    startup_mode: StartupMode = StartupMode.GROUP_OFFSETS
    startup_specific_offsets: Mapping[int, int] = field(default_factory=dict)
    startup_timestamp_ms: int | None = None
    offset_reset: OffsetReset = OffsetReset.NONE
    bounded_mode: BoundedMode = BoundedMode.UNBOUNDED
    bounded_specific_offsets: Mapping[int, int] = field(default_factory=dict)
    bounded_timestamp_ms: int | None = None
    discovery_interval_ms: int = 5 * 60 * 1000  # 0: discovery disabled
    max_records_per_batch: int | None = None
    fail_on_data_loss: bool = True
    min_partitions: int | None = None
    poll_timeout_ms: int = 2 * 60 * 1000
    retry_timeout_ms: int = 3 * 60 * 1000  # planning requests failing with a retriable error
    end_of_input_row: bool = False  # see connector.connectors.kafka.source: set only by an explicit option
    commit_on_checkpoint: bool = True
    enable_auto_commit: bool = False
    read_committed: bool = False
    client_id_prefix: str = "flink-kafka-source"
    # kafka-sql's engine only: the value's JSON fields the reader decodes (`connector.formats.json_arrow`)
    value_json_fields: str | None = None
    record_columns: tuple[str, ...] | None = None  # None: all of them

    @property
    def bounded(self) -> bool:
        return self.bounded_mode is not BoundedMode.UNBOUNDED

    def client_config(self, role: str) -> dict[str, str]:
        """Settings every Kafka client of the source shares; `role` names the client in broker logs."""
        return {
            "bootstrap.servers": self.bootstrap_servers,
            "client.id": f"{self.client_id_prefix}-{role}",
            **self.client_properties,
        }

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> SourceSettings:
        """Parse the source options (keys as in Flink's `WITH` clause); raise KafkaSourceError if invalid.

        Types, defaults and value syntax come from the connector's declarations (`KafkaOptions`); the
        rules here are the ones the source itself depends on.
        """
        # Imported here: the source's runner and executors get settings already parsed (pickled), and
        # importing the option declarations costs every such Python process tens of milliseconds.
        from connector.connectors.kafka.options import KafkaOptions

        opts = {str(key).lower(): str(value) for key, value in options.items() if value is not None}
        bootstrap = opts.get("properties.bootstrap.servers", "").strip()
        if not bootstrap:
            raise KafkaSourceError("Option 'properties.bootstrap.servers' is required, e.g. 'localhost:9092'.")
        properties = {
            key[len("properties.") :]: value
            for key, value in opts.items()
            if key.startswith("properties.") and key != "properties.bootstrap.servers"
        }
        subscription = _subscription(opts)
        startup_mode: str | None = _value(opts, KafkaOptions.SCAN_STARTUP_MODE)
        bounded_mode: str | None = _value(opts, KafkaOptions.SCAN_BOUNDED_MODE)
        startup, bounded = StartupMode(startup_mode), BoundedMode(bounded_mode)
        startup_offsets: dict[int, int] | None = _companion(
            opts, startup.value, "specific-offsets", KafkaOptions.SCAN_STARTUP_SPECIFIC_OFFSETS, subscription
        )
        bounded_offsets: dict[int, int] | None = _companion(
            opts, bounded.value, "specific-offsets", KafkaOptions.SCAN_BOUNDED_SPECIFIC_OFFSETS, subscription
        )
        fail_on_data_loss: bool | None = _value(opts, KafkaOptions.FAIL_ON_DATA_LOSS)
        group_id = properties.get("group.id") or None
        if startup is StartupMode.GROUP_OFFSETS and group_id is None:
            raise KafkaSourceError(
                "'scan.startup.mode' is 'group-offsets' (Flink's default) but 'properties.group.id' is not "
                "set: set the consumer group whose committed offsets to start from, or choose another "
                "'scan.startup.mode' (earliest-offset, latest-offset, timestamp, specific-offsets)."
            )
        if bounded is BoundedMode.GROUP_OFFSETS and group_id is None:
            raise KafkaSourceError("'scan.bounded.mode' is 'group-offsets' but 'properties.group.id' is not set.")
        discovery = _value(opts, KafkaOptions.PARTITION_DISCOVERY_INTERVAL)
        poll_timeout = _value(opts, KafkaOptions.POLL_TIMEOUT)
        end_watermark: bool | None = _value(opts, KafkaOptions.BOUNDED_END_WATERMARK)
        return cls(
            bootstrap_servers=bootstrap,
            subscription=subscription,
            group_id=group_id,
            client_properties=_client_properties(properties),
            startup_mode=startup,
            startup_specific_offsets=startup_offsets or {},
            startup_timestamp_ms=_companion(
                opts, startup.value, "timestamp", KafkaOptions.SCAN_STARTUP_TIMESTAMP_MILLIS, subscription
            ),
            offset_reset=_offset_reset(properties.get("auto.offset.reset")),
            bounded_mode=bounded,
            bounded_specific_offsets=bounded_offsets or {},
            bounded_timestamp_ms=_companion(
                opts, bounded.value, "timestamp", KafkaOptions.SCAN_BOUNDED_TIMESTAMP_MILLIS, subscription
            ),
            # Flink forces discovery off for bounded sources; '0' (or less) disables it.
            discovery_interval_ms=0 if bounded is not BoundedMode.UNBOUNDED else _millis(discovery),
            max_records_per_batch=_value(opts, KafkaOptions.MAX_RECORDS_PER_BATCH),
            fail_on_data_loss=fail_on_data_loss is not False,
            min_partitions=_value(opts, KafkaOptions.MIN_PARTITIONS),
            poll_timeout_ms=max(_millis(poll_timeout), 1),
            retry_timeout_ms=_millis(_value(opts, KafkaOptions.RETRY_TIMEOUT)),
            # kafka-sql's engine sets it for bounded tables with a WATERMARK: a plain `flink-kafka` read gets no
            # extra row unless it asks for one.
            end_of_input_row=KafkaOptions.BOUNDED_END_WATERMARK.key in opts
            and end_watermark is True
            and bounded is not BoundedMode.UNBOUNDED,
            commit_on_checkpoint=_property_flag(properties, "commit.offsets.on.checkpoint", True),
            enable_auto_commit=_property_flag(properties, "enable.auto.commit", False),
            read_committed=_isolation_read_committed(properties.get("isolation.level")),
            client_id_prefix=properties.get("client.id.prefix") or group_id or "flink-kafka-source",
            value_json_fields=opts.get(VALUE_JSON_FIELDS),
            record_columns=_record_columns(opts.get(RECORD_COLUMNS)),
        )


def _record_columns(text: str | None) -> tuple[str, ...] | None:
    if text is None:
        return None
    columns = tuple(name.strip() for name in text.split(",") if name.strip())
    unknown = [name for name in columns if name not in OPTIONAL_COLUMNS]
    if unknown:
        raise KafkaSourceError(
            f"Option '{RECORD_COLUMNS}' names unknown columns {', '.join(unknown)}; "
            f"the optional columns are {', '.join(OPTIONAL_COLUMNS)}."
        )
    return columns


def _client_properties(properties: Mapping[str, str]) -> dict[str, str]:
    """The properties every client of the source gets, in librdkafka's terms (`java_properties`)."""
    passed = {
        key: value
        for key, value in properties.items()
        if key not in FLINK_SOURCE_PROPERTIES | JAVA_ONLY_PROPERTIES | IGNORED_PROPERTIES | MANAGED_PROPERTIES
    }
    try:
        return librdkafka_properties(passed)
    except ValueError as error:
        raise KafkaSourceError(str(error)) from None


def is_bounded(options: Mapping[str, str]) -> bool:
    """Whether a table with these options is a bounded scan (`scan.bounded.mode` other than unbounded)."""
    from connector.connectors.kafka.options import KafkaOptions  # see SourceSettings.from_options

    opts = {str(k).lower(): str(v) for k, v in options.items()}
    mode: str | None = _value(opts, KafkaOptions.SCAN_BOUNDED_MODE)
    return mode != BoundedMode.UNBOUNDED.value


def _value(opts: Mapping[str, str], option: ConfigOption[T]) -> T | None:
    """The typed value of a declared option, or its declared default."""
    raw = opts.get(option.key)
    if raw is None:
        return option.default
    try:
        value = option.type.parse(raw, option.key)
    except ValueError as error:
        raise KafkaSourceError(str(error)) from None
    rule = option.constraint
    if rule is not None and not rule.test(value):
        raise KafkaSourceError(rule.message.format(value=raw, key=option.key, doc=rule.doc))
    return value


def _millis(duration: timedelta | None) -> int:
    return max(0, int(duration.total_seconds() * 1000)) if duration is not None else 0


def _subscription(opts: Mapping[str, str]) -> Subscription:
    topic, pattern = opts.get("topic"), opts.get("topic-pattern")
    if topic is not None and pattern is not None:
        raise KafkaSourceError("Option 'topic' and 'topic-pattern' shouldn't be set together.")
    if pattern is not None:
        try:
            re.compile(pattern)
        except re.error as error:
            raise KafkaSourceError(f"Invalid 'topic-pattern' '{pattern}': {error}.") from None
        return Subscription(pattern=pattern)
    topics = tuple(name.strip() for name in (topic or "").split(";") if name.strip())
    if not topics:
        raise KafkaSourceError("Either 'topic' or 'topic-pattern' must be set.")
    return Subscription(topics=topics)


def _companion(
    opts: Mapping[str, str], mode: str, needs: str, option: ConfigOption[T], subscription: Subscription
) -> T | None:
    """The option a startup/bounded mode requires (`...specific-offsets`, `...timestamp-millis`)."""
    if mode != needs:
        return None
    kind = option.key.split(".")[1]
    if option.key not in opts:
        raise KafkaSourceError(f"'{option.key}' is required in '{needs}' {kind} mode but missing.")
    if needs == "specific-offsets" and (subscription.pattern is not None or len(subscription.topics) != 1):
        raise KafkaSourceError("Currently Kafka source only supports specific offset for single topic.")
    return _value(opts, option)


def _property_flag(properties: Mapping[str, str], key: str, default: bool) -> bool:
    raw = properties.get(key)
    if raw is None:
        return default
    from connector.options.types import BOOLEAN  # see SourceSettings.from_options

    try:
        return BOOLEAN.parse(raw, f"properties.{key}")
    except ValueError as error:
        raise KafkaSourceError(str(error)) from None


def _offset_reset(raw: str | None) -> OffsetReset:
    if raw is None:
        return OffsetReset.NONE
    for member in OffsetReset:
        if member.value == raw.strip().lower():
            return member
    raise KafkaSourceError(
        f"auto.offset.reset can not be set to {raw}. Valid values: [latest,earliest,none] "
        "(option 'properties.auto.offset.reset')."
    )


def _isolation_read_committed(raw: str | None) -> bool:
    """Java clients (and so Flink) default to read_uncommitted; librdkafka would default to read_committed."""
    if raw is None or raw.strip().lower() == "read_uncommitted":
        return False
    if raw.strip().lower() == "read_committed":
        return True
    raise KafkaSourceError(
        f"Invalid value '{raw}' for option 'properties.isolation.level'; "
        "expected 'read_uncommitted' or 'read_committed'."
    )
