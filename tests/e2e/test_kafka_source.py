"""The flink-kafka source against a real broker and real Spark streaming queries.

Each test produces records, runs `spark.readStream.format("flink-kafka")` with a checkpoint in tmp_path,
and compares exactly which records came out (and, for commits, what the consumer group holds).
"""

from __future__ import annotations

import json
import re
import socket
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient
from pyspark.errors import PySparkException

from connector.connectors.kafka import reader
from connector.connectors.kafka.commit import commit_offsets_now
from connector.connectors.kafka.errors import DataLossError, KafkaSourceError
from connector.connectors.kafka.offsets import to_json
from connector.connectors.kafka.reader import KafkaInputPartition, close_cached_consumers, read_partition, reader_config
from connector.connectors.kafka.records import END_OF_INPUT_OFFSET, MAX_BATCH_RECORDS
from connector.connectors.kafka.settings import RECORD_COLUMNS, SourceSettings
from connector.connectors.kafka.source import KafkaSource
from connector.dev import broker

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

Produce = Callable[[str, Sequence[tuple[Any, ...]]], None]
# (topic, partition, offset, value) of one record read by a query
Read = tuple[str, int, int, str]


@pytest.fixture
def source(spark: SparkSession) -> SparkSession:
    spark.dataSource.register(KafkaSource)
    return spark


class Query:
    """A streaming query of the source whose micro-batches are collected on the driver."""

    def __init__(
        self, spark: SparkSession, options: dict[str, str], checkpoint: Path, available_now: bool = True
    ) -> None:
        self.batches: list[list[Read]] = []
        self.rows: list[Any] = []
        frame = spark.readStream.format("flink-kafka").options(**options).load()
        writer = frame.writeStream.foreachBatch(self._collect).option("checkpointLocation", str(checkpoint))
        if available_now:
            writer = writer.trigger(availableNow=True)
        self.query = writer.start()

    def _collect(self, frame: DataFrame, _batch_id: int) -> None:
        rows = frame.collect()
        self.rows.extend(rows)
        self.batches.append([(r.topic, r.partition, r.offset, bytes(r.value or b"").decode()) for r in rows])

    def progress(self, field: str) -> Any:
        """A JSON field (endOffset, latestOffset...) of the source in the last progress report."""
        last = self.query.lastProgress
        assert last is not None, "no progress reported"
        return json.loads(last["sources"][0][field])

    def finish(self, timeout: int = 120) -> Query:
        """Wait for a Trigger.AvailableNow query to end by itself (every partition reached its end)."""
        assert self.query.awaitTermination(timeout), "the query did not finish"
        return self

    def records(self) -> list[Read]:
        return sorted(record for batch in self.batches for record in batch)

    def stop(self) -> None:
        self.query.stop()


def options(bootstrap: str, topic: str, **extra: str) -> dict[str, str]:
    return {"topic": topic, "properties.bootstrap.servers": bootstrap, **extra}


def values(topic: str, partition: int, *numbered: tuple[int, str]) -> list[Read]:
    return [(topic, partition, offset, value) for offset, value in numbered]


