"""The `jdbc` connector's factory: Flink's JDBC connector options (flink-connector-jdbc), as a sink.

PostgreSQL is the database supported (its JDBC driver, `org.postgresql:postgresql`, is resolved from Maven Central
for the session); reading a JDBC table (scan, lookup joins) is not supported yet.
"""

from __future__ import annotations

from datetime import timedelta

from sqlglot import exp

from connector.options.declarations import ConfigOption, ResolvedOptions
from connector.options.factory import Check, Factory
from connector.options.types import DURATION, INT, STRING
from connector.quality.options import QUALITY_OPTIONS
from connector.sql.catalog import Table
from connector.sql.types import flink_sql, type_root

POSTGRES_DRIVER = "org.postgresql:postgresql:42.7.14"
_DRIVERS = {"postgresql": ("org.postgresql.Driver", POSTGRES_DRIVER)}


class JdbcOptions:
    """Options of the `jdbc` connector (Flink's names, defaults and meanings)."""

    URL = ConfigOption("url", STRING, "The JDBC database url, e.g. 'jdbc:postgresql://host:5432/db'.", required=True)
    TABLE_NAME = ConfigOption("table-name", STRING, "The name of the JDBC table to write to.", required=True)
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


def _describe_sink(table: Table, opts: ResolvedOptions) -> dict[str, str]:
    how = f"upsert by {', '.join(table.primary_key)}" if table.primary_key else "append"
    name = opts.get(JdbcOptions.TABLE_NAME)
    return {"to": f"{name} ({how}, one transaction per micro-batch)"}


FACTORY = Factory(
    "jdbc",
    "Writes rows to a database table over JDBC (PostgreSQL): appended, or upserted by PRIMARY KEY.",
    options=(*(v for v in vars(JdbcOptions).values() if isinstance(v, ConfigOption)), *QUALITY_OPTIONS),
    writer="connector.connectors.jdbc.writing",
    describe_sink=_describe_sink,
    rules=(_supported_database, _supported_types),
    spark_packages=(POSTGRES_DRIVER,),
)
