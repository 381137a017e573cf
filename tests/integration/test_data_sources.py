"""connector.runtime.data_sources.register: a data source the session knows is left as it is; others are registered."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

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


_FRESH_SESSION = r"""
import os
from pathlib import Path

from connector.runtime.session import spark_session

spark = spark_session("local[1]", "static-sources")
try:
    spark.read.format("flink-kafka").load()
except Exception as error:
    assert "properties.bootstrap.servers" in str(error), error
manager = getattr(getattr(spark._jvm, "org.apache.spark.sql.execution.datasources.DataSourceManager$"), "MODULE$")
print("static", sorted(manager.dataSourceBuilders().get().keys().mkString(",").split(",")))
jvm = spark.sparkContext._gateway.proc.pid
children = [p for p in Path("/proc").iterdir() if p.name.isdigit() and (p / "stat").exists()]
lookups = 0
for child in children:
    try:
        parent = int((child / "stat").read_text().rsplit(")", 1)[1].split()[1])
        command = (child / "cmdline").read_bytes().decode(errors="replace")
    except OSError:
        continue
    lookups += parent == jvm and "lookup_data_sources" in command
print("lookups", lookups)
spark.stop()
"""


@pytest.mark.slow
def test_kafka_sql_sessions_find_the_static_sources_without_sparks_lookup_process(tmp_path: Path) -> None:
    """`kafka-sql run` hands the `pyspark_*` data sources to a new JVM itself: the names are known at the first
    read, and Spark starts no Python process to look them up (1.3-1.5 s of every run's start)."""
    script = tmp_path / "fresh.py"
    script.write_text(_FRESH_SESSION)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, check=False,
                          cwd=tmp_path)  # not the checkout, where Spark's own lookup would find them too
    assert done.returncode == 0, done.stderr[-3000:]
    assert "static ['flink-kafka', 'flink-kafka-sink']" in done.stdout
    assert "lookups 0" in done.stdout
