"""The `flink-kafka` streaming source: Kafka read with confluent-kafka, with Flink's offset semantics.

A PySpark Python Data Source, configured only with the options of Flink's Kafka connector (`topic`,
`topic-pattern`, `properties.*`, `scan.startup.*`, `scan.bounded.*`,
`scan.topic-partition-discovery.interval`) plus Spark-only ones under Flink-style names
(`scan.max-records-per-batch`, `scan.fail-on-data-loss`, `scan.min-partitions`, `scan.poll-timeout`):

    spark.dataSource.register(KafkaSource)
    spark.readStream.format("flink-kafka").options(**options).load()

One Spark micro-batch plays the role of one Flink checkpoint. Spark's checkpoint holds the offsets,
`{"topic": {"partition": next_offset_to_read}}` (see `connector.connectors.kafka.offsets` for the rules); offsets of a
completed batch are committed to the consumer group (`connector.connectors.kafka.commit`).

Where things run (reference §2.2): `initialOffset`, `latestOffset`, `partitions`, `commit`,
`reportLatestOffset` and `prepareForTriggerAvailableNow` run in one long-lived driver-side Python process
(the "runner"), which keeps the planning state (`Planner`, `connector.connectors.kafka.planner`). `read()` runs in
executor Python workers on a pickled copy of the reader that never sees that state: each `KafkaInputPartition`
carries its exact offset range, and the worker seeks to it (`connector.connectors.kafka.reader`), so a logged range
is re-read identically after a restart.
Spark never calls `stop()`; every client is created lazily and is safe to leak.

Commit timing: Spark writes `commits/N` before it asks for the offsets of batch N+1, so a `start`
passed to `latestOffset` is the end of a completed batch, unless it is the initial offset of a fresh
query not yet processed. That is when ON_CHECKPOINTS commits it; `commit(end)` (called one batch later
by Spark) then finds nothing new. The last batch before a stop is committed by the engine with
`connector.connectors.kafka.commit.commit_offsets_now`.

Bounded scans (`scan.bounded.mode`): end offsets are resolved once per run, from the partitions known
then (discovery is off, as in Flink); `latestOffset` never goes beyond them, and under
Trigger.AvailableNow they are the target, so the query ends when every partition reached its end (a
specific end offset beyond the data waits for it, as Flink does). Unbounded under AvailableNow: the
target is the latest offsets when the query starts.

End of input: with `'scan.bounded.end-watermark' = 'true'` given explicitly (kafka-sql's engine does for bounded
tables with a WATERMARK), the micro-batch that reaches the end of a bounded scan carries one more row, with
offset -1 (`connector.connectors.kafka.records.END_OF_INPUT_OFFSET`), its partition's topic and partition, and
NULL everywhere else. The engine gives it the largest event time before the watermark and drops it right after,
so Spark's watermark passes every window, as Flink's final watermark does.

Kafka clients: like Java clients (and so Flink) readers default to `isolation.level=read_uncommitted`
(librdkafka's default is read_committed); `properties.*` reach librdkafka as they are, except Flink's
own KafkaSource properties and Java-only ones (see `connector.connectors.kafka.settings`).

`reportLatestOffset()` returns the source's metrics; Spark puts them, as a JSON *string*, into
`StreamingQueryProgress.sources[i].latestOffset` (parse with `json.loads`). Offsets are next offsets to read:

    {
      "latest":    {"topic": {"0": 120, "1": 98}},   # latest offset per partition (log end / LSO)
      "current":   {"topic": {"0": 100, "1": 98}},   # end of the batch just planned (next offset to read)
      "lag":       {"topic": {"0": 20, "1": 0}},     # latest - current
      "committed": {"topic": {"0": 80, "1": 90}},    # offsets this run committed to the group so far
      "commitsSucceeded": 3,
      "commitsFailed": 0,
      "commitMode": "ON_CHECKPOINTS",                 # or KAFKA_PERIODIC, DISABLED
      "endOfInputRows": 0                             # 1 when the batch ends with the end-of-input row
    }

Errors meant for the user are `KafkaSourceError` / `DataLossError` (from `connector.connectors.kafka.errors`); Spark
wraps them in its own exception, whose message contains `KafkaSourceError: <message>` or
`DataLossError: <message>`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadLimit, ReadMaxRows, SupportsTriggerAvailableNow
from pyspark.sql.types import StructType

from connector.connectors.kafka.errors import KafkaSourceError
from connector.connectors.kafka.offsets import from_spark, to_spark
from connector.connectors.kafka.planner import Planner
from connector.connectors.kafka.reader import KafkaInputPartition, read_partition
from connector.connectors.kafka.records import source_schema
from connector.connectors.kafka.settings import SourceSettings


class KafkaSource(DataSource):
    """`spark.readStream.format("flink-kafka")`: raw Kafka records with a fixed schema (`records.SCHEMA`)."""

    _settings: SourceSettings | None = None  # see _parsed()

    @classmethod
    def name(cls) -> str:
        return "flink-kafka"

    def schema(self) -> StructType:
        settings = self._parsed()  # bad options fail at load(), not at start()
        return source_schema(settings.value_json_fields, settings.record_columns)

    def _parsed(self) -> SourceSettings:
        """The options, parsed once. Spark pickles this instance after `schema()` (at load()) and hands it to
        the streaming runner and the planning worker, which so skip parsing and never import the option
        declarations (tens of milliseconds per process)."""
        if self._settings is None:
            self._settings = SourceSettings.from_options(self.options)
        return self._settings

    def _checked(self, schema: StructType) -> SourceSettings:
        settings = self._parsed()
        expected = source_schema(settings.value_json_fields, settings.record_columns)
        if schema != expected:
            raise KafkaSourceError(
                f"The flink-kafka source has a fixed schema ({expected.simpleString()}) and cannot be read "
                f"with another one ({schema.simpleString()}); decode key and value with a projection."
            )
        return settings

    def streamReader(self, schema: StructType) -> KafkaStreamReader:
        return KafkaStreamReader(self._checked(schema))

    def reader(self, schema: StructType) -> KafkaBatchReader:
        """A batch read (`spark.read`, the spark-sql shell): see `KafkaBatchReader`."""
        return KafkaBatchReader(self._checked(schema))


class KafkaStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Plans micro-batches in the driver-side runner and reads offset ranges in executors."""

    def __init__(self, settings: SourceSettings) -> None:
        self._settings = settings
        self._planner: Planner | None = None  # created in the runner on first use; never pickled

    @property
    def planner(self) -> Planner:
        if self._planner is None:
            self._planner = Planner(self._settings)
        return self._planner

    def __getstate__(self) -> dict[str, object]:
        return {"_settings": self._settings, "_planner": None}

    def initialOffset(self) -> dict:
        return to_spark(self.planner.initial())

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        end = self.planner.latest(from_spark(start), limit)
        return start if end == from_spark(start) else to_spark(end)

    def getDefaultReadLimit(self) -> ReadLimit:
        if self._settings.max_records_per_batch is not None:
            return ReadMaxRows(self._settings.max_records_per_batch)
        return ReadAllAvailable()

    def reportLatestOffset(self) -> dict:
        return self.planner.metrics()

    def prepareForTriggerAvailableNow(self) -> None:
        self.planner.prepare_available_now()

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        begin, stop = from_spark(start), from_spark(end)
        planned = self.planner.partitions(begin, stop)
        return self.planner.with_end_of_input(planned, stop) if self._settings.end_of_input_row else planned

    def commit(self, end: dict) -> None:
        self.planner.commit(from_spark(end))

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, KafkaInputPartition)
        return read_partition(self._settings, partition)

    def stop(self) -> None:
        """Never called by Spark (the runner is killed); clients are left to the process exit."""


class KafkaBatchReader(DataSourceReader):
    """One bounded range per partition: from the startup offsets (`scan.startup.mode`) to the end of a
    bounded scan (`scan.bounded.mode`), or to the latest offsets when the read is planned if unbounded.

    Both ends are resolved when Spark plans the read; a batch read commits nothing (Flink commits on
    checkpoints only, and a bounded batch job takes none).
    """

    def __init__(self, settings: SourceSettings) -> None:
        self._settings = settings

    def partitions(self) -> Sequence[InputPartition]:
        planner = Planner(self._settings)  # in the planning worker; never pickled into the read tasks
        start, end = planner.batch_range()
        # Nothing to read: one empty range, since Spark calls read(None) when given no partitions.
        return planner.partitions(start, end) or [KafkaInputPartition("", 0, 0, 0)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, KafkaInputPartition)
        if partition.start >= partition.end:
            return iter(())
        return read_partition(self._settings, partition)