def committed(bootstrap: str, group: str, topic: str, partitions: int) -> dict[int, int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        result = consumer.committed([TopicPartition(topic, p) for p in range(partitions)], timeout=30)
    finally:
        consumer.close()
    return {tp.partition: tp.offset for tp in result if tp.offset >= 0}


def failure(query: Query) -> str:
    from pyspark.errors import StreamingQueryException

    with pytest.raises(StreamingQueryException) as error:
        query.query.awaitTermination(120)
    return str(error.value)


def fill(produce: Produce, topic: str, partition: int, *texts: str) -> None:
    produce(topic, [(None, text, partition, None, None) for text in texts])


# ---- reading and the fresh-start modes -------------------------------------------------------------


@pytest.mark.slow
def test_earliest_offset_reads_every_record_with_its_metadata(
    source: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Produce,
    tmp_path: Path,
) -> None:
    topic = topic_factory(partitions=2)
    produce(
        topic,
        [
            (b"k1", b"a", 0, 1_700_000_000_123, [("h1", b"x"), ("h2", None)]),
            (None, b"b", 0, 1_700_000_001_000, None),
            (b"k3", None, 1, 1_700_000_002_000, None),
        ],
    )
    query = Query(source, options(kafka_bootstrap, topic, **{"scan.startup.mode": "earliest-offset"}), tmp_path)
    query.finish()
    rows = [row.asDict() for row in sorted(query.rows, key=lambda r: (r.partition, r.offset))]
    assert rows == [  # timestamps are UTC (the session time zone of the tests)
        {
            "key": bytearray(b"k1"),
            "value": bytearray(b"a"),
            "topic": topic,
            "partition": 0,
            "offset": 0,
            "timestamp": datetime(2023, 11, 14, 22, 13, 20, 123000),
            "timestamp_type": "CreateTime",
            "headers": [_header("h1", b"x"), _header("h2", None)],
            "leader_epoch": 0,
        },
        {
            "key": None,
            "value": bytearray(b"b"),
            "topic": topic,
            "partition": 0,
            "offset": 1,
            "timestamp": datetime(2023, 11, 14, 22, 13, 21),
            "timestamp_type": "CreateTime",
            "headers": [],
            "leader_epoch": 0,
        },
        {
            "key": bytearray(b"k3"),
            "value": None,
            "topic": topic,
            "partition": 1,
            "offset": 0,
            "timestamp": datetime(2023, 11, 14, 22, 13, 22),
            "timestamp_type": "CreateTime",
            "headers": [],
            "leader_epoch": 0,
        },
    ]


def test_a_reader_asked_for_some_optional_columns_reads_only_those(
    source: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Produce,
    tmp_path: Path,
) -> None:
    """kafka-sql's engine asks for the optional columns its table reads: the others are not built at all."""
    topic = topic_factory(partitions=1)
    produce(topic, [(b"k1", b"a", 0, 1_700_000_000_123, [("h1", b"x")]), (None, b"b", 0, 1_700_000_001_000, None)])
    asked = {"scan.startup.mode": "earliest-offset", RECORD_COLUMNS: "headers,timestamp"}
    query = Query(source, options(kafka_bootstrap, topic, **asked), tmp_path)
    query.finish()
    located = {"topic": topic, "partition": 0}
    assert [row.asDict() for row in sorted(query.rows, key=lambda r: r.offset)] == [
        {"value": bytearray(b"a"), **located, "offset": 0, "timestamp": datetime(2023, 11, 14, 22, 13, 20, 123000),
         "headers": [_header("h1", b"x")]},
        {"value": bytearray(b"b"), **located, "offset": 1, "timestamp": datetime(2023, 11, 14, 22, 13, 21),
         "headers": []},
    ]  # fmt: skip

    unknown = options(kafka_bootstrap, topic, **{**asked, RECORD_COLUMNS: "key,epoch"})
    with pytest.raises(PySparkException, match="unknown columns epoch; the optional columns are key, timestamp, "):
        source.readStream.format("flink-kafka").options(**unknown).load()


def _header(key: str, value: bytes | None) -> Any:
    from pyspark.sql import Row

    return Row(key=key, value=None if value is None else bytearray(value))


@pytest.mark.slow
def test_latest_offset_reads_only_records_produced_after_the_start(
    source: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Produce,
    tmp_path: Path,
) -> None:
    topic = topic_factory()
    fill(produce, topic, 0, "old-0", "old-1")
    query = Query(source, options(kafka_bootstrap, topic, **{"scan.startup.mode": "latest-offset"}), tmp_path, False)
    try:
        query.query.processAllAvailable()
        fill(produce, topic, 0, "new-2", "new-3")
        query.query.processAllAvailable()
    finally:
        query.stop()
    assert query.records() == values(topic, 0, (2, "new-2"), (3, "new-3"))


@pytest.mark.slow
def test_group_offsets_start_from_the_committed_offsets(
    source: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Produce,
    tmp_path: Path,
) -> None:
    topic = topic_factory(partitions=2)
    fill(produce, topic, 0, "a0", "a1", "a2")
    fill(produce, topic, 1, "b0", "b1")
    opts = options(kafka_bootstrap, topic, **{"properties.group.id": f"g-{topic}"})
    commit_offsets_now(opts, to_json({(topic, 0): 2, (topic, 1): 1}))
    assert Query(source, opts, tmp_path).finish().records() == [(topic, 0, 2, "a2"), (topic, 1, 1, "b1")]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("reset", "expected"),
    [("earliest", [(0, "a0"), (1, "a1")]), ("latest", [(2, "a2")])],
)
def test_group_offsets_without_a_committed_offset_use_auto_offset_reset(
    source: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Produce,
    tmp_path: Path,
    reset: str,
    expected: list[tuple[int, str]],
) -> None:
    topic = topic_factory()
    fill(produce, topic, 0, "a0", "a1")
    opts = options(
        kafka_bootstrap,
        topic,
        **{"properties.group.id": f"g-{topic}", "properties.auto.offset.reset": reset},
    )
    query = Query(source, opts, tmp_path, available_now=False)
    try:
        query.query.processAllAvailable()
        fill(produce, topic, 0, "a2")
        query.query.processAllAvailable()
    finally:
        query.stop()
    if reset == "earliest":
        expected = [*expected, (2, "a2")]
    assert query.records() == values(topic, 0, *expected)


