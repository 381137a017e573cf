"""The records a long micro-batch has read show while it runs (`connector.runtime.live`), before Spark's progress
report, which comes only when the batch ends."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from pyspark.sql import functions as F
from support.commands import run

from connector.connectors.kafka.source import KafkaSource
from connector.runtime.live import BatchSoFar, running_batches

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@pytest.mark.slow
def test_a_running_batch_shows_the_records_it_has_read(
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Callable[[str, Sequence[Any]], None],
    tmp_path: Path,
) -> None:
    topic = topic_factory(partitions=1)
    produce(topic, [(None, json.dumps({"id": i}).encode(), None, None, None) for i in range(40)])
    spark.dataSource.register(KafkaSource)
    frame = (
        spark.readStream.format("flink-kafka")
        .option("topic", topic)
        .option("properties.bootstrap.servers", kafka_bootstrap)
        .option("scan.startup.mode", "earliest-offset")
        .option("scan.bounded.mode", "latest-offset")
        .load()
    )
    # 0.25 s a record (a lambda: Spark's workers cannot import this module): a batch of about 10 s, several heartbeats
    slowly = F.udf(lambda value: (time.sleep(0.25), value)[1], "bigint")  # type: ignore[func-returns-value]
    query = (
        frame.select(slowly(F.col("offset")).alias("offset"))
        .writeStream.format("noop")
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    seen: list[tuple[BatchSoFar, bool]] = []
    deadline = time.monotonic() + 120
    while query.isActive and time.monotonic() < deadline:
        so_far = running_batches(spark).get(str(query.id))
        if so_far is not None:
            seen.append((so_far, query.lastProgress is None))
        time.sleep(0.2)
    assert not query.isActive and query.exception() is None

    during_first_batch = [s for s, no_report_yet in seen if no_report_yet and s.batch == 0]
    assert during_first_batch, seen
    assert [s.records for s in during_first_batch][-1] == 40  # all read, the slow expression still running
    assert all(s.records in (0, 40) for s in during_first_batch)  # the reader hands its records over at once
    assert during_first_batch[-1].records_per_second > 0
    assert str(query.id) not in running_batches(spark)  # nothing runs any more


PIPELINE = """
CREATE TABLE events (id BIGINT, name STRING) WITH (
  'connector' = 'kafka', 'topic' = '{{ var("topic") }}', 'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', 'format' = 'json'
);
CREATE TABLE nowhere (id BIGINT, name STRING) WITH ('connector' = 'blackhole');
INSERT INTO nowhere SELECT id, UPPER(name) FROM events;
"""
RECORDS = 400_000


@pytest.mark.slow
def test_run_shows_the_records_of_a_long_first_batch_while_it_runs(
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A bounded run reads its whole backlog in one first batch (seconds here): the progress lines (no terminal:
    one when a figure changed) count its records as they are read, not 'rows 0' until it ends.

    Eight partitions on two cores: the batch's tasks end in four waves, each wave's rows counted when it ends, so
    figures between 0 and all exist on any machine's speed; the display asks Spark often enough to see them."""
    from confluent_kafka import Producer

    from connector.runtime import live

    monkeypatch.setattr(live, "ASK_EVERY", 0.2)
    topic = topic_factory(partitions=8)
    # Room for every record in the producer's queue: a slow broker would else fill it ("Queue full") before a poll.
    producer = Producer({"bootstrap.servers": kafka_bootstrap, "linger.ms": 20, "batch.num.messages": 10000,
                         "queue.buffering.max.messages": RECORDS})
    for i in range(RECORDS):
        producer.produce(topic, json.dumps({"id": i, "name": f"name-{i:032d}"}).encode(), partition=i % 8)
        if i % 10_000 == 0:
            producer.poll(0)
    assert producer.flush(60) == 0
    (tmp_path / "long.sql").write_text(PIPELINE)

    result = run(capsys, tmp_path / "long.sql", tmp_path / "cp", brokers=kafka_bootstrap, topic=topic)

    assert result.code == 0, result.err
    counted = [int(rows) for rows in re.findall(r"long\.nowhere: batch 0 rows (\d+) ", result.err)]
    assert any(0 < rows < RECORDS for rows in counted), result.err  # moving while the batch ran
    assert counted == sorted(counted)  # never backwards
    assert f"1 micro-batch(es), {RECORDS} record(s) read" in result.err
