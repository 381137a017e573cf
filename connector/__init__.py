"""Flink-SQL pipelines over Kafka, compiled to Spark Structured Streaming."""

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from connector.entrypoints.extension import builder as builder
    from connector.entrypoints.extension import install as install
    from connector.entrypoints.extension import records_read as records_read

_EXTENSION = ("install", "builder", "records_read")


def udf(result_type: str) -> Any:
    """Declare the Flink SQL result type of a Python function for CREATE FUNCTION ... LANGUAGE PYTHON:
    `@connector.udf(result_type="DECIMAL(10, 2)")`."""
    from connector.catalog.python_udfs import udf as declare

    return declare(result_type)


def udtf(result_types: str | list[str]) -> Any:
    """Declare a Python generator a table function for LATERAL TABLE, with the Flink SQL types of its columns:
    `@connector.udtf(result_types=["STRING", "INT"])`."""
    from connector.catalog.python_udfs import udtf as declare

    return declare(result_types)


def __getattr__(name: str) -> Any:
    """`connector.install` / `connector.builder` (the session extension) and `connector.records_read`, imported
    on first use so that the CLI's Spark-free verbs never import pyspark."""
    if name in _EXTENSION:
        from connector.entrypoints import extension

        return getattr(extension, name)
    raise AttributeError(f"module 'connector' has no attribute {name!r}")
