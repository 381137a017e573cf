"""The `jdbc` connector's factory: Flink's JDBC connector options (flink-connector-jdbc), as a sink and as the
table of lookup joins.

PostgreSQL is the database supported (its JDBC driver, `org.postgresql:postgresql`, is resolved from Maven Central
for the session). As a source, the table is read once (bounded), as Flink's JDBC source reads it (`scan.py`).
"""

from __future__ import annotations

from datetime import timedelta

from sqlglot import exp

from connector.catalog.model import Table
from connector.catalog.types import flink_sql, type_root
from connector.options.declarations import ConfigOption, ResolvedOptions
from connector.options.factory import Check, Factory, SourceBehaviour
from connector.options.types import BOOLEAN, DURATION, ENUM, INT, LONG, STRING
from connector.quality.options import QUALITY_OPTIONS

POSTGRES_DRIVER = "org.postgresql:postgresql:42.7.14"
_DRIVERS = {"postgresql": ("org.postgresql.Driver", POSTGRES_DRIVER)}


class JdbcOptions:
    """Options of the `jdbc` connector (Flink's names, defaults and meanings)."""

    URL = ConfigOption("url", STRING, "The JDBC database url, e.g. 'jdbc:postgresql://host:5432/db'.", required=True)
    TABLE_NAME = ConfigOption(
        "table-name", STRING, "The name of the JDBC table to write to or look rows up in.", required=True
    )
    DRIVER = ConfigOption(
        "driver", STRING, "The class name of the JDBC driver; derived from the url when not set."
    )
    USERNAME = ConfigOption("username", STRING, "The JDBC user name.")
    PASSWORD = ConfigOption("password", STRING, "The JDBC password.")
    CONNECTION_MAX_RETRY_TIMEOUT = ConfigOption(
        "connection.max-retry-timeout",
        DURATION,
        "Maximum timeout between retries of connecting.",
        default=timedelta(seconds=60),
    )
    SINK_BUFFER_FLUSH_MAX_ROWS = ConfigOption(
        "sink.buffer-flush.max-rows",
        INT,
        "Flink: the most rows buffered before a flush. Each micro-batch is written in one transaction here, so "
        "the buffer is the micro-batch.",
        default=100,
    )
    SINK_BUFFER_FLUSH_INTERVAL = ConfigOption(
        "sink.buffer-flush.interval",
        DURATION,
        "Flink: the flush interval of buffered rows. Each micro-batch is written in one transaction here.",
        default=timedelta(seconds=1),
    )
    SINK_MAX_RETRIES = ConfigOption(
        "sink.max-retries", INT, "The most times a failed write of a micro-batch is retried.", default=3
    )
    SINK_PARALLELISM = ConfigOption("sink.parallelism", INT, "Flink: the sink's parallelism (Spark's partitions).")
    SCAN_PARTITION_COLUMN = ConfigOption(
        "scan.partition.column",
        STRING,
        "The column that splits the read into 'scan.partition.num' ranges, each read by its own task (a numeric "
        "column; set with the other 'scan.partition.*' options).",
    )
    SCAN_PARTITION_NUM = ConfigOption("scan.partition.num", INT, "The number of ranges (tasks) of a partitioned read.")
    SCAN_PARTITION_LOWER_BOUND = ConfigOption(
        "scan.partition.lower-bound", LONG, "The smallest value of the first range of a partitioned read."
    )
    SCAN_PARTITION_UPPER_BOUND = ConfigOption(
        "scan.partition.upper-bound", LONG, "The largest value of the last range of a partitioned read."
    )
    SCAN_FETCH_SIZE = ConfigOption(
        "scan.fetch-size",
        INT,
        "Rows fetched from the database per round trip while reading; 0: the driver's choice.",
        default=0,
    )
    SCAN_AUTO_COMMIT = ConfigOption(
        "scan.auto-commit",
        BOOLEAN,
        "Flink: the JDBC driver's auto-commit while reading. Here the read is one read-only transaction (PostgreSQL "
        "streams rows with a cursor only inside one).",
        default=True,
    )
    LOOKUP_CACHE = ConfigOption(
        "lookup.cache",
        ENUM("NONE", "PARTIAL"),
        "Flink: the lookup cache. Here a lookup join reads the table once per micro-batch, fresher than any cache.",
        default="NONE",
    )
    LOOKUP_PARTIAL_CACHE_MAX_ROWS = ConfigOption(
        "lookup.partial-cache.max-rows",
        LONG,
        "Flink: the most rows of the lookup cache. A micro-batch here holds the table read once.",
        deprecated_keys=("lookup.cache.max-rows",),
    )
    LOOKUP_PARTIAL_CACHE_EXPIRE_AFTER_WRITE = ConfigOption(
        "lookup.partial-cache.expire-after-write",
        DURATION,
        "Flink: how long a cached row lives. Here rows are read again every micro-batch.",
        deprecated_keys=("lookup.cache.ttl",),
    )
    LOOKUP_PARTIAL_CACHE_EXPIRE_AFTER_ACCESS = ConfigOption(
        "lookup.partial-cache.expire-after-access",
        DURATION,
        "Flink: how long an unread cached row lives. Here rows are read again every micro-batch.",
    )
    LOOKUP_PARTIAL_CACHE_CACHE_MISSING_KEY = ConfigOption(
        "lookup.partial-cache.cache-missing-key",
        BOOLEAN,
        "Flink: whether keys without a row are cached too. Here a key missing in a micro-batch's read is missing.",
        default=True,
        deprecated_keys=("lookup.cache.caching-missing-key",),
    )
    LOOKUP_MAX_RETRIES = ConfigOption(
        "lookup.max-retries",
        INT,
        "Flink: the most times a failed lookup is retried. Here the table is read once per micro-batch, and a "
        "failed read fails the micro-batch with the database's reason.",
        default=3,
    )


