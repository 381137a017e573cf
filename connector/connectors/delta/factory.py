"""The `delta` connector's factory: a Delta Lake table at 'table-path' as a sink, as Flink's Delta connector
(delta-io's flink-delta) declares it, appended to, or upserted by PRIMARY KEY (which Flink's Delta sink lacks).

Why delta-rs: Delta's Spark jars (delta-spark 4.4.0, the newest) are built for Spark 4.2 and fail on the
project's Spark 4.3 as soon as they read a table's state (`NoSuchMethodError: LogicalRDD.<init>`, measured on
appends and MERGE), and the delta-spark wheel requires pyspark <= 4.2.0. The `deltalake` package (delta-rs)
writes the same Delta protocol with its own transaction log code, so the table is read by Spark, Flink, Trino,
DuckDB and every other Delta reader.
"""

from __future__ import annotations

from connector.catalog.model import Table
from connector.connectors.arrow_batches import table_types
from connector.options.declarations import ConfigOption, ResolvedOptions
from connector.options.factory import Factory
from connector.options.types import INT, STRING
from connector.quality.options import QUALITY_OPTIONS


class DeltaOptions:
    """Options of the `delta` connector (flink-delta's names and meanings)."""

    TABLE_PATH = ConfigOption(
        "table-path",
        STRING,
        "Path of the Delta table: a local directory or an object store URI (s3://, gs://, abfss://, with the "
        "store's credentials from the environment, as delta-rs reads them). Created from the table's columns, "
        "PRIMARY KEY and PARTITIONED BY when it does not exist; an existing table must have the declared columns.",
        required=True,
    )
    SINK_PARALLELISM = ConfigOption(
        "sink.parallelism",
        INT,
        "Flink: the sink's parallelism. Here each micro-batch is one Delta commit made by the driver.",
    )


def _describe_sink(table: Table, opts: ResolvedOptions) -> dict[str, str]:
    how = f"upsert by {', '.join(table.primary_key)} (MERGE)" if table.primary_key else "append"
    parts = f", partitioned by {', '.join(table.partitioned_by)}" if table.partitioned_by else ""
    path = opts.get(DeltaOptions.TABLE_PATH)
    return {"to": f"Delta table {path} ({how}{parts}, one commit per micro-batch)"}


FACTORY = Factory(
    "delta",
    "Writes rows to a Delta Lake table: appended, or upserted by PRIMARY KEY with deletes; each micro-batch is one "
    "Delta commit, exactly once per checkpoint (Delta's transaction ids).",
    options=(*(v for v in vars(DeltaOptions).values() if isinstance(v, ConfigOption)), *QUALITY_OPTIONS),
    writer="connector.connectors.delta.writing",
    describe_sink=_describe_sink,
    rules=(table_types,),
    updates="with-primary-key",
)
