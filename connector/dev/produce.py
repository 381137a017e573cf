"""Produce sample data to Kafka from a JSON-lines file (`kafka-sql produce`), for demos and quick checks."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from confluent_kafka import KafkaException, Producer
from confluent_kafka.admin import AdminClient

from connector.connectors.kafka.client_log import logged
from connector.connectors.kafka.java_properties import librdkafka_properties
from connector.connectors.kafka.retries import Refusals, Refused
from connector.dev import broker
from connector.errors import KafkaSqlError

# As long as Java's producer waits for metadata ('max.block.ms' = 60 s): a broker restarting on a busy machine
# takes longer than 30 s to answer again.
METADATA_TIMEOUT_SECONDS = 60.0
DELIVERY_TIMEOUT_SECONDS = 330.0  # a little more than librdkafka's default 'message.timeout.ms' (300 s)


class ProduceError(KafkaSqlError):
    """Why `produce` could not write: the broker refused the client, cannot be reached, or the settings are bad."""


def _topics(bootstrap: str, client: Mapping[str, str]) -> set[str]:
    """The broker's topics; a refused authentication or TLS handshake ends the wait at once, saying what failed."""
    refusals = Refusals(client, bootstrap)
    admin = AdminClient(refusals.client_config({**client, "bootstrap.servers": bootstrap}))
    try:
        return set(refusals.list_topics(admin, METADATA_TIMEOUT_SECONDS).topics)
    except Refused as refused:
        raise ProduceError(str(refused)) from None
    except KafkaException as error:
        raise ProduceError(f"cannot reach the broker at {bootstrap}: {error.args[0].str()}") from None


def ensure_topic(
    bootstrap: str, topic: str, partitions: int = 1, recreate: bool = False, client: Mapping[str, str] | None = None
) -> None:
    """Create `topic` when it does not exist (`recreate`: delete it first)."""
    exists = topic in _topics(bootstrap, client or {})
    if exists and recreate:
        broker.delete_topic(bootstrap, topic, client=client)
        exists = False
    if not exists:
        broker.create_topic(bootstrap, topic, partitions=partitions, client=client)


def produce_file(
    bootstrap: str,
    topic: str,
    path: Path,
    partitions: int = 1,
    key_field: str | None = None,
    recreate: bool = False,
    properties: Mapping[str, str] | None = None,
) -> int:
    """Produce each non-empty line of `path` as one record; create the topic when it does not exist
    (`recreate`: delete it first, so a demo starts from exactly the file's records). `properties`: Kafka client
    properties with Java's names, as in a table's 'properties.*' (a secured broker's)."""
    try:
        client = librdkafka_properties(properties or {})
    except ValueError as error:
        raise ProduceError(str(error)) from None
    ensure_topic(bootstrap, topic, partitions, recreate, client)
    producer = Producer(logged({**client, "bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 5}))
    failures: list[str] = []

    def delivered(error: object, _msg: object) -> None:
        if error is not None:
            failures.append(str(error))

    count = 0
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        key: bytes | None = None
        if key_field is not None:
            try:
                value = json.loads(line)[key_field]
            except (ValueError, KeyError, TypeError) as error:
                raise ValueError(f"{path}:{lineno}: cannot read key field '{key_field}': {error}") from None
            key = str(value).encode()
        while True:
            try:
                producer.produce(topic, value=line.encode("utf-8"), key=key, on_delivery=delivered)
                break
            except BufferError:  # the client's queue is full (the broker slow or away): wait for deliveries
                producer.poll(1)
            except KafkaException as error:  # refused before sending (a record above 'message.max.bytes')
                raise ProduceError(f"{path}:{lineno}: cannot produce the record: {error.args[0].str()}") from None
        producer.poll(0)
        count += 1
    # librdkafka retries each record until its 'message.timeout.ms' (5 min by default) and then reports it failed:
    # wait for every report, so no record is dropped silently.
    left = producer.flush(DELIVERY_TIMEOUT_SECONDS)
    if failures or left:
        first = f": {failures[0]}" if failures else ""
        raise ProduceError(
            f"{len(failures) + left} of {count} record(s) were not delivered to '{topic}' at {bootstrap}{first}"
        )
    return count
