"""The DDL text `spark_type_ddl` writes for a Flink type (which validation uses without pyspark) is Spark SQL for the
type `spark_type` gives: Spark parses it back to the same type."""

from __future__ import annotations

import pytest
from pyspark.sql import SparkSession
from sqlglot import exp

from connector.catalog.spark_types import spark_type
from connector.catalog.types import spark_type_ddl
from connector.sql.dialect.flink import Flink


def flink(type_sql: str) -> exp.DataType:
    return exp.DataType.build(type_sql, dialect=Flink)


@pytest.mark.parametrize(
    "flink_type",
    [
        "DECIMAL(12, 2)",
        "TIMESTAMP(3)",
        "TIMESTAMP_LTZ(6)",
        "INTERVAL YEAR TO MONTH",
        "INTERVAL HOUR TO SECOND",
        "MULTISET<DATE>",
        "ROW<a INT NOT NULL 'c', `b c` ARRAY<MAP<STRING, BYTES>>, d ROW<x DOUBLE>>",
    ],
)
def test_ddl_is_spark_sql_for_the_same_type(spark: SparkSession, flink_type: str) -> None:
    ddl = spark_type_ddl(flink(flink_type))

    field = spark.sql(f"SELECT CAST(NULL AS {ddl}) AS v").schema["v"]

    assert field.dataType.simpleString() == spark_type(flink(flink_type)).simpleString()