def driver_of(url: str) -> tuple[str, str] | None:
    """(driver class, Maven coordinates) of a supported JDBC url, or None."""
    parts = url.split(":")
    return _DRIVERS.get(parts[1]) if len(parts) > 2 and parts[0] == "jdbc" else None


def _supported_database(check: Check) -> None:
    url = check.options.get(JdbcOptions.URL)
    if url is not None and driver_of(url) is None:
        check.report(
            "unsupported-option",
            f"JDBC url '{url}': only PostgreSQL ('jdbc:postgresql://host:port/database') is supported yet.",
            JdbcOptions.URL.key,
        )


# Flink's PostgresDialect.supportedTypes (BINARY(n) is not among them; BYTES is VARBINARY).
_POSTGRES_TYPES = (
    "STRING", "BOOLEAN", "DECIMAL", "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "FLOAT", "DOUBLE", "DATE", "TIME",
    "TIMESTAMP", "TIMESTAMP_LTZ", "ARRAY",
)  # fmt: skip


def _supported_types(check: Check) -> None:
    for column in check.table.columns:
        if not column.persisted or column.data_type is None:
            continue
        root = type_root(column.data_type)
        binary = root == "BINARY" and column.data_type.this == exp.DType.VARBINARY
        if root not in _POSTGRES_TYPES and not binary:
            check.report(
                "unsupported-type",
                f"The PostgreSQL dialect doesn't support type: {flink_sql(column.data_type)} (column "
                f"'{column.name}').",
                position=column.position,
            )


_SCAN_PARTITION = (
    JdbcOptions.SCAN_PARTITION_COLUMN, JdbcOptions.SCAN_PARTITION_NUM, JdbcOptions.SCAN_PARTITION_LOWER_BOUND,
    JdbcOptions.SCAN_PARTITION_UPPER_BOUND,
)  # fmt: skip


def _scan_partitioning(check: Check) -> None:
    """Flink's rule: the 'scan.partition.*' options are all set or none; the bounds in order."""
    given = [o for o in _SCAN_PARTITION if check.options.is_set(o)]
    if given and len(given) != len(_SCAN_PARTITION):
        missing = ", ".join(f"'{o.key}'" for o in _SCAN_PARTITION if o not in given)
        check.report(
            "missing-option",
            f"Either all or none of the 'scan.partition.*' options must be set; missing: {missing}.",
            given[0].key,
        )
        return
    lower, upper = check.options.get(JdbcOptions.SCAN_PARTITION_LOWER_BOUND), check.options.get(
        JdbcOptions.SCAN_PARTITION_UPPER_BOUND
    )
    if lower is not None and upper is not None and lower > upper:
        check.report(
            "invalid-option-value",
            f"'scan.partition.lower-bound' ({lower}) must not be larger than 'scan.partition.upper-bound' ({upper}).",
            JdbcOptions.SCAN_PARTITION_LOWER_BOUND.key,
        )
    number = check.options.get(JdbcOptions.SCAN_PARTITION_NUM)
    if number is not None and number < 1:
        check.report(
            "invalid-option-value", "'scan.partition.num' must be at least 1.", JdbcOptions.SCAN_PARTITION_NUM.key
        )


def _describe_source(table: Table, opts: ResolvedOptions) -> SourceBehaviour:
    column = opts.get(JdbcOptions.SCAN_PARTITION_COLUMN)
    number = opts.get(JdbcOptions.SCAN_PARTITION_NUM)
    split = f", split by {column} into {number} ranges" if column else ""
    name = opts.get(JdbcOptions.TABLE_NAME)
    return SourceBehaviour(True, {"start": f"every row of {name}{split}", "stop": "bounded: the rows, then finish"})


def _describe_sink(table: Table, opts: ResolvedOptions) -> dict[str, str]:
    how = f"upsert by {', '.join(table.primary_key)}" if table.primary_key else "append"
    name = opts.get(JdbcOptions.TABLE_NAME)
    return {"to": f"{name} ({how}, one transaction per micro-batch)"}


FACTORY = Factory(
    "jdbc",
    "Writes rows to a database table over JDBC (PostgreSQL): appended, or upserted by PRIMARY KEY; reads the table "
    "once as a bounded source; looks rows up for lookup joins (FOR SYSTEM_TIME AS OF a processing time).",
    options=(*(v for v in vars(JdbcOptions).values() if isinstance(v, ConfigOption)), *QUALITY_OPTIONS),
    reader="connector.connectors.jdbc.reading",
    writer="connector.connectors.jdbc.writing",
    lookup="connector.connectors.jdbc.lookup",
    describe_source=_describe_source,
    describe_sink=_describe_sink,
    rules=(_supported_database, _supported_types),
    source_rules=(_scan_partitioning,),
    spark_packages=(POSTGRES_DRIVER,),
    updates="with-primary-key",
)
