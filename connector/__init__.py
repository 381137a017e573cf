"""Flink-SQL pipelines over Kafka, compiled to Spark Structured Streaming."""

__version__ = "0.1.0"
