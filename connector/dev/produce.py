"""Produce sample data to Kafka from a JSON-lines file (`kafka-sql produce`), for demos and quick checks."""

from __future__ import annotations

import json
from pathlib import Path

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient

from connector.dev import broker


def produce_file(
    bootstrap: str,
    topic: str,
    path: Path,
    partitions: int = 1,
    key_field: str | None = None,
    recreate: bool = False,
) -> int:
    """Produce each non-empty line of `path` as one record; create the topic when it does not exist
    (`recreate`: delete it first, so a demo starts from exactly the file's records)."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    exists = topic in admin.list_topics(timeout=30).topics
    if exists and recreate:
        broker.delete_topic(bootstrap, topic)
        exists = False
    if not exists:
        broker.create_topic(bootstrap, topic, partitions=partitions)
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 5})
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
        producer.produce(topic, value=line.encode("utf-8"), key=key, on_delivery=delivered)
        producer.poll(0)
        count += 1
    producer.flush(60)
    if failures:
        raise RuntimeError(f"{len(failures)} record(s) were not delivered to '{topic}': {failures[0]}")
    return count
