"""The development broker: lifecycle across processes, topic administration, a real round trip."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from confluent_kafka import OFFSET_BEGINNING, TIMESTAMP_CREATE_TIME, Consumer, Message, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType

from connector.dev import broker


def _accepts_connections(bootstrap: str) -> bool:
    host, port = bootstrap.rsplit(":", 1)
    try:
        with socket.create_connection((host, int(port)), timeout=2.0):
            return True
    except OSError:
        return False


def _partition_count(bootstrap: str, topic: str) -> int | None:
    metadata = AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10)
    found = metadata.topics.get(topic)
    return None if found is None else len(found.partitions)


def _start_in_other_process(data_dir: Path) -> str:
    """Start like `kafka-sql broker start` does: from a process that exits right after."""
    script = "import sys; from connector.dev import broker; print(broker.start(sys.argv[1]).bootstrap)"
    result = subprocess.run(
        [sys.executable, "-c", script, str(data_dir)], capture_output=True, text=True, timeout=300, check=True
    )
    return result.stdout.strip().splitlines()[-1]


@pytest.mark.slow
def test_broker_outlives_its_starter_restarts_idempotently_and_stops(tmp_path: Path) -> None:
    data_dir = tmp_path / "broker"
    bootstrap = _start_in_other_process(data_dir)
    try:
        running = broker.status(data_dir)
        assert running is not None
        assert running.bootstrap == bootstrap
        assert running.log_file.is_file()
        assert _accepts_connections(bootstrap)

        assert broker.start(data_dir) == running
        broker.create_topic(bootstrap, "kept", partitions=2)

        assert broker.stop(data_dir) is True
        assert broker.status(data_dir) is None
        assert not _accepts_connections(bootstrap)
        assert broker.stop(data_dir) is False

        restarted = broker.start(data_dir)
        assert restarted.pid != running.pid
        assert restarted.bootstrap == bootstrap, "a restart keeps the address pipelines were written for"
        assert _partition_count(bootstrap, "kept") == 2
    finally:
        broker.stop(data_dir)


def test_the_first_produce_to_a_fresh_broker_prints_only_its_result(tmp_path: Path) -> None:
    """As in the quickstart: `kafka-sql produce` right after `kafka-sql broker start`, while the broker's transaction
    coordinator still loads (librdkafka retries the idempotent producer's id by itself): no warning, one line."""
    data_dir = tmp_path / "broker"
    bootstrap = _start_in_other_process(data_dir)
    try:
        lines = tmp_path / "orders.jsonl"
        lines.write_text("".join(f'{{"id": {i}}}\n' for i in range(5)))
        kafka_sql = str(Path(sys.executable).with_name("kafka-sql"))
        done = subprocess.run(
            [kafka_sql, "produce", "orders", str(lines), "--bootstrap", bootstrap, "--key-field", "id"],
            capture_output=True, text=True, timeout=120, check=False,
        )
        assert (done.returncode, done.stdout, done.stderr.strip()) == (0, "", "produced 5 record(s) to 'orders'")
    finally:
        broker.stop(data_dir)


def test_start_on_a_busy_port_says_so(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(broker.BrokerError, match=f"port {port} .* already in use"):
            broker.start(tmp_path / "broker", port=port)
    assert broker.status(tmp_path / "broker") is None


def test_records_round_trip_with_key_partition_timestamp_and_headers(
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Callable[..., None],
) -> None:
    topic = topic_factory(partitions=2)
    produce(
        topic,
        [
            (b"k1", b"v1", 1, 1_700_000_000_000, [("source", b"test"), ("empty", None)]),
            (None, "v2", 0, None, None),
        ],
    )

    consumer = Consumer(
        {"bootstrap.servers": kafka_bootstrap, "group.id": f"reader-{topic}", "enable.auto.commit": False}
    )
    try:
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in (0, 1)])
        received: dict[int, Message] = {}
        deadline = time.monotonic() + 30
        while len(received) < 2 and time.monotonic() < deadline:
            message = consumer.poll(1.0)
            if message is not None and message.error() is None:
                partition = message.partition()
                assert partition is not None
                received[partition] = message
    finally:
        consumer.close()

    assert set(received) == {0, 1}
    keyed = received[1]
    assert (keyed.key(), keyed.value()) == (b"k1", b"v1")
    assert keyed.timestamp() == (TIMESTAMP_CREATE_TIME, 1_700_000_000_000)
    assert keyed.headers() == [("source", b"test"), ("empty", None)]
    assert (received[0].key(), received[0].value(), received[0].offset()) == (None, b"v2", 0)


def test_records_with_old_timestamps_are_kept_until_deleted(kafka_bootstrap: str) -> None:
    """Kafka's default 7-day time retention would delete records stamped years ago within minutes."""
    name = f"kept-{uuid.uuid4().hex[:8]}"
    broker.create_topic(kafka_bootstrap, name)
    admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
    resource = ConfigResource(ResourceType.TOPIC, name)
    configs = admin.describe_configs([resource])[resource].result(timeout=10)
    assert configs["retention.ms"].value == "-1"


def test_topic_administration_is_visible_in_metadata(kafka_bootstrap: str) -> None:
    name = f"admin-{uuid.uuid4().hex[:8]}"
    broker.create_topic(kafka_bootstrap, name, partitions=2, config={"cleanup.policy": "compact"})
    assert _partition_count(kafka_bootstrap, name) == 2
    admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
    resource = ConfigResource(ResourceType.TOPIC, name)
    configs = admin.describe_configs([resource])[resource].result(timeout=10)
    assert configs["cleanup.policy"].value == "compact"

    with pytest.raises(broker.BrokerError, match="already exists"):
        broker.create_topic(kafka_bootstrap, name)

    broker.add_partitions(kafka_bootstrap, name, 3)
    assert _partition_count(kafka_bootstrap, name) == 3

    broker.delete_topic(kafka_bootstrap, name)
    assert _partition_count(kafka_bootstrap, name) is None