@pytest.mark.slow
def test_group_offsets_without_committed_offsets_or_reset_strategy_fail_clearly(
    source: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Produce,
    tmp_path: Path,
) -> None:
    topic = topic_factory(partitions=2)
    fill(produce, topic, 0, "a0")
    opts = options(kafka_bootstrap, topic, **{"properties.group.id": f"g-{topic}"})
    message = failure(Query(source, opts, tmp_path))
    assert (
        f"KafkaSourceError: Consumer group 'g-{topic}' has no committed offset for partition(s) "
        f"{topic}-0, {topic}-1" in message
    )
    assert "Set 'properties.auto.offset.reset' to 'earliest' or 'latest'" in message


@pytest.mark.slow
def test_timestamp_starts_at_the_first_record_at_or_after_it_else_at_latest(
    source: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Produce,
    tmp_path: Path,
) -> None:
    topic = topic_factory(partitions=2)
    produce(
        topic,
        [
            (None, "a0", 0, 1000, None),
            (None, "a1", 0, 2000, None),
            (None, "a2", 0, 3000, None),
            (None, "b0", 1, 1000, None),  # nothing at or after 2000: partition 1 starts at latest
        ],
    )
    opts = options(
        kafka_bootstrap, topic, **{"scan.startup.mode": "timestamp", "scan.startup.timestamp-millis": "2000"}
    )
    query = Query(source, opts, tmp_path, available_now=False)
    try:
        query.query.processAllAvailable()
        produce(topic, [(None, "b1", 1, 500, None)])  # read: it comes after the start position
        query.query.processAllAvailable()
    finally:
        query.stop()
    assert query.records() == [(topic, 0, 1, "a1"), (topic, 0, 2, "a2"), (topic, 1, 1, "b1")]


@pytest.mark.slow
def test_specific_offsets_and_the_fallback_of_unlisted_partitions(
    source: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Produce,
    tmp_path: Path,
) -> None:
    topic = topic_factory(partitions=3)
    for partition in range(3):
        fill(produce, topic, partition, *(f"p{partition}-{i}" for i in range(3)))
    opts = options(
        kafka_bootstrap,
        topic,
        **{
            "properties.group.id": f"g-{topic}",
            "scan.startup.mode": "specific-offsets",
            "scan.startup.specific-offsets": "partition:0,offset:2",
        },
    )
    commit_offsets_now(opts, to_json({(topic, 1): 1}))  # partition 1: the committed offset
    records = Query(source, opts, tmp_path).finish().records()
    assert records == [  # partition 2: no committed offset either, so the earliest
        (topic, 0, 2, "p0-2"),
        (topic, 1, 1, "p1-1"),
        (topic, 1, 2, "p1-2"),
        (topic, 2, 0, "p2-0"),
        (topic, 2, 1, "p2-1"),
        (topic, 2, 2, "p2-2"),
    ]


# ---- restore, discovery and commits ------------------------------------------------------------------


@pytest.mark.slow
def test_restore_resumes_old_partitions_and_reads_new_ones_from_earliest(
    source: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Produce,
    tmp_path: Path,
) -> None:
    topic = topic_factory(partitions=2)
    fill(produce, topic, 0, "a0", "a1")
    fill(produce, topic, 1, "b0")
    first = Query(source, options(kafka_bootstrap, topic, **{"scan.startup.mode": "earliest-offset"}), tmp_path)
    assert first.finish().records() == [(topic, 0, 0, "a0"), (topic, 0, 1, "a1"), (topic, 1, 0, "b0")]

    broker.add_partitions(kafka_bootstrap, topic, 4)
    grown = Producer({"bootstrap.servers": kafka_bootstrap})  # knows the new partitions
    for partition, value in ((0, b"a2"), (2, b"c0"), (2, b"c1"), (3, b"d0")):
        grown.produce(topic, value=value, partition=partition)
    assert grown.flush(30) == 0
    # The startup mode only applies to a fresh start; a restore resumes from the checkpoint.
    second = Query(source, options(kafka_bootstrap, topic, **{"scan.startup.mode": "latest-offset"}), tmp_path)
    assert second.finish().records() == [
        (topic, 0, 2, "a2"),
        (topic, 2, 0, "c0"),
        (topic, 2, 1, "c1"),
        (topic, 3, 0, "d0"),
    ]


