"""Reading a jdbc table as a source: every row once, through the `flink-jdbc-scan` data source (`scan.py`)."""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType

from connector.catalog.model import Table
from connector.connectors import registry
from connector.connectors.jdbc.factory import JdbcOptions
from connector.connectors.jdbc.scan import NAME, JdbcScan, ScanSettings
from connector.connectors.reading import OFFSET, PARTITION, TOPIC, column_type
from connector.runtime import data_sources


def read(spark: SparkSession, table: Table, malformed_rows: bool, end_of_input: bool) -> DataFrame:
    """A jdbc table's rows (database rows are never malformed; the scan ends by itself)."""
    options = registry.resolve(table)
    columns = table.physical_columns
    settings = ScanSettings(
        url=str(options.get(JdbcOptions.URL)),
        table=str(options.get(JdbcOptions.TABLE_NAME)),
        columns=tuple(c.name for c in columns),
        user=options.get(JdbcOptions.USERNAME),
        partition_column=options.get(JdbcOptions.SCAN_PARTITION_COLUMN),
        partition_num=options.get(JdbcOptions.SCAN_PARTITION_NUM),
        lower_bound=options.get(JdbcOptions.SCAN_PARTITION_LOWER_BOUND),
        upper_bound=options.get(JdbcOptions.SCAN_PARTITION_UPPER_BOUND),
        fetch_size=options.get(JdbcOptions.SCAN_FETCH_SIZE) or 0,
    )
    data_sources.register(spark, JdbcScan)
    schema = StructType([StructField(c.name, column_type(c)) for c in columns])
    reader = spark.readStream.format(NAME).schema(schema).option("settings", settings.to_json())
    password = options.get(JdbcOptions.PASSWORD)
    if password is not None:  # its own option: Spark redacts options named like a password in plans and the UI
        reader = reader.option("password", str(password))
    rows = reader.load()
    hidden = [F.lit(None).cast(StringType()).alias(TOPIC), F.lit(None).cast(IntegerType()).alias(PARTITION)]
    return rows.select(*[F.col(c.name) for c in columns], *hidden, F.lit(None).cast(LongType()).alias(OFFSET))
