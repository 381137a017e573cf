"""The Kafka source and sink as static Spark data sources: the pure-JVM spark-sql shell, and batch reads.

Spark registers the `DefaultSource` of every top-level `pyspark_*` module on the Python path
(`pyspark_flink_kafka`, `pyspark_flink_kafka_sink`). An installed kafka-sql has them in site-packages; this
checkout provides them through PYTHONPATH, as a source checkout (or a compat-mode editable install) does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from confluent_kafka import Consumer, TopicPartition

from connector.connectors.kafka.source import KafkaSource

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

REPO = Path(__file__).resolve().parents[2]
SPARK_SQL = Path(sys.executable).parent / "spark-sql"
ORDERS: list[dict[str, Any]] = [
    {"id": 1, "customer": "alice", "amount": 12.5},
    {"id": 2, "customer": "bob", "amount": -3.0},
    {"id": 3, "customer": "carol", "amount": 40.0},
    {"id": 4, "customer": "alice", "amount": -7.25},
    {"id": 5, "customer": "bob", "amount": 1.0},
]


def spark_sql(statements: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run statements in the spark-sql shell (a fresh JVM); its Python workers run this interpreter."""
    environment = {
        **os.environ,
        "PYSPARK_PYTHON": sys.executable,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    command = [
        str(SPARK_SQL), "-S", "--master", "local[1]",
        "--conf", "spark.ui.enabled=false", "--conf", "spark.driver.host=127.0.0.1",
        "--conf", f"spark.sql.warehouse.dir={cwd / 'warehouse'}",
        "-e", statements,
    ]
    return subprocess.run(command, cwd=cwd, env=environment, capture_output=True, text=True, timeout=600, check=False)


def topic_values(bootstrap: str, topic: str) -> list[tuple[bytes | None, bytes | None]]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"check-{topic}", "enable.auto.commit": False})
    try:
        partition = TopicPartition(topic, 0, 0)
        end = consumer.get_watermark_offsets(partition, timeout=30)[1]
        consumer.assign([partition])
        records: list[tuple[bytes | None, bytes | None]] = []
        while len(records) < end:
            message = consumer.poll(30)
            assert message is not None, f"timed out reading {topic}"
            if not message.error():
                records.append((message.key(), message.value()))
        return records
    finally:
        consumer.close()


@pytest.mark.slow
def test_the_spark_sql_shell_reads_and_writes_kafka_with_flink_option_names(
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Callable[..., None],
    tmp_path: Path,
) -> None:
    orders, refunds = topic_factory(partitions=2), topic_factory()
    produce(orders, [(str(o["id"]).encode(), json.dumps(o).encode(), int(o["id"]) % 2, None, None) for o in ORDERS])
    common = f"'properties.bootstrap.servers' '{kafka_bootstrap}'"
    done = spark_sql(
        f"""
        CREATE TEMPORARY VIEW orders USING `flink-kafka` OPTIONS ('topic' '{orders}', {common},
          'scan.startup.mode' 'earliest-offset', 'scan.bounded.mode' 'latest-offset');
        SELECT get_json_object(CAST(value AS STRING), '$.customer') AS customer, COUNT(*),
          SORT_ARRAY(COLLECT_SET(partition))
        FROM orders GROUP BY 1 ORDER BY 1;
        CREATE TEMPORARY VIEW refunds (key BINARY, value BINARY) USING `flink-kafka-sink` OPTIONS (
          'topic' '{refunds}', {common});
        INSERT INTO refunds SELECT key, value FROM orders
        WHERE CAST(get_json_object(CAST(value AS STRING), '$.amount') AS DOUBLE) < 0;
        """,
        tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines() == ["alice\t2\t[0,1]", "bob\t2\t[0,1]", "carol\t1\t[1]"]
    written = sorted(topic_values(kafka_bootstrap, refunds))
    assert written == sorted((str(o["id"]).encode(), json.dumps(o).encode()) for o in ORDERS if o["amount"] < 0)


def test_a_batch_read_covers_the_startup_to_bounded_range_and_commits_nothing(
    spark: SparkSession, kafka_bootstrap: str, topic_factory: Callable[..., str], produce: Callable[..., None]
) -> None:
    topic = topic_factory()
    produce(topic, [(None, f"v{i}".encode(), 0, None, None) for i in range(5)])
    spark.dataSource.register(KafkaSource)

    def offsets(**options: str) -> list[int]:
        frame = spark.read.format("flink-kafka").options(
            topic=topic, **{"properties.bootstrap.servers": kafka_bootstrap}, **options
        ).load()
        return sorted(r.offset for r in frame.collect())

    assert offsets(**{"scan.startup.mode": "earliest-offset"}) == [0, 1, 2, 3, 4]  # unbounded: up to latest now
    assert offsets(**{
        "scan.startup.mode": "specific-offsets", "scan.startup.specific-offsets": "partition:0,offset:1",
        "scan.bounded.mode": "specific-offsets", "scan.bounded.specific-offsets": "partition:0,offset:3",
    }) == [1, 2]
    assert offsets(**{"scan.startup.mode": "latest-offset"}) == []
    group = {"properties.group.id": f"batch-{topic}", "properties.auto.offset.reset": "earliest"}
    assert offsets(**group) == [0, 1, 2, 3, 4]
    assert offsets(**group) == [0, 1, 2, 3, 4]  # nothing was committed