@pytest.mark.slow
def test_restore_drops_partitions_no_longer_subscribed(
    source: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Produce,
    tmp_path: Path,
) -> None:
    kept, dropped = topic_factory(), topic_factory()
    fill(produce, kept, 0, "k0")
    fill(produce, dropped, 0, "d0")
    start = {"scan.startup.mode": "earliest-offset"}
    first = Query(source, options(kafka_bootstrap, f"{kept};{dropped}", **start), tmp_path).finish()
    assert first.records() == sorted([(kept, 0, 0, "k0"), (dropped, 0, 0, "d0")])
    fill(produce, kept, 0, "k1")
    fill(produce, dropped, 0, "d1")
    second = Query(source, options(kafka_bootstrap, kept, **start), tmp_path).finish()
    assert second.records() == [(kept, 0, 1, "k1")]
    assert second.progress("endOffset") == {kept: {"0": 2}}


@pytest.mark.slow
def test_topics_created_while_running_are_discovered_by_pattern(
    source: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Produce,
    tmp_path: Path,
) -> None:
    prefix = f"discovery-{int(time.time() * 1000)}"
    first = topic_factory(name_prefix=prefix)
    fill(produce, first, 0, "a0")
    opts = {
        "topic-pattern": re.escape(prefix) + "-.*",
        "properties.bootstrap.servers": kafka_bootstrap,
        "scan.startup.mode": "latest-offset",  # new topics are still read from their earliest offset
        "scan.topic-partition-discovery.interval": "500 ms",
    }
    query = Query(source, opts, tmp_path, available_now=False)
    try:
        query.query.processAllAvailable()
        second = topic_factory(name_prefix=prefix)
        fill(produce, second, 0, "b0", "b1")
        fill(produce, first, 0, "a1")
        expected = sorted([(first, 0, 1, "a1"), (second, 0, 0, "b0"), (second, 0, 1, "b1")])
        deadline = time.monotonic() + 60
        while query.records() != expected and time.monotonic() < deadline:
            query.query.processAllAvailable()
            time.sleep(0.5)
    finally:
        query.stop()
    assert query.records() == expected


@pytest.mark.slow
def test_group_offsets_are_committed_as_last_processed_plus_one(
    source: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Produce,
    tmp_path: Path,
) -> None:
    topic = topic_factory(partitions=2)
    fill(produce, topic, 0, *(f"a{i}" for i in range(5)))
    fill(produce, topic, 1, *(f"b{i}" for i in range(3)))
    group = f"g-{topic}"
    opts = options(
        kafka_bootstrap,
        topic,
        **{
            "properties.group.id": group,
            "properties.auto.offset.reset": "earliest",
            "scan.max-records-per-batch": "3",
        },
    )
    query = Query(source, opts, tmp_path).finish()
    assert len(query.batches) == 3
    assert committed(kafka_bootstrap, group, topic, 2) == {0: 5, 1: 3}
    # the progress of the last batch shows the commits made while planning it (one batch behind)
    metrics = query.progress("latestOffset")
    assert metrics["commitMode"] == "ON_CHECKPOINTS"
    assert metrics["commitsFailed"] == 0
    assert metrics["latest"] == {topic: {"0": 5, "1": 3}}
    assert metrics["lag"] == {topic: {"0": 0, "1": 0}}

    # A restart with new data continues from the checkpoint and commits again.
    fill(produce, topic, 1, "b3")
    assert Query(source, opts, tmp_path).finish().records() == [(topic, 1, 3, "b3")]
    assert committed(kafka_bootstrap, group, topic, 2) == {0: 5, 1: 4}


