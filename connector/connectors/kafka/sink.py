"""The `flink-kafka-sink` Python Data Source: rows to Kafka with Flink's Kafka sink semantics.

    spark.dataSource.register(KafkaSink)
    micro_batch.write.format("flink-kafka-sink").mode("append") \
        .options(**table.options, **{"batch-id": str(batch_id), "query-id": query_id}).save()

`kafka.writing` calls it from foreachBatch, so it serves every output mode (Spark's Python streaming
writers support append only) and knows the micro-batch id, which exactly-once needs.

Input columns, by name (`kafka.writing` prepares them from a table): `value` BINARY (NULL: a tombstone),
and optionally `key` BINARY, `topic` STRING, `headers` MAP<STRING, BINARY>, `timestamp` TIMESTAMP (NULL:
the producer stamps the current time). Options are the table's Flink options, verbatim: 'topic' (one topic,
or a ';' list the `topic` column must pick from), 'topic-pattern', 'properties.*' (producer configuration),
'sink.partitioner', 'sink.delivery-guarantee' (or the deprecated 'sink.semantic'),
'sink.transactional-id-prefix'. Records are produced with confluent-kafka in the executors (`write()`).

Partitioners: 'default' is the Java client's (murmur2 of the key, so a key lands where a Java or Flink
producer would put it; NULL keys are spread), 'fixed' sends everything a Spark write task produces to one
partition, `partitions[task % count]` (Flink's FlinkFixedPartitioner, a Spark task standing for a Flink
subtask), 'round-robin' leaves the choice to the client (keys are NULL then).

Delivery guarantees:

* 'none': `write()` hands records to the producer and returns without waiting for acknowledgements.
* 'at-least-once' (the default): `write()` flushes the producer, so every record is acknowledged or failed,
  and checks the failures reported before it returns its commit message: a micro-batch commits only after
  Kafka acknowledged all its records. A failed delivery fails the task, naming how many records failed and
  topic, partition and error of the first; Spark then retries it.
* 'exactly-once': each write task produces inside a Kafka transaction (transactional.id
  '<prefix>-<task partition>', so a newer attempt fences an older one) and commits it together with a
  marker: consumer group '<prefix>-<task partition>' gets offset batchId + 1, with the query id as
  metadata, on partition 0 of the first sink topic. When Spark runs a batch again after a failure, tasks
  whose transaction is committed find their marker and skip, so every record is committed exactly once.
  Readers must use 'isolation.level' = 'read_committed'. As for Spark's own exactly-once sinks, a batch
  must produce the same rows per task when it runs again (deterministic queries).

Throughput: in Python, a record costs little more than its produce() call. Columns are converted per Arrow
batch (missing or all-NULL key, timestamp and headers columns are skipped), topics are checked once a batch,
produce() gets its arguments by position (keywords cost as much again), and producers report failed
deliveries only ('delivery.report.only.error', to one callback per producer), so success runs no Python.
Producer settings are librdkafka's defaults unless 'properties.*' set them, as Flink's KafkaSink leaves the
Java client's: linger.ms 5 (the Java default since Kafka 4.0; with 0, the older default, a producer on this
machine wrote a third as many records per second), acks all, no compression.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any

import pyarrow as pa
from confluent_kafka import Consumer, KafkaError, KafkaException, Message, Producer, TopicPartition
from pyspark import TaskContext
from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    WriterCommitMessage,
)
from pyspark.sql.types import StructType

from connector.connectors.kafka.client_log import logged
from connector.connectors.kafka.java_properties import librdkafka_properties
from connector.connectors.kafka.retries import raise_transient_topic_error, retrying
from connector.connectors.kafka.settings import NOT_CLIENT_PROPERTIES
from connector.errors import KafkaSqlError

log = logging.getLogger(__name__)

GUARANTEES = ("none", "at-least-once", "exactly-once")
PARTITIONERS = ("default", "fixed", "round-robin")
BATCH_ID_OPTION = "batch-id"  # set by foreachBatch writers; streaming writes read it from the task
QUERY_ID_OPTION = "query-id"
REQUEST_TIMEOUT_SECONDS = 30.0
# How long a write task retries what Kafka calls retriable (a broker restarting, a coordinator loading, a leader
# moving) in the requests around its records: the fixed partitioner's metadata, the transaction's fencing, marker
# read, offsets and commit. The records themselves are retried by librdkafka until 'message.timeout.ms'.
RETRY_SECONDS = 180.0
# librdkafka: RD_KAFKA_PARTITION_UA, "let the partitioner choose".
UNASSIGNED = -1
DEFAULT_MESSAGE_MAX_BYTES = "1000000"  # librdkafka's message.max.bytes, as Java's max.request.size (1 MiB)
_PRODUCER_ONLY = frozenset(
    {
        "acks",
        "request.required.acks",
        "linger.ms",
        "queue.buffering.max.ms",
        "batch.size",
        "batch.num.messages",
        "compression.type",
        "compression.codec",
        "enable.idempotence",
        "transactional.id",
        "transaction.timeout.ms",
        "partitioner",
        "retries",
        "message.send.max.retries",
        "delivery.timeout.ms",
        "message.timeout.ms",
        "queue.buffering.max.messages",
        "queue.buffering.max.kbytes",
        "max.in.flight.requests.per.connection",
    }
)


class KafkaSinkError(KafkaSqlError):
    """A record could not be written (bad topic, failed delivery); the message says which and why."""


@dataclass(frozen=True)
class SinkSettings:
    """What a write task needs, parsed once on the driver from the table's options."""

    producer_config: dict[str, str]
    topics: tuple[str, ...]
    topic_pattern: str | None
    partitioner: str
    guarantee: str
    transactional_id_prefix: str | None
    batch_id: int | None = None
    query_id: str | None = None
    client_properties: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> SinkSettings:
        opts = {str(k).lower(): str(v) for k, v in options.items() if v is not None}
        properties = {k[len("properties.") :]: v for k, v in opts.items() if k.startswith("properties.")}
        if not properties.get("bootstrap.servers", "").strip():
            raise KafkaSinkError("Option 'properties.bootstrap.servers' is required, e.g. 'localhost:9092'.")
        topics = tuple(t.strip() for t in opts.get("topic", "").split(";") if t.strip())
        pattern = opts.get("topic-pattern") or None
        guarantee = (opts.get("sink.semantic") or opts.get("sink.delivery-guarantee") or "at-least-once").lower()
        guarantee = guarantee.replace("_", "-")
        if guarantee not in GUARANTEES:
            raise KafkaSinkError(f"Invalid 'sink.delivery-guarantee' '{guarantee}': expected one of {GUARANTEES}.")
        partitioner = opts.get("sink.partitioner", "default").lower()
        if partitioner not in PARTITIONERS:
            raise KafkaSinkError(
                f"'sink.partitioner' = '{partitioner}' is not supported on Spark (a Java class cannot run here); "
                f"use one of {', '.join(PARTITIONERS)}."
            )
        prefix = opts.get("sink.transactional-id-prefix") or None
        if guarantee == "exactly-once" and prefix is None:
            raise KafkaSinkError(
                "sink.transactional-id-prefix must be specified when using DeliveryGuarantee.EXACTLY_ONCE."
            )
        if guarantee == "exactly-once" and not topics:
            raise KafkaSinkError("'sink.delivery-guarantee' = 'exactly-once' needs the 'topic' option.")
        try:
            client = librdkafka_properties({k: v for k, v in properties.items() if k not in NOT_CLIENT_PROPERTIES})
        except ValueError as error:
            raise KafkaSinkError(str(error)) from None
        producer = {"partitioner": "murmur2_random", **client}  # Java's default partitioner
        batch_id = opts.get(BATCH_ID_OPTION)
        return cls(
            producer_config=producer,
            topics=topics,
            topic_pattern=pattern,
            partitioner=partitioner,
            guarantee=guarantee,
            transactional_id_prefix=prefix,
            batch_id=int(batch_id) if batch_id is not None else None,
            query_id=opts.get(QUERY_ID_OPTION),
            client_properties={k: v for k, v in client.items() if k not in _PRODUCER_ONLY},
        )


