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
(the "runner"), which keeps the planning state (`_Planner`). `read()` runs in executor Python workers on
a pickled copy of the reader that never sees that state: each `KafkaInputPartition` carries its exact
offset range, and the worker seeks to it, so a logged range is re-read identically after a restart.
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
offset -1 (`END_OF_INPUT_OFFSET`), its partition's topic and partition, and NULL everywhere else. The engine
gives it the largest event time before the watermark and drops it right after, so Spark's watermark passes every
window, as Flink's final watermark does.

Kafka clients: like Java clients (and so Flink) readers default to `isolation.level=read_uncommitted`
(librdkafka's default is read_committed); `properties.*` reach librdkafka as they are, except Flink's
own KafkaSource properties and Java-only ones (see `connector.connectors.kafka.offsets`).

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

Errors meant for the user are `KafkaSourceError` / `DataLossError` (from `connector.connectors.kafka.offsets`); Spark
wraps them in its own exception, whose message contains `KafkaSourceError: <message>` or
`DataLossError: <message>`.
"""

from __future__ import annotations

import atexit
import functools
import gc
import logging
import operator
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, replace
from itertools import repeat
from operator import itemgetter
from typing import cast

import numpy as np
import pyarrow as pa
from confluent_kafka import (
    TIMESTAMP_CREATE_TIME,
    TIMESTAMP_LOG_APPEND_TIME,
    TIMESTAMP_NOT_AVAILABLE,
    Consumer,
    ConsumerGroupTopicPartitions,
    IsolationLevel,
    KafkaError,
    KafkaException,
    Message,
)
from confluent_kafka import TopicPartition as KafkaTopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec
from pyspark import TaskContext
from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader, InputPartition
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    ReadMinRows,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from connector.connectors.kafka.commit import CommitMode, OffsetCommitter, commit_mode
from connector.connectors.kafka.offsets import (
    DataLossError,
    KafkaSourceError,
    Offsets,
    SourceSettings,
    TopicPartition,
    Watermarks,
    batch_ranges,
    data_loss_message,
    from_spark,
    needs_earliest,
    next_offsets,
    resolve_bounds,
    resolve_startup,
    split_ranges,
    to_spark,
)

log = logging.getLogger(__name__)

SCHEMA = StructType(
    [
        StructField("key", BinaryType()),
        StructField("value", BinaryType()),
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("offset", LongType()),
        StructField("timestamp", TimestampType()),
        StructField("timestamp_type", StringType()),
        StructField(
            "headers",
            ArrayType(StructType([StructField("key", StringType()), StructField("value", BinaryType())])),
        ),
        StructField("leader_epoch", IntegerType()),
    ]
)
ARROW_SCHEMA = to_arrow_schema(SCHEMA, timezone="UTC")
TIMESTAMP_TYPES = {TIMESTAMP_CREATE_TIME: "CreateTime", TIMESTAMP_LOG_APPEND_TIME: "LogAppendTime"}
# One Arrow batch holds at most this much, so an executor's memory does not grow with the backlog.
MAX_BATCH_RECORDS = 10_000
MAX_BATCH_BYTES = 4 * 1024 * 1024
# Reader defaults a user may override with properties.*: librdkafka prefetches up to 64 MB per partition,
# and once its queue is full it stops fetching for fetch.queue.backoff.ms (1 s), which made a reader
# 5-10x slower than the broker (measured); a reader task reads one partition. A prefetch queue costs about
# three times its size in memory (librdkafka's per-message overhead): 4 MB (~12 ms of reading) keeps a
# reader's peak RSS about 35 MB under the 16 MB queue with no loss of throughput (measured).
# A cached reader consumer moves from range to range; after a range that ends at the end of the log its
# last prefetch waits at the broker for new records up to fetch.wait.max.ms (500 ms by default), and the
# next range's first fetch waits behind it: 10 ms made four consecutive ranges of 250k records read in
# 0.8 s instead of 2.5 s (measured). Reader ranges lie within existing records, so a reader only waits at
# the end of the log after it has read its range.
READER_DEFAULTS = {"queued.max.messages.kbytes": "4096", "fetch.queue.backoff.ms": "10", "fetch.wait.max.ms": "10"}
# Records asked of librdkafka per consume() call: larger calls (10,000) cost about 20% more CPU and wall
# time for the same records (measured; more objects alive at once), smaller ones more calls.
CONSUME_RECORDS = 1000
# Planner (admin client) defaults a user may override with properties.*: librdkafka drops the bootstrap
# connection once it knows the brokers, and the first metadata request then often waits for the next
# connection, which it delays by reconnect.backoff.ms / 2 (at least 11 ms): 50 ms by default, before every
# query's first batch (measured). The backoff still grows exponentially on failures.
ADMIN_DEFAULTS = {"reconnect.backoff.ms": "10"}
REQUEST_TIMEOUT_SECONDS = 30.0
COMMIT_FLUSH_SECONDS = 5.0
# A consumed record's headers (None when it has none).
RecordHeaders = list[tuple[str, bytes | None]] | None
# Kafka's own topics, which a topic-pattern never matches (Java: listTopics() excludes internal topics).
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})
# librdkafka consumer-only properties; an AdminClient would warn about each one.
CONSUMER_ONLY_PROPERTIES = frozenset(
    {
        "group.instance.id",
        "partition.assignment.strategy",
        "session.timeout.ms",
        "heartbeat.interval.ms",
        "group.protocol.type",
        "group.protocol",
        "group.remote.assignor",
        "coordinator.query.interval.ms",
        "max.poll.interval.ms",
        "auto.commit.interval.ms",
        "enable.auto.offset.store",
        "queued.min.messages",
        "queued.max.messages.kbytes",
        "fetch.wait.max.ms",
        "fetch.queue.backoff.ms",
        "fetch.message.max.bytes",
        "max.partition.fetch.bytes",
        "fetch.max.bytes",
        "fetch.min.bytes",
        "fetch.error.backoff.ms",
        "enable.partition.eof",
        "check.crcs",
        "allow.auto.create.topics",
    }
)


class KafkaSource(DataSource):
    """`spark.readStream.format("flink-kafka")`: raw Kafka records with a fixed schema (`SCHEMA`)."""

    _settings: SourceSettings | None = None  # see _parsed()

    @classmethod
    def name(cls) -> str:
        return "flink-kafka"

    def schema(self) -> StructType:
        self._parsed()  # bad options fail at load(), not at start()
        return SCHEMA

    def _parsed(self) -> SourceSettings:
        """The options, parsed once. Spark pickles this instance after `schema()` (at load()) and hands it to
        the streaming runner and the planning worker, which so skip parsing and never import the option
        declarations (tens of milliseconds per process)."""
        if self._settings is None:
            self._settings = SourceSettings.from_options(self.options)
        return self._settings

    def streamReader(self, schema: StructType) -> KafkaStreamReader:
        if schema != SCHEMA:
            raise KafkaSourceError(
                f"The flink-kafka source has a fixed schema ({SCHEMA.simpleString()}) and cannot be read "
                f"with another one ({schema.simpleString()}); decode key and value with a projection."
            )
        return KafkaStreamReader(self._parsed())

    def reader(self, schema: StructType) -> KafkaBatchReader:
        """A batch read (`spark.read`, the spark-sql shell): see `KafkaBatchReader`."""
        if schema != SCHEMA:
            raise KafkaSourceError(
                f"The flink-kafka source has a fixed schema ({SCHEMA.simpleString()}) and cannot be read "
                f"with another one ({schema.simpleString()}); decode key and value with a projection."
            )
        return KafkaBatchReader(self._parsed())


# The offset of the end-of-input row (see the module notes); no record has a negative offset.
END_OF_INPUT_OFFSET = -1


@dataclass(frozen=True)
class KafkaInputPartition(InputPartition):
    """Records [start, end) of one Kafka partition: everything an executor needs to read them; with
    `end_of_input`, the end-of-input row follows them."""

    topic: str
    partition: int
    start: int
    end: int
    end_of_input: bool = False


class KafkaStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Plans micro-batches in the driver-side runner and reads offset ranges in executors."""

    def __init__(self, settings: SourceSettings) -> None:
        self._settings = settings
        self._planner: _Planner | None = None  # created in the runner on first use; never pickled

    @property
    def planner(self) -> _Planner:
        if self._planner is None:
            self._planner = _Planner(self._settings)
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
        planner = _Planner(self._settings)  # in the planning worker; never pickled into the read tasks
        start, end = planner.batch_range()
        # Nothing to read: one empty range, since Spark calls read(None) when given no partitions.
        return planner.partitions(start, end) or [KafkaInputPartition("", 0, 0, 0)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, KafkaInputPartition)
        if partition.start >= partition.end:
            return iter(())
        return read_partition(self._settings, partition)


# --------------------------------------------------------------------------------------------------
# Driver side: planning


class _Planner:
    """The runner's state: partitions, bounds, the Trigger.AvailableNow target, commits and metrics."""

    def __init__(self, settings: SourceSettings) -> None:
        self.settings = settings
        self.mode = commit_mode(settings)
        self.committer = OffsetCommitter(settings) if self.mode is CommitMode.ON_CHECKPOINTS else None
        self._admin: AdminClient | None = None
        self._assigned: list[TopicPartition] | None = None
        self._listed_at = 0.0
        self._initial: Offsets | None = None
        self._bounds: Offsets | None = None
        self._bounds_resolved = False
        self._target: Offsets | None = None
        self._watermarks: dict[TopicPartition, Watermarks] = {}
        self._planned: Offsets = {}
        self._end_of_input_rows = 0  # in the batch just planned (`metrics`)
        self._warned: set[str] = set()

    # ---- Spark calls

    def initial(self) -> Offsets:
        """Resolve the startup offsets once: Spark asks twice and must get the same answer."""
        if self._initial is None:
            partitions = self._assignment()
            self._require_topics(partitions, known=set())
            watermarks = self._fetch_watermarks(partitions)
            startup = self.settings.startup_mode.value
            resolution = resolve_startup(
                self.settings,
                [tp for tp in partitions if tp in watermarks],
                watermarks,
                committed=self._fetch_committed(partitions)
                if startup in ("group-offsets", "specific-offsets")
                else None,
                by_timestamp=self._fetch_by_timestamp(partitions, self.settings.startup_timestamp_ms)
                if self.settings.startup_timestamp_ms is not None
                else None,
            )
            self._warn(resolution.warnings)
            self._initial = resolution.offsets
            log.info("Fresh start (%s): %s", startup, to_spark(self._initial))
        return self._initial

    def latest(self, start: Offsets, limit: ReadLimit) -> Offsets:
        if self.committer is not None:
            if self._initial is None or start != self._initial:
                self.committer.commit(start)  # `start` ends a batch whose commits/N is durable
            self.committer.poll()
        partitions = self._assignment()
        self._require_topics(partitions, known=set(start))
        self._watermarks = self._fetch_watermarks(partitions)
        step = next_offsets(
            start,
            self.settings.subscription,
            partitions,
            self._watermarks,
            self._cap(partitions),
            self.settings.fail_on_data_loss,
            max_rows=limit.max_rows if isinstance(limit, ReadMaxRows) else None,
            # waiting for more rows would end a Trigger.AvailableNow run before its target
            min_rows=limit.min_rows if isinstance(limit, ReadMinRows) and self._target is None else None,
        )
        self._warn(step.warnings)
        self._planned = step.end
        self._end_of_input_rows = int(
            self.settings.end_of_input_row and step.end != start and self._completes_bounds(step.end)
        )
        if self.committer is not None and step.end == start:
            self.committer.flush(COMMIT_FLUSH_SECONDS)  # idle: nothing is delayed by waiting
        return step.end

    def prepare_available_now(self) -> None:
        """Fix the target: the bounds of a bounded scan, else the latest offsets right now."""
        partitions = self._assignment()
        bounds = self._resolved_bounds(partitions)
        if bounds is not None:
            self._target = dict(bounds)
        else:
            watermarks = self._fetch_watermarks(partitions)
            self._target = {tp: latest for tp, (_, latest) in watermarks.items()}
        log.info("Trigger.AvailableNow target: %s", to_spark(self._target))

    def batch_range(self) -> tuple[Offsets, Offsets]:
        """[start, end) of a batch read: the startup offsets, up to the Trigger.AvailableNow target."""
        start = self.initial()
        self.prepare_available_now()
        target = self._target or {}
        return start, {tp: max(offset, target.get(tp, offset)) for tp, offset in start.items()}

    def partitions(self, start: Offsets, end: Offsets) -> list[KafkaInputPartition]:
        reset = needs_earliest(start, end)
        watermarks = self._fetch_watermarks(reset) if reset else {}
        earliest = {tp: watermarks[tp][0] if tp in watermarks else end[tp] for tp in reset}
        ranges = split_ranges(batch_ranges(start, end, earliest), self.settings.min_partitions)
        return [KafkaInputPartition(r.topic, r.partition, r.start, r.end) for r in ranges]

    def with_end_of_input(self, planned: list[KafkaInputPartition], end: Offsets) -> list[KafkaInputPartition]:
        """`planned`, the first range carrying the end-of-input row when `end` completes the bounded scan."""
        if not end or not self._completes_bounds(end):
            return planned
        if not planned:  # every range empty (e.g. records skipped as lost): the row alone
            topic, partition = min(end)
            return [KafkaInputPartition(topic, partition, end[(topic, partition)], end[(topic, partition)], True)]
        return [replace(planned[0], end_of_input=True), *planned[1:]]

    def _completes_bounds(self, end: Offsets) -> bool:
        """`end` is at or past the end of the bounded scan in every partition."""
        bounds = self._resolved_bounds(self._assignment())
        return bounds is not None and all(end.get(tp, bound) >= bound for tp, bound in bounds.items())

    def commit(self, end: Offsets) -> None:
        if self.committer is not None:
            self.committer.commit(end)
            self.committer.poll()

    def metrics(self) -> dict:
        if self.committer is not None:
            self.committer.poll()
        latest = {tp: watermarks[1] for tp, watermarks in self._watermarks.items()}
        lag = {tp: max(0, latest[tp] - offset) for tp, offset in self._planned.items() if tp in latest}
        return {
            "latest": to_spark(latest),
            "current": to_spark(self._planned),
            "lag": to_spark(lag),
            "committed": to_spark(self.committer.committed if self.committer else {}),
            "commitsSucceeded": self.committer.succeeded if self.committer else 0,
            "commitsFailed": self.committer.failed if self.committer else 0,
            "commitMode": self.mode.value,
            "endOfInputRows": self._end_of_input_rows,
        }

    # ---- partitions, bounds and the Kafka requests behind them

    def _assignment(self) -> list[TopicPartition]:
        """Subscribed partitions: listed at the start of the run, then at each discovery interval."""
        interval = self.settings.discovery_interval_ms / 1000.0
        now = time.monotonic()
        if self._assigned is None or (interval > 0 and now - self._listed_at >= interval):
            assigned = self._list_partitions()
            if self._assigned is not None and set(assigned) - set(self._assigned):
                log.info("Discovered partitions %s", sorted(set(assigned) - set(self._assigned)))
            self._assigned, self._listed_at = assigned, now
        return self._assigned

    def _list_partitions(self) -> list[TopicPartition]:
        subscription = self.settings.subscription
        try:
            metadata = self._client().list_topics(timeout=REQUEST_TIMEOUT_SECONDS)
        except KafkaException as error:
            raise self._unreachable(error) from None
        topics = {name: meta for name, meta in metadata.topics.items() if meta.error is None}
        if subscription.pattern is not None:
            names = [n for n in topics if n not in INTERNAL_TOPICS and subscription.matches(n)]
        else:
            names = [n for n in subscription.topics if n in topics]
        return sorted((name, partition) for name in names for partition in topics[name].partitions)

    def _require_topics(self, partitions: Sequence[TopicPartition], known: set[TopicPartition]) -> None:
        """A listed topic must exist, unless the checkpoint read it (then its loss is data loss)."""
        present = {tp[0] for tp in partitions} | {tp[0] for tp in known}
        missing = [name for name in self.settings.subscription.topics if name not in present]
        if missing:
            raise KafkaSourceError(
                f"Topic(s) {', '.join(repr(n) for n in missing)} do not exist on Kafka at "
                f"{self.settings.bootstrap_servers}. Create them first, or fix option 'topic'."
            )

    def _cap(self, partitions: Sequence[TopicPartition]) -> Offsets | None:
        bounds = self._resolved_bounds(partitions)
        if self._target is None:
            return bounds
        return {tp: offset for tp, offset in self._target.items() if bounds is None or tp in bounds}

    def _resolved_bounds(self, partitions: Sequence[TopicPartition]) -> Offsets | None:
        """End offsets of a bounded scan, resolved once per run from the partitions known then."""
        if not self._bounds_resolved and self.settings.bounded:
            watermarks = self._fetch_watermarks(partitions)
            present = [tp for tp in partitions if tp in watermarks]
            self._bounds = resolve_bounds(
                self.settings,
                present,
                watermarks,
                committed=self._fetch_committed(present)
                if self.settings.bounded_mode.value == "group-offsets"
                else None,
                by_timestamp=self._fetch_by_timestamp(present, self.settings.bounded_timestamp_ms)
                if self.settings.bounded_timestamp_ms is not None
                else None,
            )
            log.info("Bounded scan (%s) ends at %s", self.settings.bounded_mode.value, to_spark(self._bounds or {}))
        self._bounds_resolved = True
        return self._bounds

    def _fetch_watermarks(self, partitions: Sequence[TopicPartition]) -> dict[TopicPartition, Watermarks]:
        """(earliest, latest) per partition; partitions that do not exist (any more) are left out."""
        if not partitions:
            return {}
        earliest, latest = self._list_offsets(partitions, OffsetSpec.earliest(), OffsetSpec.latest())
        return {tp: (earliest[tp], latest[tp]) for tp in partitions if tp in earliest and tp in latest}

    def _fetch_by_timestamp(self, partitions: Sequence[TopicPartition], timestamp_ms: int) -> Offsets:
        """First offset whose record timestamp is >= `timestamp_ms`; -1 where there is none."""
        return self._list_offsets(partitions, OffsetSpec.for_timestamp(timestamp_ms))[0] if partitions else {}

    def _list_offsets(self, partitions: Sequence[TopicPartition], *specs: OffsetSpec) -> list[Offsets]:
        """The offsets of `partitions` for each spec; every request is sent before any answer is awaited."""
        isolation = IsolationLevel.READ_COMMITTED if self.settings.read_committed else IsolationLevel.READ_UNCOMMITTED
        requests = [
            self._client().list_offsets(
                {KafkaTopicPartition(t, p): spec for t, p in partitions},
                isolation_level=isolation,
                request_timeout=REQUEST_TIMEOUT_SECONDS,
            )
            for spec in specs
        ]
        return [self._answers(futures) for futures in requests]

    def _answers(self, futures: dict[KafkaTopicPartition, Future]) -> Offsets:
        result: Offsets = {}
        for ktp, future in futures.items():
            try:
                result[(ktp.topic, ktp.partition)] = future.result().offset
            except KafkaException as error:
                kafka_error = error.args[0] if error.args else None
                if isinstance(kafka_error, KafkaError) and kafka_error.code() in (
                    KafkaError.UNKNOWN_TOPIC_OR_PART,
                    KafkaError._UNKNOWN_PARTITION,
                    KafkaError._UNKNOWN_TOPIC,
                ):
                    continue  # deleted: the planner decides whether that is data loss
                raise self._unreachable(error) from None
        return result

    def _fetch_committed(self, partitions: Sequence[TopicPartition]) -> Offsets:
        """The group's committed offsets; partitions without one are left out."""
        if not partitions or self.settings.group_id is None:
            return {}
        request = ConsumerGroupTopicPartitions(
            self.settings.group_id, [KafkaTopicPartition(t, p) for t, p in partitions]
        )
        try:
            futures = self._client().list_consumer_group_offsets([request], request_timeout=REQUEST_TIMEOUT_SECONDS)
            answer = futures[self.settings.group_id].result()
        except KafkaException as error:
            raise self._unreachable(error) from None
        return {(tp.topic, tp.partition): tp.offset for tp in answer.topic_partitions if tp.offset >= 0}

    def _client(self) -> AdminClient:
        if self._admin is None:
            config: dict[str, str | int | float | bool] = {
                **ADMIN_DEFAULTS,
                **{
                    key: value
                    for key, value in self.settings.client_config("admin").items()
                    if key not in CONSUMER_ONLY_PROPERTIES
                },
            }
            self._admin = AdminClient(config)
        return self._admin

    def _unreachable(self, error: KafkaException) -> KafkaSourceError:
        return KafkaSourceError(
            f"Kafka request to {self.settings.bootstrap_servers} failed: {error}. Check that the broker is "
            "reachable and option 'properties.bootstrap.servers' (and any security 'properties.*')."
        )

    def _warn(self, warnings: Sequence[str]) -> None:
        """Log each distinct warning once per run (planning repeats while a batch waits)."""
        for warning in warnings:
            if warning not in self._warned:
                self._warned.add(warning)
                log.warning("%s", warning)


# --------------------------------------------------------------------------------------------------
# Executor side: reading one offset range

_CONSUMERS: dict[tuple[tuple[str, str], ...], Consumer] = {}


def close_cached_consumers() -> None:
    """Close this process's reader consumers (at exit of a worker that ends normally, and in tests)."""
    while _CONSUMERS:
        _, consumer = _CONSUMERS.popitem()
        consumer.close()


atexit.register(close_cached_consumers)


def _freeze_long_lived_objects() -> None:
    """Move the objects alive at the start of a task (libraries, caches) out of the GC's reach.

    Spark's daemon runs a full `gc.collect()` after every task of a reused worker, and with pyspark and
    pyarrow loaded that walks about 100,000 objects each time, 40-100 ms (measured: a quarter of the
    workers' samples in a 1M-record run). That collection has just run when a task starts, so what is
    alive then is long-lived, and freezing it (O(1)) spares the next collections from walking it again.
    Frozen objects are never collected; only cyclic garbage made since that collection could stay. Outside
    a Spark task (tests, benchmarks) nothing is frozen.
    """
    if TaskContext.get() is not None:
        gc.freeze()


def reader_config(settings: SourceSettings) -> dict[str, str | bool]:
    """Consumers that read explicit ranges: assigned and seeked, never committing (except KAFKA_PERIODIC)."""
    periodic = commit_mode(settings) is CommitMode.KAFKA_PERIODIC
    return {
        **READER_DEFAULTS,
        **settings.client_config("reader"),
        "group.id": settings.group_id or f"{settings.client_id_prefix}-reader",
        "enable.auto.commit": periodic,
        "enable.auto.offset.store": periodic,
        "enable.partition.eof": True,  # tells when the end of the log is reached despite offset gaps
        "auto.offset.reset": "error",  # out-of-range offsets are data loss, decided by the reader
        "isolation.level": "read_committed" if settings.read_committed else "read_uncommitted",
    }


def read_partition(settings: SourceSettings, partition: KafkaInputPartition) -> Iterator[pa.RecordBatch]:
    """Read one range with a consumer cached in this worker process (workers are reused across batches).

    The cyclic garbage collector is off while the range is read: every consumed record is a GC-tracked
    `Message`, so the allocations of a 10,000-record batch set off collections that walk all the records
    held, which took about 2/3 of the reader's CPU (measured, bench/race.py --profile). The read path
    creates no reference cycles; refcounting frees everything.
    """
    config = reader_config(settings)
    key = tuple(sorted((k, str(v)) for k, v in config.items()))
    consumer = _CONSUMERS.get(key)
    if consumer is None:
        consumer = _CONSUMERS[key] = Consumer(config)
    _freeze_long_lived_objects()
    collecting = gc.isenabled()
    gc.disable()
    try:
        if partition.start < partition.end:
            yield from _read_range(consumer, settings, partition)
            consumer.unassign()  # no prefetching (memory, fetch requests) while the consumer waits for a task
        if partition.end_of_input:
            yield _end_of_input_batch(partition.topic, partition.partition)
    except BaseException:
        _CONSUMERS.pop(key, None)  # unknown state after an error: start the next task afresh
        consumer.close()
        raise
    finally:
        if collecting:
            gc.enable()


def _read_range(consumer: Consumer, settings: SourceSettings, part: KafkaInputPartition) -> Iterator[pa.RecordBatch]:
    """Records [start, end) in Arrow batches of bounded size; stops when the position reaches `end`.

    Offsets may have gaps (compaction, transaction markers, aborted records under read_committed), so
    the range is done when a record at or beyond `end`, or the end of the log at or beyond `end`, is seen.
    """
    consumer.assign([KafkaTopicPartition(part.topic, part.partition, part.start)])
    batch = _Batch(part.topic, part.partition)
    position = part.start
    timeout = settings.poll_timeout_ms / 1000.0
    deadline = time.monotonic() + timeout
    while position < part.end:
        wanted = min(CONSUME_RECORDS, batch.room(part.end - position))
        messages = consumer.consume(num_messages=wanted, timeout=min(1.0, timeout))
        if not messages:
            if time.monotonic() > deadline:
                raise KafkaSourceError(
                    f"Timed out after {timeout:.0f}s reading topic '{part.topic}' partition {part.partition} "
                    f"at offset {position} (range [{part.start}, {part.end})). Check the broker, or raise "
                    "'scan.poll-timeout'."
                )
            continue
        deadline = time.monotonic() + timeout
        if _in_range(messages, position, part.end):  # the common case, handled in bulk
            batch.extend(messages)
            position = cast(int, messages[-1].offset()) + 1
        else:
            position = _accept_one_by_one(consumer, settings, part, position, messages, batch)
        while batch.full():
            yield batch.flush()
    if len(batch):
        yield batch.flush()


def _in_range(messages: list[Message], position: int, end: int) -> bool:
    """Records only (no events), all in [position, end): offsets within a partition only increase."""
    return (
        not any(map(Message.error, messages))  # an error is a KafkaError (truthy), a record has None
        and cast(int, messages[0].offset()) >= position
        and cast(int, messages[-1].offset()) < end
    )


def _accept_one_by_one(
    consumer: Consumer,
    settings: SourceSettings,
    part: KafkaInputPartition,
    position: int,
    messages: list[Message],
    batch: _Batch,
) -> int:
    """Add the records of `messages` that belong to the range, handle events; return the new position."""
    accepted: list[Message] = []
    for message in messages:
        error = message.error()
        if error is not None:
            position = _on_error(consumer, settings, part, position, message, error)
            if position >= part.end:
                break
            continue
        offset = cast(int, message.offset())
        if offset < position:
            continue  # fetched before a seek
        if offset >= part.end:
            position = part.end
            break
        accepted.append(message)
        position = offset + 1
    if accepted:
        batch.extend(accepted)
    return position


def _on_error(
    consumer: Consumer,
    settings: SourceSettings,
    part: KafkaInputPartition,
    position: int,
    message: Message,
    error: KafkaError,
) -> int:
    """The position after a consumer event: end of log, lost offsets, or a transient error."""
    code = error.code()
    if code == KafkaError._PARTITION_EOF:
        return part.end if cast(int, message.offset()) >= part.end else position
    if code == KafkaError._AUTO_OFFSET_RESET:
        tp = KafkaTopicPartition(part.topic, part.partition)
        earliest, latest = consumer.get_watermark_offsets(tp, timeout=REQUEST_TIMEOUT_SECONDS, cached=False)
        if earliest <= position < latest:
            # A stale reset event (e.g. from a fetch of the cached consumer's previous assignment): the offset we
            # want exists, so nothing is lost; read it again.
            consumer.assign([KafkaTopicPartition(part.topic, part.partition, position)])
            return position
        reason = (
            "the records were deleted (retention)"
            if position < earliest
            else "the offset is beyond the latest offset (was the topic deleted and recreated?)"
        )
        text = data_loss_message((part.topic, part.partition), position, (earliest, latest), reason)
        if settings.fail_on_data_loss:
            raise DataLossError(text)
        if position >= latest or earliest >= part.end:
            log.warning("%s Skipping the rest of range [%d, %d).", text, part.start, part.end)
            return part.end
        log.warning("%s Continuing from offset %d.", text, earliest)
        consumer.assign([KafkaTopicPartition(part.topic, part.partition, earliest)])
        return earliest
    if error.fatal():
        raise KafkaSourceError(
            f"Kafka consumer failed reading topic '{part.topic}' partition {part.partition}: {error}"
        )
    log.warning("Kafka consumer error reading %s-%d (retrying): %s", part.topic, part.partition, error)
    return position


class _Batch:
    """Records read so far, turned into Arrow RecordBatches of the source's schema and bounded size."""

    def __init__(self, topic: str, partition: int) -> None:
        self.topic = topic
        self.partition = partition
        self.messages: list[Message] = []
        self.sizes: list[np.ndarray] = []  # value sizes of `messages`, one array per extend()
        self.nbytes = 0  # value bytes held
        self.read_records = 0  # for the average record size: how many records to ask the consumer for
        self.read_bytes = 0

    def __len__(self) -> int:
        return len(self.messages)

    def room(self, remaining: int) -> int:
        """How many records to consume next: what fills the batch by count and, at the average size of the
        records read so far, by bytes (large records would otherwise pile up in memory before a flush).
        The first request of a range is for one record, to learn the size."""
        wanted = min(MAX_BATCH_RECORDS - len(self.messages), remaining)
        if not self.read_records:
            return 1
        average = max(1, self.read_bytes // self.read_records)
        return max(1, min(wanted, (MAX_BATCH_BYTES - self.nbytes) // average + 1))

    def extend(self, messages: list[Message]) -> None:
        sizes = np.fromiter(map(len, messages), dtype=np.int32, count=len(messages))  # len(Message): its value's
        size = int(sizes.sum())
        self.messages.extend(messages)
        self.sizes.append(sizes)
        self.nbytes += size
        self.read_records += len(messages)
        self.read_bytes += size

    def full(self) -> bool:
        return len(self.messages) >= MAX_BATCH_RECORDS or self.nbytes >= MAX_BATCH_BYTES

    def flush(self) -> pa.RecordBatch:
        """The oldest records, up to MAX_BATCH_RECORDS and about MAX_BATCH_BYTES, as one RecordBatch."""
        sizes = self.sizes[0] if len(self.sizes) == 1 else np.concatenate(self.sizes)
        take = min(len(self.messages), MAX_BATCH_RECORDS)
        if self.nbytes >= MAX_BATCH_BYTES:  # up to the record that reaches the budget
            take = min(take, int(np.searchsorted(np.cumsum(sizes[:take]), MAX_BATCH_BYTES)) + 1)
        chunk, self.messages = self.messages[:take], self.messages[take:]
        self.sizes = [sizes[take:]] if self.messages else []
        self.nbytes -= int(sizes[:take].sum())
        return _record_batch(self.topic, self.partition, chunk, sizes[:take])


def _record_batch(topic: str, partition: int, messages: list[Message], value_sizes: np.ndarray) -> pa.RecordBatch:
    """One RecordBatch of records in offset order from one partition, with the least work per record.

    Per record, only what differs between records is read, one C call each through `map` (key, value,
    timestamp, headers); everything else is built in bulk: topic and partition are constant, offsets are
    a range when they have no gap, and the leader epoch, which never decreases along a partition's log,
    is constant when the first and last record agree. Headers are an empty list when a record has none.

    Arrays are made from buffers (numpy, bytes), never with `pa.array` or `pa.scalar`: those import pandas,
    which costs a worker about 50 MB and a few hundred milliseconds.
    """
    count = len(messages)
    types = ARROW_SCHEMA.types
    first, last = messages[0], messages[-1]
    stamps = list(map(Message.timestamp, messages))  # (type, epoch ms) pairs
    kinds = np.fromiter(map(itemgetter(0), stamps), dtype=np.int64, count=count)
    micros = np.fromiter(map(itemgetter(1), stamps), dtype=np.int64, count=count) * 1000
    first_offset = cast(int, first.offset())
    if cast(int, last.offset()) - first_offset == count - 1:
        offsets = np.arange(first_offset, first_offset + count, dtype=np.int64)
    else:
        offsets = np.fromiter(map(Message.offset, messages), dtype=np.int64, count=count)
    epoch = first.leader_epoch()
    if epoch == last.leader_epoch():
        epochs = _fixed(types[8], np.full(count, -1 if epoch is None else epoch, np.int32), epoch is not None)
    else:
        epochs = _int32s(list(map(Message.leader_epoch, messages)))
    values = list(map(Message.value, messages))
    if value_sizes.all():  # no null value (a null has size 0): the sizes are known already
        value_column = _variable(pa.binary(), value_sizes, b"".join(cast(list[bytes], values)))
    else:
        value_column = _binaries(values)
    columns = [
        _binaries(list(map(Message.key, messages))),
        value_column,
        _repeated(topic.encode(), count),
        _fixed(types[3], np.full(count, partition, np.int32)),
        _fixed(types[4], offsets),
        _fixed(types[5], micros, kinds != TIMESTAMP_NOT_AVAILABLE),
        _timestamp_type_names().take(_fixed(pa.int64(), kinds)),
        _headers(cast(list[RecordHeaders], list(map(Message.headers, messages)))),
        epochs,
    ]
    return pa.RecordBatch.from_arrays(columns, schema=ARROW_SCHEMA)


def _end_of_input_batch(topic: str, partition: int) -> pa.RecordBatch:
    """The end-of-input row: offset END_OF_INPUT_OFFSET, the partition's topic and partition, NULL elsewhere."""
    columns = [pa.nulls(1, field.type) for field in ARROW_SCHEMA]
    columns[2] = _repeated(topic.encode(), 1)
    columns[3] = _fixed(ARROW_SCHEMA.types[3], np.full(1, partition, np.int32))
    columns[4] = _fixed(ARROW_SCHEMA.types[4], np.full(1, END_OF_INPUT_OFFSET, np.int64))
    return pa.RecordBatch.from_arrays(columns, schema=ARROW_SCHEMA)


def _fixed(type_: pa.DataType, values: np.ndarray, valid: np.ndarray | bool = True) -> pa.Array:
    """A fixed-width array over `values`' memory; `valid` is a mask, or True/False for all values."""
    count = len(values)
    if valid is True or (not isinstance(valid, bool) and valid.all()):
        return pa.Array.from_buffers(type_, count, [None, pa.py_buffer(values)], null_count=0)
    if valid is False:
        return pa.nulls(count, type_)
    bitmap = pa.py_buffer(np.packbits(valid, bitorder="little"))
    return pa.Array.from_buffers(type_, count, [bitmap, pa.py_buffer(values)], null_count=count - int(valid.sum()))


def _binaries(values: list[bytes | None]) -> pa.Array:
    """A binary array; None is null."""
    count = len(values)
    try:
        sizes = np.fromiter(map(len, cast(list[bytes], values)), dtype=np.int32, count=count)
    except TypeError:  # len(None): there are nulls
        valid = np.fromiter(map(operator.is_not, values, repeat(None)), dtype=np.bool_, count=count)
        if not valid.any():
            return pa.nulls(count, pa.binary())
        filled = [value or b"" for value in values]
        return _variable(pa.binary(), np.fromiter(map(len, filled), np.int32, count), b"".join(filled), valid)
    return _variable(pa.binary(), sizes, b"".join(cast(list[bytes], values)))


def _variable(type_: pa.DataType, lengths: np.ndarray, data: bytes, valid: np.ndarray | None = None) -> pa.Array:
    """A binary or string array from each value's length and all values' bytes, concatenated."""
    count = len(lengths)
    offsets = np.zeros(count + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    if valid is None:
        return pa.Array.from_buffers(type_, count, [None, pa.py_buffer(offsets), pa.py_buffer(data)], null_count=0)
    bitmap = pa.py_buffer(np.packbits(valid, bitorder="little"))
    return pa.Array.from_buffers(
        type_, count, [bitmap, pa.py_buffer(offsets), pa.py_buffer(data)], null_count=count - int(valid.sum())
    )


def _repeated(text: bytes, count: int) -> pa.Array:
    """A string array holding `text` `count` times."""
    return _variable(pa.string(), np.full(count, len(text), dtype=np.int32), text * count)


def _int32s(values: list[int | None]) -> pa.Array:
    """An int32 array; None is null."""
    valid = np.fromiter(map(operator.is_not, values, repeat(None)), dtype=np.bool_, count=len(values))
    numbers = np.fromiter((-1 if value is None else value for value in values), dtype=np.int32, count=len(values))
    return _fixed(pa.int32(), numbers, valid)


def _headers(headers: list[RecordHeaders]) -> pa.Array:
    """The headers column: a list of (key, value) per record, empty when a record has none."""
    count = len(headers)
    header_type = ARROW_SCHEMA.types[7]
    lists = [pairs or () for pairs in headers] if any(headers) else []
    sizes = np.fromiter(map(len, lists), dtype=np.int32, count=count) if lists else np.zeros(count, np.int32)
    offsets = np.zeros(count + 1, dtype=np.int32)
    np.cumsum(sizes, out=offsets[1:])
    pairs = [pair for pairs in lists for pair in pairs]
    names = [name.encode() for name, _ in pairs]
    entries = pa.StructArray.from_arrays(
        [
            _variable(pa.string(), np.fromiter(map(len, names), np.int32, len(names)), b"".join(names)),
            _binaries([value for _, value in pairs]),
        ],
        fields=list(header_type.value_type),
    )
    return pa.ListArray.from_arrays(_fixed(pa.int32(), offsets), entries, type=header_type)


@functools.cache
def _timestamp_type_names() -> pa.Array:
    """Names indexed by confluent_kafka's timestamp type (TIMESTAMP_NOT_AVAILABLE, TIMESTAMP_CREATE_TIME...)."""
    names = [TIMESTAMP_TYPES.get(kind, "NoTimestampType").encode() for kind in range(max(TIMESTAMP_TYPES) + 1)]
    return _variable(pa.string(), np.array([len(name) for name in names], np.int32), b"".join(names))
