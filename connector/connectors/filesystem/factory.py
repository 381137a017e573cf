"""The `filesystem` connector's factory (Flink's FileSystemConnectorOptions)."""

from __future__ import annotations

from datetime import timedelta

from connector.catalog.model import Table
from connector.diagnostics import did_you_mean
from connector.options import shared
from connector.options.declarations import ConfigOption, RequiredWhen, ResolvedOptions
from connector.options.factory import Factory, FormatSlot, SourceBehaviour
from connector.options.types import BOOLEAN, DURATION, ENUM, LIST, MEMORY_SIZE, STRING, OptionType
from connector.quality.options import QUALITY_OPTIONS


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
    SINK_PARALLELISM = shared.SINK_PARALLELISM


def _describe_source(table: Table, opts: ResolvedOptions) -> SourceBehaviour:
    monitor = opts.get(FilesystemOptions.SOURCE_MONITOR_INTERVAL)
    path = opts.get(FilesystemOptions.PATH)
    if monitor:
        return SourceBehaviour(False, {"start": f"files under {path}", "stop": f"unbounded, new files every {monitor}"})
    return SourceBehaviour(True, {"start": f"files under {path}", "stop": "the files present at start, then finish"})


def _describe_sink(table: Table, opts: ResolvedOptions) -> dict[str, str]:
    return {
        "path": str(opts.get(FilesystemOptions.PATH)),
        "format": str(opts.get(FilesystemOptions.FORMAT)),
        "delivery": "exactly-once (Spark file sink log)",
    }


FACTORY = Factory(
    "filesystem",
    "Reads and writes files under a directory, partitioned Hive-style (`PARTITIONED BY`).",
    options=(*(v for v in vars(FilesystemOptions).values() if isinstance(v, ConfigOption)), *QUALITY_OPTIONS),
    reader="connector.connectors.filesystem.reading",
    writer="connector.connectors.filesystem.writing",
    describe_source=_describe_source,
    describe_sink=_describe_sink,
    format_slots=(FormatSlot("value", FilesystemOptions.FORMAT),),
    carries="files",
    readable_metadata={
        "file.path": "STRING NOT NULL",
        "file.name": "STRING NOT NULL",
        "file.size": "BIGINT NOT NULL",
        "file.modification-time": "TIMESTAMP_LTZ(3) NOT NULL",
    },
)