@pytest.mark.slow
def test_no_commit_when_commit_on_checkpoint_is_disabled(
    source: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Produce,
    tmp_path: Path,
) -> None:
    topic = topic_factory()
    fill(produce, topic, 0, "a0", "a1")
    group = f"g-{topic}"
    opts = options(
        kafka_bootstrap,
        topic,
        **{
            "properties.group.id": group,
            "properties.auto.offset.reset": "earliest",
            "properties.commit.offsets.on.checkpoint": "false",
        },
    )
    assert len(Query(source, opts, tmp_path).finish().records()) == 2
    assert committed(kafka_bootstrap, group, topic, 1) == {}
    commit_offsets_now(opts, to_json({(topic, 0): 2}))  # DISABLED: the engine's final commit is a no-op too
    assert committed(kafka_bootstrap, group, topic, 1) == {}


@pytest.mark.slow
def test_kafka_periodic_mode_leaves_commits_to_the_kafka_client(
    source: SparkSession, kafka_bootstrap: str, topic_factory: Callable[..., str], produce: Produce, tmp_path: Path
) -> None:
    topic = topic_factory()
    fill(produce, topic, 0, "a0", "a1", "a2")
    group = f"g-{topic}"
    opts = options(
        kafka_bootstrap,
        topic,
        **{
            "properties.group.id": group,
            "properties.auto.offset.reset": "earliest",
            "properties.commit.offsets.on.checkpoint": "false",
            "properties.enable.auto.commit": "true",
            "properties.auto.commit.interval.ms": "100",
        },
    )
    query = Query(source, opts, tmp_path).finish()
    assert len(query.records()) == 3
    assert query.progress("latestOffset")["commitMode"] == "KAFKA_PERIODIC"
    deadline = time.monotonic() + 30  # the executor's client commits on its own timer
    while committed(kafka_bootstrap, group, topic, 1) != {0: 3} and time.monotonic() < deadline:
        time.sleep(0.2)
    assert committed(kafka_bootstrap, group, topic, 1) == {0: 3}


def test_commit_offsets_now_commits_synchronously(kafka_bootstrap: str, topic_factory: Callable[..., str]) -> None:
    topic = topic_factory(partitions=2)
    opts = options(kafka_bootstrap, topic, **{"properties.group.id": f"g-{topic}"})
    commit_offsets_now(opts, f'{{"{topic}": {{"0": 0, "1": 0}}}}')
    assert committed(kafka_bootstrap, f"g-{topic}", topic, 2) == {0: 0, 1: 0}


# ---- bounded scans, admission control, splitting -----------------------------------------------------


@pytest.mark.slow
def test_bounded_latest_offset_ignores_records_produced_after_the_start(
    source: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Produce,
    tmp_path: Path,
) -> None:
    topic = topic_factory()
    fill(produce, topic, 0, "a0", "a1")
    opts = options(
        kafka_bootstrap,
        topic,
        **{"scan.startup.mode": "earliest-offset", "scan.bounded.mode": "latest-offset"},
    )
    query = Query(source, opts, tmp_path, available_now=False)
    try:
        query.query.processAllAvailable()
        fill(produce, topic, 0, "late")
        query.query.processAllAvailable()
    finally:
        query.stop()
    assert query.records() == values(topic, 0, (0, "a0"), (1, "a1"))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("bound", "expected"),
    [
        (
            {"scan.bounded.mode": "timestamp", "scan.bounded.timestamp-millis": "3000"},
            [(0, 0, "a0"), (0, 1, "a1"), (1, 0, "b0"), (1, 1, "b1")],
        ),
        (
            {
                "scan.bounded.mode": "specific-offsets",
                "scan.bounded.specific-offsets": "partition:0,offset:3",
            },
            [(0, 0, "a0"), (0, 1, "a1"), (0, 2, "a2")],
        ),
        ({"scan.bounded.mode": "group-offsets"}, [(0, 0, "a0"), (1, 0, "b0")]),
    ],
    ids=["timestamp", "specific-offsets", "group-offsets"],
)
def test_bounded_scan_stops_at_the_bound_and_the_query_finishes(
    source: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Produce,
    tmp_path: Path,
    bound: dict[str, str],
    expected: list[tuple[int, int, str]],
) -> None:
    topic = topic_factory(partitions=2)
    produce(topic, [(None, f"a{i}", 0, 1000 * (i + 1), None) for i in range(5)])
    produce(topic, [(None, f"b{i}", 1, 1000 * (i + 1), None) for i in range(5)])
    opts = options(
        kafka_bootstrap,
        topic,
        **{"properties.group.id": f"g-{topic}", "scan.startup.mode": "earliest-offset", **bound},
    )
    commit_offsets_now(opts, to_json({(topic, 0): 1, (topic, 1): 1}))
    records = Query(source, opts, tmp_path).finish().records()
    assert records == [(topic, partition, offset, value) for partition, offset, value in expected]


