"""Fixtures of every test folder: one real Kafka broker and one SparkSession per test run, topics and a producer,
PostgreSQL and a schema registry; and the rule of the folders (tests/README.md): a test in unit/ starts no Spark
session and no service, one in integration/ no broker or other service."""

from __future__ import annotations

import os
import re
import sys
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from confluent_kafka import KafkaError, Message, Producer

from connector.connectors.kafka.sink import close_cached_producers
from connector.dev import broker, postgres
from connector.dev import schema_registry_server as registry
from connector.dev.postgres import PostgresInfo
from connector.dev.schema_registry_server import RegistryInfo
from connector.runtime.python_launcher import python_executable
from connector.runtime.session import SESSION_CONF

if TYPE_CHECKING:
    from pyspark._typing import PrimitiveType
    from pyspark.sql import SparkSession

# The helpers of tests/support/ report failed asserts as pytest does in test modules.
pytest.register_assert_rewrite("support")

# Spark's Python workers (and the Python Data Source) must run in this venv's interpreter.
os.environ["PYSPARK_PYTHON"] = python_executable()
os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable

Payload = bytes | str | None
Headers = list[tuple[str, Payload]]
# (key, value, partition or None for the partitioner, timestamp in ms or None for now, headers or None)
Record = tuple[Payload, Payload, int | None, int | None, Headers | None]
# librdkafka's RD_KAFKA_PARTITION_UA, which confluent_kafka does not export: the partitioner chooses.
UNASSIGNED_PARTITION = -1


@pytest.fixture(scope="session")
def kafka_bootstrap(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real single-node broker for the whole run; the first run on a machine downloads Kafka."""
    data_dir = tmp_path_factory.mktemp("kafka-broker")
    info = broker.start(data_dir, on_progress=lambda message: print(message, file=sys.stderr))
    yield info.bootstrap
    # Stop Spark first, so executor consumers do not log reconnect noise against a stopped broker.
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        active.stop()
    close_cached_producers()  # the sink's producers made in this process (tests that write directly)
    broker.stop(data_dir)


@pytest.fixture
def topic_factory(kafka_bootstrap: str, request: pytest.FixtureRequest) -> Callable[..., str]:
    """`create(partitions=1, name_prefix=None, config=None) -> name`: a fresh topic, unique per call."""

    def create(
        partitions: int = 1, name_prefix: str | None = None, config: dict[str, str] | None = None
    ) -> str:
        prefix = name_prefix or re.sub(r"[^A-Za-z0-9._-]+", "-", request.node.name).strip("-")[:200]
        name = f"{prefix}-{uuid.uuid4().hex[:8]}"
        broker.create_topic(kafka_bootstrap, name, partitions=partitions, config=config)
        return name

    return create


# Test producers keep the records' order through retries with one request in flight, not with idempotence: a new
# idempotent producer (librdkafka 2.16) waits a fixed 500 ms for its producer id ("Coordinator not up"), which
# every test that produced paid (measured: 0.52 s against 0.015 s to produce 5 records; about 180 tests). Without
# idempotence a retried request could be written twice only if the local broker's acknowledgement were lost, and
# a test would then fail on the duplicate.
ORDERED = {"enable.idempotence": False, "max.in.flight.requests.per.connection": 1}


@pytest.fixture
def produce(kafka_bootstrap: str) -> Iterator[Callable[[str, Sequence[Record]], None]]:
    """`produce(topic, records)`: write records in order and wait until the broker acknowledged all.

    Keys without an explicit partition are placed with murmur2, the partitioner of Java clients
    (and so of Flink), so tests see the partitions a Java producer would choose.
    """
    config = {"bootstrap.servers": kafka_bootstrap, **ORDERED, "linger.ms": 0, "partitioner": "murmur2_random"}
    producer = Producer(config)

    def send(topic: str, records: Sequence[Record]) -> None:
        failures: list[str] = []

        def on_delivery(error: KafkaError | None, _message: Message) -> None:
            if error is not None:
                failures.append(str(error))

        for key, value, partition, timestamp_ms, headers in records:
            producer.produce(
                topic,
                value=value,
                key=key,
                partition=UNASSIGNED_PARTITION if partition is None else partition,
                timestamp=timestamp_ms or 0,  # 0: the producer stamps the current time
                headers=headers,
                on_delivery=on_delivery,
            )
            producer.poll(0)
        undelivered = producer.flush(30)
        if undelivered or failures:
            raise AssertionError(f"producing to {topic!r}: {undelivered} undelivered, errors {failures}")

    yield send
    producer.close()  # not left to the garbage collector, which may run after the broker stopped


# The test session's JVM compiles with C1 only. Each test builds new queries, whose generated classes the JIT
# compiles again, and on a few records C2's optimizing compiler never repays its work: measured on 20 conformance
# cases, 89 s with C1 only against 112 s with Java's defaults and 102 s with `kafka-sql run`'s JIT_OPTIONS (the
# JVM's compiler threads 7 s of CPU against 62 s and 36 s). Pipelines run as subprocesses keep the product's JVM.
TEST_JVM_JIT = "-XX:TieredStopAtLevel=1"


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    """One small local SparkSession for the run (2 cores shared with the broker)."""
    from pyspark.sql import SparkSession

    from connector.runtime import data_sources
    from connector.runtime.spark_jars import every_package, package_jars

    # `kafka-sql run`'s settings, whole, so a new product setting is tested too; then what differs in tests.
    conf: dict[str, PrimitiveType | None] = {
        **SESSION_CONF,
        "spark.jars": ",".join(str(jar) for jar in package_jars(every_package())),
        "spark.sql.shuffle.partitions": "2",
        "spark.default.parallelism": "2",
        "spark.ui.enabled": "false",
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.driver.extraJavaOptions": TEST_JVM_JIT,
    }
    session = SparkSession.builder.master("local[2]").appName("kafka-sql-tests").config(map=conf).getOrCreate()
    session.sparkContext.setLogLevel("WARN")
    data_sources.load_static(session)  # as `kafka-sql run` does
    yield session
    session.stop()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresInfo]:
    """A real PostgreSQL server (Debian's package) for the run, started on first use."""
    info = postgres.start()
    try:
        yield info
    finally:
        postgres.stop(info)


@pytest.fixture(scope="session")
def schema_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RegistryInfo]:
    """A real Confluent-compatible schema registry (Apicurio Registry, built from Maven Central once)."""
    info = registry.start(tmp_path_factory.mktemp("schema-registry"))
    try:
        yield info
    finally:
        registry.stop(info)


# What a test of each folder must not ask for (directly or through its fixtures): unit tests start no Spark session
# and no service, integration tests a Spark session but no broker, database or registry. e2e/ and conformance/ may
# ask for anything.
SERVICES = {"kafka_bootstrap", "topic_factory", "produce", "postgres_server", "schema_registry"}
FORBIDDEN = {"unit": SERVICES | {"spark"}, "integration": SERVICES}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    tests = Path(__file__).parent
    for item in items:
        try:
            folder = item.path.relative_to(tests).parts[0]
        except ValueError:
            continue
        wrong = sorted(FORBIDDEN.get(folder, set()) & set(getattr(item, "fixturenames", ())))
        if wrong:
            raise pytest.UsageError(
                f"{item.nodeid} uses {', '.join(wrong)}: tests in tests/{folder}/ must not (see tests/README.md); "
                "move it to the folder of what it needs"
            )