class KafkaSink(DataSource):
    """`format("flink-kafka-sink")`: writes one batch (a micro-batch, from foreachBatch) to Kafka."""

    @classmethod
    def name(cls) -> str:
        return "flink-kafka-sink"

    def writer(self, schema: StructType, overwrite: bool) -> KafkaBatchWriter:
        _check_schema(schema)
        return KafkaBatchWriter(SinkSettings.from_options(self.options))


def _check_schema(schema: StructType) -> None:
    names = set(schema.fieldNames())
    unknown = names - {"key", "value", "topic", "headers", "timestamp"}
    if "value" not in names or unknown:
        raise KafkaSinkError(
            "The flink-kafka-sink writes columns value (required), key, topic, headers and timestamp; got "
            f"{', '.join(sorted(names))}."
        )


@dataclass
class KafkaCommitMessage(WriterCommitMessage):
    """What one write task did, for the driver-side commit."""

    records: int
    skipped: bool = False


class KafkaBatchWriter(DataSourceArrowWriter):
    """Writes one micro-batch; every task flushes before it returns, so the batch commits after its records."""

    def __init__(self, settings: SinkSettings) -> None:
        self.settings = settings

    def write(self, iterator: Iterator[pa.RecordBatch]) -> KafkaCommitMessage:
        return write_batches(self.settings, iterator)

    def commit(self, messages: Sequence[WriterCommitMessage | None]) -> None:
        log.debug("%s records written", _count(messages))

    def abort(self, messages: Sequence[WriterCommitMessage | None]) -> None:
        warn_failed_batch(self.settings, _count(messages))


