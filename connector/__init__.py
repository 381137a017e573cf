"""Flink-SQL pipelines over Kafka, compiled to Spark Structured Streaming."""

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from connector.extension import builder as builder
    from connector.extension import install as install

_EXTENSION = ("install", "builder")


def __getattr__(name: str) -> Any:
    """`connector.install` / `connector.builder` (the session extension), imported on first use so that
    the CLI's Spark-free verbs never import pyspark."""
    if name in _EXTENSION:
        from connector import extension

        return getattr(extension, name)
    raise AttributeError(f"module 'connector' has no attribute {name!r}")
