"""Registering the project's Python data sources with a SparkSession, once.

pip installs `pyspark_flink_kafka` / `pyspark_flink_kafka_sink`, so Spark already knows `flink-kafka` and
`flink-kafka-sink` when a session starts (static registration). Registering them again works but makes Spark
log a warning at every query ("replaced a ... registered data source"), so they are registered only where the
session does not know them yet (a source checkout run without installing, a Spark Connect session).
"""

from __future__ import annotations

from pyspark.sql import SparkSession
from pyspark.sql.datasource import DataSource


def register(spark: SparkSession, data_source: type[DataSource]) -> None:
    """Make `data_source` available to `spark` under its name."""
    jsession = getattr(spark, "_jsparkSession", None)  # absent in Spark Connect sessions
    if jsession is not None and jsession.sessionState().dataSourceManager().dataSourceExists(data_source.name()):
        return
    spark.dataSource.register(data_source)
