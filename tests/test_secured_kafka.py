"""Kafka with SASL authentication, configured the Java client's way, as Flink SQL users write it.

A broker of its own with a SASL_PLAINTEXT listener (users for PLAIN and SCRAM-SHA-512, `connector.dev.sasl`). The
pipelines set `'properties.security.protocol'`, `'properties.sasl.mechanism'` and `'properties.sasl.jaas.config'`
with Kafka's Java login modules on the source and the sink: kafka-sql translates them for librdkafka.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from confluent_kafka import Producer
from test_run_e2e import COPY_TO_KAFKA, committed, named, read_topic, run

from connector.dev import broker
from connector.dev.sasl import SaslListener

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

MODULES = {
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
}
SECURED = COPY_TO_KAFKA.replace(
    "  'properties.bootstrap.servers' = '{{ var(\"brokers\") }}',",
    "  'properties.bootstrap.servers' = '{{ var(\"brokers\") }}',\n"
    "  'properties.security.protocol' = 'SASL_PLAINTEXT',\n"
    "  'properties.sasl.mechanism' = '{{ var(\"mechanism\") }}',\n"
    "  'properties.sasl.jaas.config' = '{{ var(\"module\") }} required username=\"{{ var(\"user\") }}\" "
    "password=\"{{ var(\"password\") }}\";',",
)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """(PLAINTEXT bootstrap for the test's own clients, SASL bootstrap for the pipelines)."""
    listener = SaslListener(free_port(), {"alice": "alice-secret"})
    data_dir = tmp_path_factory.mktemp("sasl-broker")
    info = broker.start(data_dir, sasl=listener)
    yield info.bootstrap, f"127.0.0.1:{listener.port}"
    broker.stop(data_dir)


def produce_plain(bootstrap: str, topic: str, count: int) -> None:
    """Records {"id": n, "name": "n<n>"} over two partitions, through the broker's PLAINTEXT listener."""
    producer = Producer({"bootstrap.servers": bootstrap})
    for partition, value in named(range(count), 2):
        producer.produce(topic, json.dumps(value), partition=partition)
    assert producer.flush(30) == 0


@pytest.mark.slow
@pytest.mark.parametrize("mechanism", sorted(MODULES))
def test_a_pipeline_reads_writes_and_commits_with_flinks_sasl_properties(
    mechanism: str,
    secured: tuple[str, str],
    spark: SparkSession,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    plaintext, sasl = secured
    source, out = f"in-{mechanism}", f"out-{mechanism}"
    broker.create_topic(plaintext, source, partitions=2)
    broker.create_topic(plaintext, out, partitions=1)
    produce_plain(plaintext, source, 10)
    (tmp_path / "copy.sql").write_text(SECURED)
    variables = {"brokers": sasl, "topic": source, "out": out, "group": f"g-{mechanism}", "mechanism": mechanism,
                 "module": MODULES[mechanism], "user": "alice", "password": "alice-secret"}

    result = run(capsys, tmp_path / "copy.sql", tmp_path / "cp", **variables)

    assert result.code == 0, result.err
    assert sorted(r["id"] for r in read_topic(plaintext, out)) == list(range(10))
    assert committed(plaintext, f"g-{mechanism}", source, 2) == {0: 5, 1: 5}
    assert "alice-secret" not in result.err + result.out


@pytest.mark.slow
def test_a_wrong_password_fails_saying_authentication_failed(
    secured: tuple[str, str], spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plaintext, sasl = secured
    broker.create_topic(plaintext, "in-wrong", partitions=2)
    broker.create_topic(plaintext, "out-wrong", partitions=1)
    (tmp_path / "copy.sql").write_text(SECURED)
    variables = {"brokers": sasl, "topic": "in-wrong", "out": "out-wrong", "group": "g", "mechanism": "SCRAM-SHA-512",
                 "module": MODULES["SCRAM-SHA-512"], "user": "alice", "password": "not-her-password"}
    result = run(capsys, tmp_path / "copy.sql", tmp_path / "cp", **variables)

    assert result.code == 1
    message = " ".join(result.err.split())
    assert f"SASL authentication failed for user 'alice' (SCRAM-SHA-512) at {sasl}: " in message
    assert "invalid credentials with SASL mechanism SCRAM-SHA-512" in message
    assert "transport failure" not in message  # the cause, not its symptom (and no retrying until the timeout)
    assert "not-her-password" not in result.err + result.out