def warn_failed_batch(settings: SinkSettings, completed: int) -> None:
    """The log line of a micro-batch whose Kafka write failed: what its completed tasks wrote, what became of the
    failed tasks' records."""
    guarantee = settings.guarantee
    fate = "were aborted" if guarantee == "exactly-once" else "may have been delivered"
    log.warning(
        "Kafka write of a micro-batch failed: the tasks that completed produced %s record(s), those of the failed "
        "task(s) %s ('%s'); the batch runs again when the query restarts.",
        completed,
        fate,
        guarantee,
    )


def _count(messages: Sequence[WriterCommitMessage | None]) -> int:
    return sum(m.records for m in messages if isinstance(m, KafkaCommitMessage))


# ---------------------------------------------------------------------------------------------------------
# Executor side
# ---------------------------------------------------------------------------------------------------------


class _Deliveries:
    """The failed deliveries a producer reported since `reset()`: how many, and topic, partition and error
    of the first (a producer's callback, so a micro-batch of bad records keeps one message, not millions)."""

    def __init__(self) -> None:
        self.failed = 0
        self.first = ""

    def __call__(self, error: KafkaError | None, message: Message) -> None:
        if error is not None:
            self.failed += 1
            if self.failed == 1:
                self.first = f"topic '{message.topic()}' partition {message.partition()}: {error.str()}"
                if error.code() == KafkaError.MSG_SIZE_TOO_LARGE:
                    size = len(message.value() or b"") + len(message.key() or b"")
                    self.first += (
                        f" (a record of {size} bytes; the broker's limit is the topic's max.message.bytes)"
                    )

    def reset(self) -> None:
        self.failed = 0
        self.first = ""

    def raise_if_failed(self) -> None:
        if self.failed:
            raise KafkaSinkError(f"Failed to deliver {self.failed} record(s) to Kafka; first: {self.first}")


_producers: dict[tuple[tuple[str, str], ...], tuple[Producer, _Deliveries]] = {}
_producers_lock = threading.Lock()


def _cached_producer(config: Mapping[str, str]) -> tuple[Producer, _Deliveries]:
    """One producer per configuration and Python worker, reused across micro-batches, with its failures."""
    key = tuple(sorted(config.items()))
    with _producers_lock:
        cached = _producers.get(key)
        if cached is None:
            deliveries = _Deliveries()
            cached = _producers[key] = (_new_producer(config, deliveries), deliveries)
        return cached


def close_cached_producers() -> None:
    """Close this process's cached producers (before the broker they talk to goes away, in tests)."""
    with _producers_lock:
        while _producers:
            _, (producer, _) = _producers.popitem()
            producer.close()


def _new_producer(config: Mapping[str, str], deliveries: _Deliveries) -> Producer:
    """A producer that reports failed deliveries only, to `deliveries`: a delivered record costs no Python call."""
    try:
        return Producer(logged({**config, "on_delivery": deliveries, "delivery.report.only.error": True}))
    except KafkaException as error:
        raise KafkaSinkError(f"Invalid Kafka producer configuration ('properties.*'): {error}") from None


