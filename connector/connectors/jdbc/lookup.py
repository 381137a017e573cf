"""A jdbc table as the looked-up side of a lookup join (`connector.planning.operators.lookups`).

Spark's JDBC reader gives the table as a static relation; in a stream-static join Spark scans it again for every
micro-batch, so each micro-batch looks its rows up in the table as it is then (Flink looks up per row, or in its
cache). The table must exist and hold the declared columns (matched without regard to case, as PostgreSQL folds
unquoted names), each read as its declared type. A failed read fails the micro-batch, and the run, with the
database's reason.
"""

from __future__ import annotations

from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from connector.catalog.model import ColumnKind, Table
from connector.catalog.spark_types import spark_type
from connector.connectors import registry
from connector.connectors.jdbc.factory import JdbcOptions, driver_of
from connector.diagnostics import Diagnostic, PipelineError


def lookup(spark: SparkSession, table: Table) -> DataFrame:
    """The table's physical columns, read from the database whenever a query that joins it runs."""
    options = registry.resolve(table)
    url = str(options.get(JdbcOptions.URL))
    name = str(options.get(JdbcOptions.TABLE_NAME))
    found = driver_of(url)
    reader = spark.read.format("jdbc").option("url", url).option("dbtable", name)
    driver = options.get(JdbcOptions.DRIVER) or (found[0] if found else "")
    reader = reader.option("driver", str(driver))
    for key, option in (("user", JdbcOptions.USERNAME), ("password", JdbcOptions.PASSWORD)):
        value = options.get(option)
        if value is not None:
            reader = reader.option(key, str(value))
    try:
        rows = reader.load()
    except (PySparkException, Py4JJavaError) as err:
        text = str(err.java_exception) if isinstance(err, Py4JJavaError) else str(err)
        reason = text.splitlines()[0] if text else type(err).__name__
        raise _error(table, f"Cannot read jdbc table '{name}' of lookup table '{table.name}': {reason}") from None
    columns = {c.lower(): c for c in rows.columns}
    selected = []
    for column in table.columns:
        if column.kind is not ColumnKind.PHYSICAL or column.data_type is None:
            continue
        actual = columns.get(column.name.lower())
        if actual is None:
            raise _error(
                table,
                f"jdbc table '{name}' of lookup table '{table.name}' has no column '{column.name}'; it has "
                f"{', '.join(rows.columns)}.",
            )
        selected.append(F.col(f"`{actual}`").cast(spark_type(column.data_type)).alias(column.name))
    return rows.select(*selected)


def _error(table: Table, message: str) -> PipelineError:
    return PipelineError([Diagnostic.at(table.option_position("table-name"), "jdbc", message)])
