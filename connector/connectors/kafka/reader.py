"""Executor side of the `flink-kafka` source: reading one planned offset range with a cached consumer.

A `KafkaInputPartition` carries the exact range the planner chose; a worker process is reused across
tasks, so its consumers are cached (`_CONSUMERS`, with the topics each has metadata for) and closed at exit.
"""

from __future__ import annotations

import atexit
import gc
import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import cast

import pyarrow as pa
from confluent_kafka import Consumer, KafkaError, KafkaException, Message
from confluent_kafka import TopicPartition as KafkaTopicPartition
from pyspark import TaskContext
from pyspark.sql.datasource import InputPartition

from connector.connectors.kafka.client_log import logged
from connector.connectors.kafka.commit import CommitMode, commit_mode
from connector.connectors.kafka.errors import DataLossError, KafkaSourceError
from connector.connectors.kafka.offsets import data_loss_message
from connector.connectors.kafka.records import RecordBuffer, end_of_input_batch
from connector.connectors.kafka.retries import retrying
from connector.connectors.kafka.settings import SourceSettings

log = logging.getLogger(__name__)

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
# How long one Kafka request of the source (a reader's or the planner's) waits for the broker.
REQUEST_TIMEOUT_SECONDS = 30.0


@dataclass(frozen=True)
class KafkaInputPartition(InputPartition):
    """Records [start, end) of one Kafka partition: everything an executor needs to read them; with
    `end_of_input`, the end-of-input row follows them."""

    topic: str
    partition: int
    start: int
    end: int
    end_of_input: bool = False


@dataclass
class _CachedConsumer:
    """A reader consumer kept by a worker process, and the topics it has asked the broker's metadata for."""

    consumer: Consumer
    topics: set[str] = field(default_factory=set)

    def know(self, topic: str, timeout: float) -> None:
        """Ask for a topic's metadata before its first assignment to this consumer.

        A consumer that already runs learns a newly assigned topic's leaders only at librdkafka's next
        one-second topic scan: the first records of a new topic came 0.6-1.0 s after the assignment, against
        3 ms after this request (measured; each pipeline a test session runs reads new topics). A failed
        request is left to the read, which names the topic, partition and offset when it times out; the time
        it took counts against the read's 'scan.poll-timeout' (see `read_partition`).
        """
        if topic in self.topics:
            return
        try:
            self.consumer.list_topics(topic, timeout=timeout)
        except KafkaException as error:
            log.debug("Metadata request for topic '%s' failed (the read goes on): %s", topic, error)
            return
        self.topics.add(topic)


_CONSUMERS: dict[tuple[tuple[str, str], ...], _CachedConsumer] = {}


def close_cached_consumers() -> None:
    """Close this process's reader consumers (at exit of a worker that ends normally, and in tests)."""
    while _CONSUMERS:
        _, cached = _CONSUMERS.popitem()
        cached.consumer.close()


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
    cached = _CONSUMERS.get(key)
    if cached is None:
        cached = _CONSUMERS[key] = _CachedConsumer(Consumer(logged(config)))
    consumer = cached.consumer
    _freeze_long_lived_objects()
    collecting = gc.isenabled()
    gc.disable()
    try:
        if partition.start < partition.end:
            started = time.monotonic()  # a broker that cannot be reached fails the read after one poll timeout
            cached.know(partition.topic, min(settings.poll_timeout_ms / 1000.0, REQUEST_TIMEOUT_SECONDS))
            yield from _read_range(consumer, settings, partition, started)
            consumer.unassign()  # no prefetching (memory, fetch requests) while the consumer waits for a task
        if partition.end_of_input:
            yield end_of_input_batch(
                partition.topic, partition.partition, settings.value_json_fields, settings.record_columns
            )
    except BaseException:
        _CONSUMERS.pop(key, None)  # unknown state after an error: start the next task afresh
        consumer.close()
        raise
    finally:
        if collecting:
            gc.enable()


def _read_range(
    consumer: Consumer, settings: SourceSettings, part: KafkaInputPartition, started: float
) -> Iterator[pa.RecordBatch]:
    """Records [start, end) in Arrow batches of bounded size; stops when the position reaches `end`.

    Offsets may have gaps (compaction, transaction markers, aborted records under read_committed), so
    the range is done when a record at or beyond `end`, or the end of the log at or beyond `end`, is seen.
    Until the first records come, 'scan.poll-timeout' counts from `started`; then from the last records.
    """
    consumer.assign([KafkaTopicPartition(part.topic, part.partition, part.start)])
    batch = RecordBuffer(part.topic, part.partition, settings.value_json_fields, settings.record_columns)
    position = part.start
    timeout = settings.poll_timeout_ms / 1000.0
    deadline = started + timeout
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
    batch: RecordBuffer,
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

        def watermarks() -> tuple[int, int]:
            low, high = consumer.get_watermark_offsets(tp, timeout=REQUEST_TIMEOUT_SECONDS, cached=False)
            if low < 0 or high < 0:  # no leader to ask yet (a broker restarting): not an answer
                unknown = KafkaError(KafkaError._NOENT, "no offsets: the partition has no leader", retriable=True)
                raise KafkaException(unknown)
            return low, high

        # A broker coming back from a restart answers fetches before it knows its logs: the reset event it causes is
        # judged against offsets it can give, asked again for 'scan.retry-timeout'.
        what = f"request for the offsets of {part.topic}-{part.partition}"
        earliest, latest = retrying(watermarks, what, settings.retry_timeout_ms / 1000.0)
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
