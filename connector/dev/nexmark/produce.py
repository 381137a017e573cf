"""Write Nexmark's events to Kafka as the JSON values that ddl_kafka.sql's table reads (`format` = 'json')."""

from __future__ import annotations

import json
from collections.abc import Callable

from confluent_kafka import KafkaError, KafkaException, Message, Producer

from connector.connectors.kafka.client_log import logged
from connector.dev.nexmark.generator import Event, NexmarkConfig, events
from connector.dev.produce import DELIVERY_TIMEOUT_SECONDS, METADATA_TIMEOUT_SECONDS, ProduceError

PROGRESS_EVERY = 100_000  # records between two `on_progress` calls
_POLL_EVERY = 1_000  # records between two polls for delivery reports: a poll per record costs more than the record


def to_json(event: Event) -> bytes:
    """An event as Flink's json format writes the row: fields in the DDL's order, compact, nulls kept."""
    return json.dumps(event, separators=(",", ":")).encode()


def produce(
    bootstrap: str,
    topic: str,
    count: int,
    config: NexmarkConfig,
    partitions: int | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> int:
    """Write the first `count` events of `config` to the existing `topic`, without keys, and wait until the broker
    acknowledged each; return how many were written.

    `partitions`: record i goes to partition i % partitions (Flink's 'sink.partitioner' = 'round-robin', as in
    Nexmark's insert_kafka.sql); None leaves it to librdkafka's partitioner. `on_progress(records so far)` is called
    every PROGRESS_EVERY records and once all were acknowledged. Raises ProduceError when a record is not delivered.
    """
    if partitions is not None and partitions < 1:
        raise ValueError(f"partitions must be at least 1, got {partitions}")
    # Idempotence keeps each partition's records in the generator's order through retries, without duplicates.
    producer = Producer(logged({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 50}))
    _check_topic(producer, bootstrap, topic, partitions)
    failures: list[KafkaError] = []

    def delivered(error: KafkaError | None, _message: Message) -> None:
        if error is not None:
            failures.append(error)

    written = 0
    for event in events(count, config):
        partition = -1 if partitions is None else written % partitions  # -1: librdkafka's RD_KAFKA_PARTITION_UA
        value = to_json(event)
        while True:
            try:
                producer.produce(topic, value=value, partition=partition, on_delivery=delivered)
                break
            except BufferError:  # the client's queue is full: wait for deliveries
                producer.poll(1)
            except KafkaException as error:
                raise ProduceError(f"cannot produce to '{topic}' at {bootstrap}: {error.args[0].str()}") from None
        written += 1
        if written % _POLL_EVERY == 0:
            producer.poll(0)
            if failures:  # no use generating millions more records for a topic that refuses them
                break
        if on_progress is not None and written % PROGRESS_EVERY == 0 and written < count:
            on_progress(written)
    left = producer.flush(DELIVERY_TIMEOUT_SECONDS)
    if failures or left:
        first = f": {failures[0].str()}" if failures else ""
        raise ProduceError(
            f"{len(failures) + left} of {written} record(s) were not delivered to '{topic}' at {bootstrap}{first}"
        )
    if on_progress is not None:
        on_progress(written)
    return written


def _check_topic(producer: Producer, bootstrap: str, topic: str, partitions: int | None) -> None:
    """Fail at once, naming the topic, when it does not exist or has fewer partitions than round-robin needs."""
    try:
        metadata = producer.list_topics(topic, timeout=METADATA_TIMEOUT_SECONDS)
    except KafkaException as error:
        raise ProduceError(f"cannot reach the broker at {bootstrap} for '{topic}': {error.args[0].str()}") from None
    found = metadata.topics.get(topic)
    if found is None or found.error is not None:
        reason = found.error.str() if found is not None and found.error is not None else "not found"
        raise ProduceError(f"topic '{topic}' is not available at {bootstrap}: {reason}")
    if partitions is not None and partitions > len(found.partitions):
        raise ProduceError(f"topic '{topic}' has {len(found.partitions)} partition(s), fewer than {partitions}")