@pytest.mark.slow
def test_max_records_per_batch_bounds_every_micro_batch(
    source: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Produce,
    tmp_path: Path,
) -> None:
    topic = topic_factory(partitions=2)
    fill(produce, topic, 0, *(f"a{i}" for i in range(10)))
    fill(produce, topic, 1, *(f"b{i}" for i in range(6)))
    opts = options(
        kafka_bootstrap, topic, **{"scan.startup.mode": "earliest-offset", "scan.max-records-per-batch": "4"}
    )
    query = Query(source, opts, tmp_path).finish()
    assert [len(batch) for batch in query.batches] == [4, 4, 4, 4]
    assert query.records() == sorted(
        [(topic, 0, i, f"a{i}") for i in range(10)] + [(topic, 1, i, f"b{i}") for i in range(6)]
    )


@pytest.mark.slow
def test_the_batch_that_ends_a_bounded_scan_carries_the_end_of_input_row_when_asked(
    source: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Produce,
    tmp_path: Path,
) -> None:
    topic = topic_factory(partitions=2)
    fill(produce, topic, 0, *(f"a{i}" for i in range(5)))
    fill(produce, topic, 1, *(f"b{i}" for i in range(3)))
    bounded = {"scan.startup.mode": "earliest-offset", "scan.bounded.mode": "latest-offset"}
    asked = {**bounded, "scan.max-records-per-batch": "3", "scan.bounded.end-watermark": "true"}

    query = Query(source, options(kafka_bootstrap, topic, **asked), tmp_path / "asked").finish()

    markers = [[r for r in batch if r[2] == END_OF_INPUT_OFFSET] for batch in query.batches]
    assert markers[:-1] == [[]] * (len(markers) - 1)  # only the last batch, once
    assert markers[-1] == [(topic, 0, END_OF_INPUT_OFFSET, "")]
    [row] = [r for r in query.rows if r.offset == END_OF_INPUT_OFFSET]
    assert (row.key, row.value, row.timestamp, row.headers) == (None, None, None, None)
    records = [r for r in query.records() if r[2] != END_OF_INPUT_OFFSET]
    assert records == values(topic, 0, *enumerate(f"a{i}" for i in range(5))) + values(
        topic, 1, *enumerate(f"b{i}" for i in range(3))
    )
    # Not asked for (the option's default is for kafka-sql tables), or unbounded: no such row.
    plain = Query(source, options(kafka_bootstrap, topic, **bounded), tmp_path / "plain").finish()
    assert all(r.offset >= 0 for r in plain.rows) and len(plain.rows) == 8
    unbounded = {"scan.startup.mode": "earliest-offset", "scan.bounded.end-watermark": "true"}
    endless = Query(source, options(kafka_bootstrap, topic, **unbounded), tmp_path / "unbounded").finish()
    assert all(r.offset >= 0 for r in endless.rows) and len(endless.rows) == 8


@pytest.mark.slow
def test_min_partitions_splits_a_partition_without_losing_or_repeating_records(
    source: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Produce,
    tmp_path: Path,
) -> None:
    topic = topic_factory()
    fill(produce, topic, 0, *(f"a{i}" for i in range(23)))
    opts = options(kafka_bootstrap, topic, **{"scan.startup.mode": "earliest-offset", "scan.min-partitions": "4"})
    query = Query(source, opts, tmp_path).finish()
    assert sorted(query.batches[0]) == [(topic, 0, i, f"a{i}") for i in range(23)]
    assert len(query.batches[0]) == 23


# ---- data loss ---------------------------------------------------------------------------------------


