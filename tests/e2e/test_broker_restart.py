"""A pipeline lives through a broker killed with SIGKILL and restarted on the same data 15 s later.

Java clients (and so Flink) retry what Kafka calls retriable, such as leaders not yet elected and coordinators still
loading after a restart; the planner does too ('scan.retry-timeout'), and so do the exactly-once sink's transaction
requests. The pipeline of the crash test (parquet files and an exactly-once Kafka topic) runs on a broker of its
own; the broker is killed while a micro-batch of a large backlog is being written into a Kafka transaction, and
comes back; `kafka-sql produce`, started while it is down, waits for it; then every record must be in both sinks
exactly once.
"""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow.parquet as pq
import pytest
from confluent_kafka import Consumer, TopicPartition
from support.commands import KAFKA_SQL
from support.crashes import CRASH_PIPELINE, PARTITIONS, Feed, commit_files, kill_all, start_run
from support.topics import read_topic

from connector.dev import broker

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

OUTAGE_SECONDS = 15
BACKLOG = 100_000  # records of the batch in flight when the broker dies: seconds of writing
TOTAL = 30 + BACKLOG + 30


def end_offset(bootstrap: str, topic: str) -> int:
    """The end of partition 0 of `topic`: records of open transactions included."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "restart-check"})
    try:
        return int(consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10, cached=False)[1])
    finally:
        consumer.close()


def wait_for(condition: object, what: str, timeout: float, log: Path, process: subprocess.Popen[bytes]) -> None:
    """Until `condition()` holds; fails at once, with the run's log, when the run ended meanwhile."""
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        assert process.poll() is None, f"the run ended (exit {process.returncode}) before {what}:\n{log.read_text()}"
        assert time.monotonic() < deadline, f"timed out waiting for {what}:\n{log.read_text()[-20000:]}"
        time.sleep(0.2)


@pytest.mark.slow
def test_a_pipeline_keeps_running_through_a_broker_restart_and_loses_nothing(
    spark: SparkSession, tmp_path: Path
) -> None:
    data_dir = tmp_path / "broker"
    info = broker.start(data_dir)
    try:
        topic, out = "restart-in", "restart-out"
        broker.create_topic(info.bootstrap, topic, partitions=PARTITIONS)
        broker.create_topic(info.bootstrap, out, partitions=1)
        sql, checkpoint, log, files = tmp_path / "restart.sql", tmp_path / "cp", tmp_path / "run.log", tmp_path / "f"
        sql.write_text(CRASH_PIPELINE)
        variables = {"brokers": info.bootstrap, "topic": topic, "out": out, "group": "restart", "path": str(files)}
        feed = Feed(info.bootstrap, topic)
        feed.send(30)
        process = start_run(sql, checkpoint, log, variables)
        try:
            wait_for(lambda: len(commit_files(checkpoint)) >= 2, "the first batch of both queries", 180, log, process)
            written = end_offset(info.bootstrap, out)
            feed.send(BACKLOG)
            # the transaction of the backlog's batch has records in the topic and no commit yet
            in_flight = lambda: end_offset(info.bootstrap, out) > written + 1000  # noqa: E731
            wait_for(in_flight, "the backlog's transaction to be written", 180, log, process)
            assert end_offset(info.bootstrap, out) < written + BACKLOG, "the backlog was written before the kill"
            os.kill(info.pid, signal.SIGKILL)
            # the last records come from `kafka-sql produce`, started while the broker is down: it waits for it
            last = tmp_path / "last.jsonl"
            last.write_text("".join(f'{{"id": {i}, "payload": "p{i}"}}\n' for i in range(30 + BACKLOG, TOTAL)))
            producing = subprocess.Popen(
                [str(KAFKA_SQL), "produce", topic, str(last), "--bootstrap", info.bootstrap],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            )  # fmt: skip
            time.sleep(OUTAGE_SECONDS)
            assert process.poll() is None, f"the run ended while the broker was down; see {log}"
            assert producing.poll() is None, producing.communicate()[0]
            restarted = broker.start(data_dir)
            assert restarted.bootstrap == info.bootstrap
            output = producing.communicate(timeout=120)[0]
            assert producing.returncode == 0 and f"produced 30 record(s) to '{topic}'" in output, output

            def copied_all() -> bool:
                return spark.read.parquet(str(files)).select("id").distinct().count() == TOTAL

            wait_for(copied_all, "the records produced after the restart", 240, log, process)
            assert process.poll() is None, f"the run ended; see {log}"
            os.killpg(process.pid, signal.SIGINT)
            assert process.wait(120) == 0, log.read_text()
        finally:
            if process.poll() is None:
                kill_all(process)
        expected = [(i, f"p{i}") for i in range(TOTAL)]
        rows = spark.read.parquet(str(files)).collect()
        assert sorted((r.id, r.payload) for r in rows) == expected
        listed = pq.read_table(str(files))
        pairs = zip(listed.column("id").to_pylist(), listed.column("payload").to_pylist(), strict=True)
        assert sorted(pairs) == expected
        assert sorted((r["id"], r["payload"]) for r in read_topic(info.bootstrap, out)) == expected
        text = log.read_text()
        assert "Traceback" not in text
        # librdkafka's log, through Python logging: each client process shows a condition once per 30 s.
        assert not [line for line in text.splitlines() if line.startswith("%")], text
        assert len([line for line in text.splitlines() if "Connect to ipv4" in line]) <= 30, text
        # Not a terminal: a progress line when a query's figures changed, not the same line while the broker is down.
        for query in ("crash.files", "crash.copies"):
            progress = [line for line in text.splitlines() if line.startswith(f"{query}: batch ")]
            assert progress, text
            assert all(a != b for a, b in itertools.pairwise(progress)), progress
    finally:
        broker.stop(data_dir)
