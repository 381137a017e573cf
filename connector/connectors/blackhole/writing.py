"""Writing a blackhole table: Spark's `noop` sink, which runs every batch and keeps nothing; like Flink's blackhole
it takes every change, deletes (`__deleted`) included."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql.streaming import DataStreamWriter, StreamingQuery

from connector.catalog.model import Table
from connector.connectors.writing import NOTHING_STAGED, BatchWriter, Staged


def start(
    frame: DataFrame, table: Table, writer: DataStreamWriter, output_mode: str, checkpoint: str
) -> StreamingQuery:
    return writer.format("noop").start()


def batch_writer(frame: DataFrame, table: Table, output_mode: str, checkpoint: str) -> BatchWriter:
    return NoopBatch()


class NoopBatch:
    """foreachBatch function of a gated blackhole sink: runs the batch, keeps nothing."""

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        self.stage(batch, batch_id)

    def stage(self, batch: DataFrame, batch_id: int) -> Staged:
        batch.write.format("noop").mode("overwrite").save()
        return NOTHING_STAGED
