"""connector.runtime.data_sources.register: a data source the session knows is left as it is; others are registered."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest
from pyspark import cloudpickle
from pyspark.sql import SparkSession
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.types import StructType

from connector.runtime import data_sources

cloudpickle.register_pickle_by_value(sys.modules[__name__])  # Spark's workers cannot import this test module


class _Numbers(DataSource):
    @classmethod
    def name(cls) -> str:
        return "kafka-sql-test-numbers"

    def schema(self) -> str:
        return "n INT"

    def reader(self, schema: StructType) -> DataSourceReader:
        return _NumbersReader()


class _NumbersReader(DataSourceReader):
    def read(self, partition: InputPartition) -> Iterator[tuple[int]]:
        yield from ((n,) for n in range(3))


class _Impostor(_Numbers):
    """Claims the statically registered `flink-kafka` name."""

    @classmethod
    def name(cls) -> str:
        return "flink-kafka"


def test_an_unknown_data_source_is_registered(spark: SparkSession) -> None:
    data_sources.register(spark, _Numbers)
    assert [r.n for r in spark.read.format("kafka-sql-test-numbers").load().collect()] == [0, 1, 2]


def test_a_known_data_source_is_not_replaced(spark: SparkSession) -> None:
    data_sources.register(spark, _Impostor)
    # still the installed flink-kafka source: it asks for its options instead of yielding numbers
    with pytest.raises(Exception, match=r"properties\.bootstrap\.servers"):
        spark.read.format("flink-kafka").load().collect()