def _delete_before(bootstrap: str, topic: str, partition: int, offset: int) -> None:
    """Delete records as retention would (the admin client must outlive its futures)."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.delete_records([TopicPartition(topic, partition, offset)]).values():
        future.result(timeout=30)


@pytest.mark.slow
def test_lost_records_fail_the_query_with_topic_partition_offset_and_range(
    source: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Produce,
    tmp_path: Path,
) -> None:
    topic = topic_factory()
    fill(produce, topic, 0, "a0", "a1")
    opts = options(kafka_bootstrap, topic, **{"scan.startup.mode": "earliest-offset"})
    Query(source, opts, tmp_path).finish()
    fill(produce, topic, 0, "a2", "a3", "a4")
    _delete_before(kafka_bootstrap, topic, 0, 3)
    message = failure(Query(source, opts, tmp_path))
    assert (
        f"DataLossError: Data loss in topic '{topic}' partition 0: expected to read from offset 2, but "
        "available offsets are [3, 5)" in message
    )
    assert "'scan.fail-on-data-loss' = 'false'" in message


@pytest.mark.slow
def test_lost_records_are_skipped_when_fail_on_data_loss_is_false(
    source: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Produce,
    tmp_path: Path,
) -> None:
    topic = topic_factory()
    fill(produce, topic, 0, "a0", "a1")
    opts = options(kafka_bootstrap, topic, **{"scan.startup.mode": "earliest-offset"})
    Query(source, opts, tmp_path).finish()
    fill(produce, topic, 0, "a2", "a3", "a4")
    _delete_before(kafka_bootstrap, topic, 0, 3)
    lenient = {**opts, "scan.fail-on-data-loss": "false"}
    assert Query(source, lenient, tmp_path).finish().records() == values(topic, 0, (3, "a3"), (4, "a4"))


@pytest.mark.slow
def test_recreated_topic_is_read_from_its_earliest_offset_when_data_loss_is_allowed(
    source: SparkSession, kafka_bootstrap: str, topic_factory: Callable[..., str], produce: Produce, tmp_path: Path
) -> None:
    topic = topic_factory()
    fill(produce, topic, 0, "old0", "old1", "old2")
    opts = options(kafka_bootstrap, topic, **{"scan.startup.mode": "earliest-offset"})
    Query(source, opts, tmp_path).finish()
    broker.delete_topic(kafka_bootstrap, topic)
    broker.create_topic(kafka_bootstrap, topic)
    fresh = Producer({"bootstrap.servers": kafka_bootstrap})  # knows the new topic
    fresh.produce(topic, value=b"new0", partition=0)
    assert fresh.flush(30) == 0
    message = failure(Query(source, opts, tmp_path))
    assert (
        f"Data loss in topic '{topic}' partition 0: expected to read from offset 3, but available offsets are [0, 1)"
        in message
    )
    assert "was the topic deleted and recreated?" in message
    lenient = {**opts, "scan.fail-on-data-loss": "false"}
    assert Query(source, lenient, tmp_path).finish().records() == [(topic, 0, 0, "new0")]


# ---- the executor-side reader, without Spark ---------------------------------------------------------


@pytest.fixture(autouse=True)
def _close_readers() -> Iterator[None]:
    """Readers used directly in this process are cached like in a Spark worker; close them per test."""
    yield
    close_cached_consumers()


def _read(bootstrap: str, topic: str, start: int, end: int, **extra: str) -> Iterator[Any]:
    settings = SourceSettings.from_options(
        options(bootstrap, topic, **{"scan.startup.mode": "earliest-offset", "scan.poll-timeout": "10 s", **extra})
    )
    return read_partition(settings, KafkaInputPartition(topic, 0, start, end))


def test_reader_yields_bounded_arrow_batches(kafka_bootstrap: str, topic_factory: Callable[..., str]) -> None:
    topic = topic_factory()
    producer = Producer({"bootstrap.servers": kafka_bootstrap, "linger.ms": 20})
    for i in range(25_000):
        producer.produce(topic, value=b"%d" % i, partition=0)
        if i % 5000 == 0:
            producer.poll(0)
    producer.flush(60)
    batches = list(_read(kafka_bootstrap, topic, 100, 24_900))
    assert [b.num_rows for b in batches] == [MAX_BATCH_RECORDS, MAX_BATCH_RECORDS, 4_800]
    offsets = [o for b in batches for o in b.column("offset").to_pylist()]
    assert offsets == list(range(100, 24_900))
    assert batches[0].column("value")[0].as_py() == b"100"


def test_one_cached_reader_reads_consecutive_ranges_of_different_partitions(
    kafka_bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    """A worker's consumer moves on from a range that ended at the end of its log to the next range."""
    topic = topic_factory(partitions=2)
    producer = Producer({"bootstrap.servers": kafka_bootstrap, "linger.ms": 20})
    for i in range(6_000):
        producer.produce(topic, value=b"%d" % i, partition=i % 2)
    producer.flush(60)
    settings = SourceSettings.from_options(
        options(kafka_bootstrap, topic, **{"scan.startup.mode": "earliest-offset", "scan.poll-timeout": "10 s"})
    )
    close_cached_consumers()
    read = []
    for partition, start, end in ((0, 0, 3_000), (1, 0, 3_000), (0, 1_000, 2_000)):
        batches = list(read_partition(settings, KafkaInputPartition(topic, partition, start, end)))
        read.append([(row["partition"], row["offset"], int(row["value"])) for b in batches for row in b.to_pylist()])
    assert read[0] == [(0, offset, 2 * offset) for offset in range(3_000)]
    assert read[1] == [(1, offset, 2 * offset + 1) for offset in range(3_000)]
    assert read[2] == [(0, offset, 2 * offset) for offset in range(1_000, 2_000)]


