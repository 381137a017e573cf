"""Pipeline files that more than one test module runs, with their input records and expected output."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# ---- kafka -> filesystem: orders with quantity > 1, as parquet files ---------------------------------------

ORDERS_TO_FILES = """
SET 'pipeline.name' = 'orders_to_files';

CREATE TABLE orders (
  id BIGINT,
  customer STRING,
  price DECIMAL(10, 2),
  quantity INT,
  total AS price * quantity
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("topic") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'properties.group.id' = '{{ var("group") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE big_orders (id BIGINT, customer STRING, total DECIMAL(21, 2)) WITH (
  'connector' = 'filesystem',
  'path' = '{{ var("path") }}',
  'format' = 'parquet'
);

INSERT INTO big_orders SELECT id, UPPER(customer), total FROM orders WHERE quantity > 1;
"""


def orders(count: int, partitions: int) -> list[tuple[int, dict[str, Any]]]:
    """ORDERS_TO_FILES's input as (partition, value)."""
    return [
        (i % partitions, {"id": i, "customer": f"c{i % 5}", "price": f"{i}.25", "quantity": i % 4})
        for i in range(count)
    ]


def expected_big_orders(records: Sequence[tuple[int, dict[str, Any]]]) -> list[tuple[int, str, Decimal]]:
    """The rows ORDERS_TO_FILES writes of `records`, sorted."""
    return sorted(
        (r["id"], r["customer"].upper(), Decimal(r["price"]) * r["quantity"])
        for _, r in records
        if r["quantity"] > 1
    )


def read_files(spark: SparkSession, path: Path) -> list[tuple[Any, ...]]:
    """The rows of a file sink's directory as Spark reads it: committed files only (`_spark_metadata`)."""
    return sorted(tuple(row) for row in spark.read.parquet(str(path)).collect())


# ---- kafka -> kafka: a bounded copy of (id, name) records -------------------------------------------------

COPY_TO_KAFKA = """
SET 'pipeline.name' = 'copy';

CREATE TABLE events (id BIGINT, name STRING) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("topic") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'properties.group.id' = '{{ var("group") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE copied (id BIGINT, name STRING) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("out") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO copied SELECT id, name FROM events;
"""


def named(ids: range, partitions: int) -> list[tuple[int, dict[str, Any]]]:
    """COPY_TO_KAFKA's input as (partition, value): {"id": i, "name": "n<i>"}, spread over the partitions."""
    return [(i % partitions, {"id": i, "name": f"n{i}"}) for i in ids]