class _Router:
    """Chooses the topic and partition of each record as Flink's serialization schema does."""

    def __init__(self, settings: SinkSettings, task: int, producer: Producer) -> None:
        self.settings = settings
        self.task = task
        self.producer = producer
        self.pattern = re.compile(settings.topic_pattern) if settings.topic_pattern else None
        self.fixed: dict[str, int] = {}

    def targets(self, batch: pa.RecordBatch) -> tuple[Iterable[str], Iterable[int]]:
        """Topic and partition of every row of `batch`, each topic checked once per batch."""
        if len(self.settings.topics) == 1:  # a single 'topic' wins over the topic column, as in Flink
            topic = self.settings.topics[0]
            return repeat(topic), repeat(self.partition(topic))
        if "topic" in batch.schema.names:
            column: list[Any] = batch.column("topic").to_pylist()
        else:
            column = [None] * batch.num_rows
        for value in dict.fromkeys(column):
            self.topic(value)
        if self.settings.partitioner != "fixed":
            return column, repeat(UNASSIGNED)
        return column, [self.partition(topic) for topic in column]

    def topic(self, column_value: str | None) -> str:
        topics = self.settings.topics
        if column_value is None:
            raise KafkaSinkError(
                "The topic of the sink record is not valid. Expected a single topic but no topic is set."
            )
        if topics and column_value not in topics:
            raise KafkaSinkError(
                f"The topic of the sink record ('{column_value}') is not contained in the topics "
                f"{list(topics)} that are allowed."
            )
        if self.pattern is not None and not self.pattern.fullmatch(column_value):
            raise KafkaSinkError(
                f"The topic of the sink record ('{column_value}') does not match the topic pattern "
                f"{self.settings.topic_pattern} that is allowed."
            )
        return column_value

    def partition(self, topic: str) -> int:
        if self.settings.partitioner != "fixed":
            return UNASSIGNED
        chosen = self.fixed.get(topic)
        if chosen is None:

            def lookup() -> Any:
                topics = self.producer.list_topics(topic, timeout=REQUEST_TIMEOUT_SECONDS).topics
                raise_transient_topic_error(topics, lambda name: name == topic)
                return topics.get(topic)

            metadata = retrying(lookup, f"metadata request for topic '{topic}'", RETRY_SECONDS)
            if metadata is None or metadata.error is not None or not metadata.partitions:
                raise KafkaSinkError(
                    f"Cannot find the partitions of topic '{topic}': {getattr(metadata, 'error', None)}"
                )
            partitions = sorted(metadata.partitions)
            chosen = self.fixed[topic] = partitions[self.task % len(partitions)]
        return chosen