def test_one_cached_reader_reads_a_topic_new_to_it(kafka_bootstrap: str, topic_factory: Callable[..., str]) -> None:
    """A worker's consumer reads the next pipeline's topic (a test session runs many pipelines in one worker)."""
    topics = [topic_factory(), topic_factory()]
    producer = Producer({"bootstrap.servers": kafka_bootstrap})
    for topic in topics:
        for i in range(3):
            producer.produce(topic, value=f"{topic}-{i}".encode(), partition=0)
    producer.flush(60)
    close_cached_consumers()
    read = [
        [row["value"] for batch in _read(kafka_bootstrap, topic, 0, 3) for row in batch.to_pylist()] for topic in topics
    ]
    assert read == [[f"{topic}-{i}".encode() for i in range(3)] for topic in topics]
    assert [sorted(cached.topics) for cached in reader._CONSUMERS.values()] == [sorted(topics)]


def test_a_read_from_a_broker_that_cannot_be_reached_fails_after_one_poll_timeout() -> None:
    """The reader's metadata request for a new topic counts against the read's 'scan.poll-timeout'.

    Before, a read whose broker was down waited for the metadata request, then for a whole poll timeout more.
    """
    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        unreachable = f"127.0.0.1:{closed.getsockname()[1]}"
        started = time.monotonic()
        timed_out = r"Timed out after 3s reading topic 'orders' partition 0 at offset 0"
        with pytest.raises(KafkaSourceError, match=timed_out):
            list(_read(unreachable, "orders", 0, 3, **{"scan.poll-timeout": "3 s"}))
    assert time.monotonic() - started < 2 * 3


def test_reader_fetch_settings_can_be_overridden_with_properties() -> None:
    base = options("localhost:9092", "orders", **{"scan.startup.mode": "earliest-offset"})
    assert reader_config(SourceSettings.from_options(base))["fetch.wait.max.ms"] == "10"
    chosen = SourceSettings.from_options({**base, "properties.fetch.wait.max.ms": "250"})
    assert reader_config(chosen)["fetch.wait.max.ms"] == "250"


def test_reader_stops_at_the_end_offset_across_transaction_markers(
    kafka_bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    topic = topic_factory()
    producer = Producer({"bootstrap.servers": kafka_bootstrap, "transactional.id": f"tx-{topic}"})
    producer.init_transactions()
    for committed_values in ([b"t0", b"t1"], [b"t3"]):
        producer.begin_transaction()
        for value in committed_values:
            producer.produce(topic, value=value, partition=0)
        producer.commit_transaction()
    # log: t0@0 t1@1 marker@2 t3@3 marker@4 ; the range ends on a marker, with no record at offset 4
    started = time.monotonic()
    batches = list(_read(kafka_bootstrap, topic, 0, 5, **{"properties.isolation.level": "read_committed"}))
    assert time.monotonic() - started < 5
    assert [(row["offset"], row["value"]) for batch in batches for row in batch.to_pylist()] == [
        (0, b"t0"),
        (1, b"t1"),
        (3, b"t3"),
    ]


def test_reader_reports_lost_records_with_the_available_range(
    kafka_bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    topic = topic_factory()
    producer = Producer({"bootstrap.servers": kafka_bootstrap})
    for i in range(4):
        producer.produce(topic, value=b"%d" % i, partition=0)
    producer.flush(30)
    _delete_before(kafka_bootstrap, topic, 0, 2)
    with pytest.raises(DataLossError, match=r"expected to read from offset 0, but available offsets are \[2, 4\)"):
        list(_read(kafka_bootstrap, topic, 0, 4))
    lenient = list(_read(kafka_bootstrap, topic, 0, 4, **{"scan.fail-on-data-loss": "false"}))
    assert [o for b in lenient for o in b.column("offset").to_pylist()] == [2, 3]
