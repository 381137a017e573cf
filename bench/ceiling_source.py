"""The ceiling of any Python Data Source on this machine: Spark's cost of the `flink-kafka` source's rows alone.

`bench/race.py` races the source against a raw confluent-kafka consume loop, which hands nothing to Spark. This
source reads no Kafka: each input partition carries one Arrow batch of the source's schema (all columns; the
first records of the race topic, as many as the reader puts in one batch, built on the driver) and `read` yields
it again and again until the partition's share of the topic's records is out, as the `flink-kafka` reader yields
its batches. What
its query costs is what Spark itself spends on that many rows: the Python worker's Arrow stream, the JVM's
Arrow-to-row conversion and the sink. No Python Data Source, however fast its own reading, runs faster.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.streaming.datasource import ReadLimit, SupportsTriggerAvailableNow
from pyspark.sql.types import StructType

from connector.connectors.kafka.records import source_schema

NAME = "race-ceiling"


@dataclass(frozen=True)
class CeilingPartition(InputPartition):
    batch: bytes  # one Arrow IPC stream of one RecordBatch
    records: int  # rows to yield in all


def ipc_batch(keys: list[bytes], values: list[bytes], topic: str) -> bytes:
    """One RecordBatch of the source's full schema holding these records, as an Arrow IPC stream."""
    arrow = to_arrow_schema(source_schema(None), timezone="UTC")
    count = len(values)
    columns = {
        "key": pa.array(keys, pa.binary()),
        "value": pa.array(values, pa.binary()),
        "topic": pa.array([topic] * count, pa.string()),
        "partition": pa.array([0] * count, pa.int32()),
        "offset": pa.array(range(count), pa.int64()),
        "timestamp": pa.array([1_700_000_000_000_000] * count, arrow.field("timestamp").type),
        "timestamp_type": pa.array(["CreateTime"] * count, pa.string()),
        "headers": pa.array([[]] * count, arrow.field("headers").type),
        "leader_epoch": pa.array([0] * count, pa.int32()),
    }
    batch = pa.RecordBatch.from_arrays([columns[name] for name in arrow.names], schema=arrow)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, arrow) as writer:
        writer.write_batch(batch)
    return bytes(sink.getvalue().to_pybytes())


class CeilingSource(DataSource):
    """Options: `batch` (hex of `ipc_batch`), `records` (in all), `partitions`."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> StructType:
        return source_schema(None)

    def streamReader(self, schema: StructType) -> CeilingReader:
        return CeilingReader(
            bytes.fromhex(self.options["batch"]), int(self.options["records"]), int(self.options["partitions"])
        )


class CeilingReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """One micro-batch of every record, as the `flink-kafka` source plans a bounded backlog under AvailableNow."""

    def __init__(self, batch: bytes, records: int, partitions: int) -> None:
        self.batch, self.records, self.count = batch, records, partitions

    def initialOffset(self) -> dict[str, int]:
        return {"done": 0}

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        return {"done": 1}

    def prepareForTriggerAvailableNow(self) -> None:
        """Nothing arrives later: the latest offset is the target."""

    def partitions(self, start: dict[str, int], end: dict[str, int]) -> list[InputPartition]:
        if start["done"] >= end["done"]:
            return []
        share, rest = divmod(self.records, self.count)
        return [CeilingPartition(self.batch, share + (i < rest)) for i in range(self.count)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, CeilingPartition)
        batch = pa.ipc.open_stream(partition.batch).read_next_batch()
        left = partition.records
        while left > 0:
            yield batch if left >= batch.num_rows else batch.slice(0, left)
            left -= min(left, batch.num_rows)

    def commit(self, end: dict[str, int]) -> None:
        """Nothing to commit."""