def _optional(batch: pa.RecordBatch, name: str, absent: Any) -> Iterable[Any]:
    """Python values of column `name`, or `absent` for every row when the column is missing or all NULL."""
    if name not in batch.schema.names:
        return repeat(absent)
    array = batch.column(name)
    if array.null_count == len(array):
        return repeat(absent)
    if name == "timestamp":  # epoch milliseconds; 0 lets the producer stamp the current time
        return [0 if m is None else m // 1000 for m in array.cast(pa.int64()).to_pylist()]
    return array.to_pylist()


def _produce_all(producer: Producer, router: _Router, batches: Iterator[pa.RecordBatch]) -> int:
    """Hand every row to the producer. produce() takes its arguments by position, in the order of
    confluent-kafka's C signature (topic, value, key, partition, callback, on_delivery, timestamp, headers):
    keywords cost as much again as the call itself."""
    produce = producer.produce
    count = 0
    for batch in batches:
        topics, partitions = router.targets(batch)
        rows = zip(
            batch.column("value").to_pylist(),
            _optional(batch, "key", None),
            topics,
            partitions,
            _optional(batch, "timestamp", 0),
            _optional(batch, "headers", None),
            strict=False,  # the absent columns repeat forever; the values end the rows
        )
        for value, key, topic, partition, stamp, headers in rows:
            while True:
                try:
                    produce(topic, value, key, partition, None, None, stamp, headers)
                    break
                except BufferError:  # the local queue is full: let deliveries drain it
                    producer.poll(0.1)
                except KafkaException as error:
                    raise _produce_error(error, topic, value, key, router.settings) from None
        count += batch.num_rows
        producer.poll(0)
    return count


def _produce_error(
    error: KafkaException, topic: str, value: bytes | None, key: bytes | None, settings: SinkSettings
) -> KafkaSinkError:
    """A record the producer refused, in words: over the size limit, with the limit and the option that sets it."""
    kafka_error = error.args[0] if error.args else None
    if isinstance(kafka_error, KafkaError) and kafka_error.code() == KafkaError.MSG_SIZE_TOO_LARGE:
        size = len(value or b"") + len(key or b"")
        limit = settings.producer_config.get("message.max.bytes", DEFAULT_MESSAGE_MAX_BYTES)
        return KafkaSinkError(
            f"A record of {size} bytes (key and value) for topic '{topic}' is over the producer's limit of {limit} "
            "bytes. Raise it with 'properties.max.request.size' (and the topic's max.message.bytes on the broker), "
            "or write smaller records."
        )
    return KafkaSinkError(f"Kafka producer refused a record for topic '{topic}': {error}")


def _task() -> tuple[int, int | None, str | None]:
    """(task partition, micro-batch id, query id) of the running Spark task."""
    context = TaskContext.get()
    if context is None:
        return 0, None, None
    batch = context.getLocalProperty("streaming.sql.batchId")
    return (
        context.partitionId(),
        int(batch) if batch is not None else None,
        context.getLocalProperty("sql.streaming.queryId"),
    )


def write_batches(settings: SinkSettings, batches: Iterator[pa.RecordBatch]) -> KafkaCommitMessage:
    """Produce every row of one write task with the table's delivery guarantee."""
    task, batch_id, query_id = _task()
    if settings.guarantee == "exactly-once":
        batch_id = settings.batch_id if settings.batch_id is not None else batch_id
        query_id = settings.query_id or query_id
        if batch_id is None:
            raise KafkaSinkError("exactly-once delivery needs the micro-batch id, which this task does not have.")
        return _write_transaction(settings, task, batch_id, query_id or "", batches)
    producer, deliveries = _cached_producer(settings.producer_config)
    if settings.guarantee == "at-least-once":
        producer.flush()  # what an earlier task left in flight ('none', or it failed) is not this task's
        deliveries.reset()
    count = _produce_all(producer, _Router(settings, task, producer), batches)
    if settings.guarantee == "at-least-once":
        producer.flush()  # every record is acknowledged or failed (message.timeout.ms) when this returns
        deliveries.raise_if_failed()
    return KafkaCommitMessage(count)


def _write_transaction(
    settings: SinkSettings, task: int, batch_id: int, query_id: str, batches: Iterator[pa.RecordBatch]
) -> KafkaCommitMessage:
    prefix = settings.transactional_id_prefix
    transactional_id = f"{prefix}-{task}"
    marker = TopicPartition(settings.topics[0], 0)
    deliveries = _Deliveries()
    producer = _new_producer({**settings.producer_config, "transactional.id": transactional_id}, deliveries)
    consumer = Consumer(
        logged(
            {
                **settings.client_properties,
                "group.id": transactional_id,
                "enable.auto.commit": False,
                "isolation.level": "read_committed",
            }
        )
    )
    step = "transaction init (fencing older attempts)"
    try:
        # fences older attempts and aborts what they left open; retriable until it succeeds (librdkafka's advice)
        retrying(lambda: producer.init_transactions(REQUEST_TIMEOUT_SECONDS), step, RETRY_SECONDS)
        step = "marker read"
        read = retrying(lambda: consumer.committed([marker], timeout=REQUEST_TIMEOUT_SECONDS), step, RETRY_SECONDS)
        done = read[0]
        if done.offset > batch_id and (done.metadata or "") == query_id:
            for _ in batches:  # this task's records of this batch are committed already
                pass
            return KafkaCommitMessage(0, skipped=True)
        producer.begin_transaction()
        try:
            step = "records"
            count = _produce_all(producer, _Router(settings, task, producer), batches)
            producer.flush()
            deliveries.raise_if_failed()
            step = "marker offsets"
            progress = [TopicPartition(marker.topic, 0, batch_id + 1, metadata=query_id)]
            group = consumer.consumer_group_metadata()
            retrying(
                lambda: producer.send_offsets_to_transaction(progress, group, REQUEST_TIMEOUT_SECONDS),
                step,
                RETRY_SECONDS,
            )
            step = "transaction commit"
            retrying(lambda: producer.commit_transaction(REQUEST_TIMEOUT_SECONDS), step, RETRY_SECONDS)
        except BaseException as failure:
            try:
                producer.abort_transaction(REQUEST_TIMEOUT_SECONDS)
            except KafkaException as error:  # the first failure is what the user needs; the abort's is logged
                log.warning("Aborting Kafka transaction '%s' after %s failed too: %s", transactional_id, failure, error)
            raise
        return KafkaCommitMessage(count)
    except KafkaException as error:
        raise KafkaSinkError(f"Kafka transaction '{transactional_id}' failed at its {step}: {error}") from None
    finally:
        consumer.close()
        producer.flush(REQUEST_TIMEOUT_SECONDS)
