"""The `iceberg` connector's factory: an Apache Iceberg table as a sink, with the table options of Flink's Iceberg
connector ('connector' = 'iceberg', 'catalog-name', 'catalog-type', 'catalog-database', 'catalog-table',
'warehouse', ...).

Why pyiceberg: Iceberg's Spark runtime (iceberg-spark-runtime-4.1 1.12.0, the newest) does not load on the project's
Spark 4.3 (`IncompatibleClassChangeError: SparkView can not implement View`, measured), so tables are written by
pyiceberg, Iceberg's Python implementation. pyiceberg has no Hadoop catalog; `hadoop_catalog.py` gives it Java's
layout. The Hive and REST catalogs and custom 'catalog-impl' classes are refused for now: pyiceberg has clients for
them, but no Hive metastore or REST catalog server can be run here to test against.
"""

from __future__ import annotations

from pathlib import Path

from connector.catalog.model import Table
from connector.connectors.arrow_batches import table_types
from connector.options.declarations import ConfigOption, ResolvedOptions
from connector.options.factory import Check, Factory
from connector.options.types import BOOLEAN, INT, STRING
from connector.quality.options import QUALITY_OPTIONS


class IcebergOptions:
    """Options of the `iceberg` connector (Iceberg's Flink connector names, defaults and meanings)."""

    CATALOG_NAME = ConfigOption(
        "catalog-name", STRING, "User-specified catalog name; required, the connector has no default.", required=True
    )
    CATALOG_TYPE = ConfigOption(
        "catalog-type",
        STRING,
        "'hive', 'hadoop' or 'rest' for Iceberg's built-in catalogs, unset for a custom 'catalog-impl'. Only 'hadoop' "
        "on a local warehouse is supported here.",
        default="hive",
    )
    CATALOG_IMPL = ConfigOption("catalog-impl", STRING, "The class of a custom catalog; not supported here.")
    CATALOG_DATABASE = ConfigOption(
        "catalog-database",
        STRING,
        "The Iceberg database (namespace) in the catalog; created when missing.",
        default="default_database",
    )
    CATALOG_TABLE = ConfigOption(
        "catalog-table", STRING, "The Iceberg table in the catalog; the CREATE TABLE name by default."
    )
    WAREHOUSE = ConfigOption("warehouse", STRING, "The warehouse location: a local directory or 'file:' URI here.")
    URI = ConfigOption("uri", STRING, "The Hive metastore's thrift URI or the REST catalog's URL.")
    FORMAT_VERSION = ConfigOption(
        "format-version", INT, "The Iceberg format version of a table the sink creates.", default=2
    )
    UPSERT = ConfigOption(
        "write.upsert.enabled",
        BOOLEAN,
        "Upsert by PRIMARY KEY even when the query only inserts (each row replaces its key's row). Updating queries "
        "are upserted by the key whatever this says.",
        default=False,
    )


def local_warehouse(warehouse: str) -> Path | None:
    """The directory of a local warehouse ('/path' or 'file:/path'), or None for any other scheme."""
    if warehouse.startswith("file:"):
        return Path("/" + warehouse[len("file:") :].lstrip("/"))
    return Path(warehouse) if "://" not in warehouse else None


def table_identifier(table: Table, opts: ResolvedOptions) -> tuple[str, str]:
    """(database, table) of the Iceberg table in its catalog."""
    database = opts.get(IcebergOptions.CATALOG_DATABASE) or "default_database"
    return database, opts.get(IcebergOptions.CATALOG_TABLE) or table.name


def _supported_catalog(check: Check) -> None:
    impl = check.options.get(IcebergOptions.CATALOG_IMPL)
    kind = check.options.get(IcebergOptions.CATALOG_TYPE)
    if impl is not None or kind != "hadoop":
        what = f"'catalog-impl' = '{impl}'" if impl is not None else f"'catalog-type' = '{kind}'"
        check.report(
            "unsupported-option",
            f"Iceberg catalog {what} is not supported yet; use 'catalog-type' = 'hadoop' with a local 'warehouse' "
            "(Iceberg's Hadoop catalog layout, read by Flink, Spark and Trino).",
            IcebergOptions.CATALOG_IMPL.key if impl is not None else IcebergOptions.CATALOG_TYPE.key,
        )
        return
    warehouse = check.options.get(IcebergOptions.WAREHOUSE)
    if warehouse is None:
        check.report("missing-option", "A 'hadoop' Iceberg catalog needs 'warehouse'.", None)
    elif local_warehouse(warehouse) is None:
        check.report(
            "unsupported-option",
            f"warehouse '{warehouse}': only a local directory or 'file:' URI is supported for the hadoop catalog "
            "(its commits rely on the file system's atomic create).",
            IcebergOptions.WAREHOUSE.key,
        )


def _describe_sink(table: Table, opts: ResolvedOptions) -> dict[str, str]:
    database, name = table_identifier(table, opts)
    keyed = f"keyed by {', '.join(table.primary_key)}: updates and deletes replace the key's row"
    how = keyed if table.primary_key else "append"
    catalog, warehouse = opts.get(IcebergOptions.CATALOG_NAME), opts.get(IcebergOptions.WAREHOUSE)
    return {"to": f"Iceberg table {catalog}.{database}.{name} (hadoop catalog at {warehouse}; {how}, one commit per "
                  "micro-batch)"}  # fmt: skip


FACTORY = Factory(
    "iceberg",
    "Writes rows to an Apache Iceberg table (Hadoop catalog): appended, or upserted by PRIMARY KEY with deletes; each "
    "micro-batch is one Iceberg commit, exactly once per checkpoint (snapshot properties, as Flink's sink).",
    options=(*(v for v in vars(IcebergOptions).values() if isinstance(v, ConfigOption)), *QUALITY_OPTIONS),
    writer="connector.connectors.iceberg.writing",
    describe_sink=_describe_sink,
    rules=(_supported_catalog, table_types),
    updates="with-primary-key",
)
