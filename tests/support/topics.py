"""Kafka from the tests' side: every record of a topic, a group's committed offsets, a topic's end offsets, JSON records
to produce."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

# The `produce` fixture (tests/conftest.py): produce(topic, records).
Produce = Callable[[str, Sequence[tuple[Any, ...]]], None]
COORDINATOR_MOVING = (
    KafkaError.NOT_COORDINATOR,
    KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
    KafkaError.COORDINATOR_NOT_AVAILABLE,
)


def read_topic(bootstrap: str, topic: str, decode: Callable[[bytes], Any] = json.loads) -> list[Any]:
    """Every record of `topic` (read_committed), decoded (JSON unless told), in partition and offset order."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "test-reader",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            "isolation.level": "read_committed",
        }
    )
    try:
        partitions = consumer.list_topics(topic, timeout=30).topics[topic].partitions
        consumer.assign([TopicPartition(topic, p, 0) for p in partitions])
        by_partition: dict[int, list[Any]] = {p: [] for p in partitions}
        at_end: set[int] = set()
        while len(at_end) < len(partitions):
            message = consumer.poll(30)
            assert message is not None, f"timed out reading {topic}"
            error, partition = message.error(), message.partition()
            assert partition is not None
            if error is not None:
                assert error.code() == KafkaError._PARTITION_EOF, error
                at_end.add(partition)
                continue
            by_partition[partition].append(decode(message.value() or b""))
    finally:
        consumer.close()
    return [record for p in sorted(by_partition) for record in by_partition[p]]


def committed(bootstrap: str, group: str, topic: str, partitions: int) -> dict[int, int]:
    """The group's committed offsets (next offset to read) of the partitions that have one."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    deadline = time.monotonic() + 60
    try:
        while True:
            try:
                result = consumer.committed([TopicPartition(topic, p) for p in range(partitions)], timeout=30)
                break
            except KafkaException as error:  # a fresh broker is still electing its group coordinator
                if error.args[0].code() not in COORDINATOR_MOVING or time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
    finally:
        consumer.close()
    return {tp.partition: tp.offset for tp in result if tp.offset >= 0}


def end_offsets(bootstrap: str, topic: str, partitions: int) -> dict[int, int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "test-reader"})
    try:
        return {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=30)[1] for p in range(partitions)}
    finally:
        consumer.close()


def produce_json(
    produce: Produce, topic: str, records: Sequence[tuple[int, Any]], timestamps: Sequence[int] = ()
) -> None:
    """`records` as (partition, value): a dict is written as JSON, bytes as they are."""
    stamps: list[int | None] = [*timestamps] or [None] * len(records)
    produce(
        topic,
        [
            (None, value if isinstance(value, bytes) else json.dumps(value), partition, stamp, None)
            for (partition, value), stamp in zip(records, stamps, strict=True)
        ],
    )
