"""The `flink-kafka-sink` write path on a real broker, one write task at a time (`write_batches`, as a Spark
task calls it): topic-column routing, metadata columns, and which delivery failures fail a task."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

import pyarrow as pa
import pytest
from confluent_kafka import Consumer, TopicPartition

from connector.connectors.kafka.sink import KafkaSinkError, SinkSettings, write_batches

SCHEMA = pa.schema(
    [
        ("value", pa.binary()),
        ("key", pa.binary()),
        ("topic", pa.string()),
        ("headers", pa.map_(pa.string(), pa.binary())),
        ("timestamp", pa.timestamp("us", tz="UTC")),
    ]
)
# topic, key, value, timestamp (ms), headers
Read = tuple[str, bytes | None, bytes | None, int, list[tuple[str, str | bytes | None]]]


def batch(rows: list[dict[str, Any]], columns: tuple[str, ...] = ("value",)) -> pa.RecordBatch:
    """Rows as the sink's input columns (`columns` of SCHEMA, by name); a missing entry is NULL."""
    fields = [SCHEMA.field(name) for name in columns]
    return pa.record_batch([pa.array([r.get(f.name) for r in rows], f.type) for f in fields], schema=pa.schema(fields))


def settings(bootstrap: str, **options: str) -> SinkSettings:
    return SinkSettings.from_options(
        {"properties.bootstrap.servers": bootstrap, "properties.message.timeout.ms": "10000", **options}
    )


def read(bootstrap: str, topic: str) -> list[Read]:
    """Every record of a one-partition topic, in log order."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{topic}", "enable.auto.commit": False})
    try:
        partition = TopicPartition(topic, 0, 0)
        end = consumer.get_watermark_offsets(partition, timeout=30)[1]
        consumer.assign([partition])
        records: list[Read] = []
        deadline = time.monotonic() + 60
        while len(records) < end:
            assert time.monotonic() < deadline, f"timed out reading {topic}"
            message = consumer.poll(1)
            if message is None or message.error():
                continue
            headers = message.headers() or []
            assert isinstance(headers, list)
            records.append((topic, message.key(), message.value(), message.timestamp()[1], headers))
        return records
    finally:
        consumer.close()


def test_the_topic_column_routes_records_with_their_keys_headers_and_timestamps(
    kafka_bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    first, second = topic_factory(), topic_factory()
    stamp = datetime(2024, 1, 2, 3, 4, 5, 678000, tzinfo=timezone.utc)
    rows: list[dict[str, Any]] = [
        {"value": b"1", "key": b"k1", "topic": first, "headers": [("h", b"x")], "timestamp": stamp},
        {"value": b"2", "topic": second, "headers": [], "timestamp": None},
        {"value": None, "key": b"k3", "topic": first, "headers": None, "timestamp": stamp},
    ]
    before = int(time.time() * 1000)
    message = write_batches(
        settings(kafka_bootstrap, topic=f"{first};{second}"), iter([batch(rows, tuple(SCHEMA.names))])
    )

    assert message.records == 3
    ms = int(stamp.timestamp() * 1000)
    assert read(kafka_bootstrap, first) == [(first, b"k1", b"1", ms, [("h", b"x")]), (first, b"k3", None, ms, [])]
    ((topic, key, value, producer_stamp, headers),) = read(kafka_bootstrap, second)
    assert (topic, key, value, headers) == (second, None, b"2", [])
    assert producer_stamp >= before  # a NULL timestamp: the producer stamps the current time


@pytest.mark.parametrize(
    ("options", "topic", "error"),
    [
        ({"topic": "a;b"}, "c", "The topic of the sink record ('c') is not contained in the topics ['a', 'b']"),
        ({"topic": "a;b"}, None, "Expected a single topic but no topic is set."),
        ({"topic-pattern": "orders-.*"}, "payments", "('payments') does not match the topic pattern orders-.*"),
    ],
)
def test_a_record_for_a_topic_the_table_does_not_allow_fails_the_task(
    kafka_bootstrap: str, options: dict[str, str], topic: str | None, error: str
) -> None:
    rows = [{"value": b"1", "topic": topic}]
    with pytest.raises(KafkaSinkError, match=re.escape(error)):
        write_batches(settings(kafka_bootstrap, **options), iter([batch(rows, ("value", "topic"))]))


def test_every_failed_delivery_is_counted_and_fails_an_at_least_once_task(
    kafka_bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    topic = topic_factory(config={"max.message.bytes": "200"})
    rows = [{"value": b"x" * 1000}, {"value": b"y" * 1000}, {"value": b"z" * 1000}]
    with pytest.raises(KafkaSinkError, match=rf"Failed to deliver 3 record\(s\) to Kafka; first: topic '{topic}'"):
        write_batches(settings(kafka_bootstrap, topic=topic), iter([batch(rows)]))


def test_failures_a_none_write_left_behind_do_not_fail_the_next_at_least_once_write(
    kafka_bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    topic = topic_factory(config={"max.message.bytes": "200"})
    careless = settings(kafka_bootstrap, topic=topic, **{"sink.delivery-guarantee": "none"})
    write_batches(careless, iter([batch([{"value": b"x" * 1000}])]))  # fails later, unnoticed

    message = write_batches(settings(kafka_bootstrap, topic=topic), iter([batch([{"value": b"fits"}])]))

    assert message.records == 1
    assert [value for _, _, value, _, _ in read(kafka_bootstrap, topic)] == [b"fits"]
