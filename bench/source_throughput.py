"""Throughput of the flink-kafka source against the bare confluent-kafka consume loop.

Produces 1M JSON records of about 200 bytes to a 4-partition topic on a broker started with
`connector.broker.start`, then in one run measures, 3 times each:

  (a) the raw confluent-kafka loop: `consume(num_messages=...)` over the whole topic, nothing else
      (with the source's fetch settings, READER_DEFAULTS: librdkafka's defaults are 5-10x slower);
  (b) `spark.readStream.format("flink-kafka")` -> `noop` sink on local[2], Trigger.AvailableNow.

and prints the medians and the ratio b/a. (b) is given as wall time from `start()` to the end of the
query, and as the rate over the micro-batches' own execution time (without query start-up).

    .venv/bin/python bench/source_throughput.py [--records N] [--profile]

`--profile` also profiles the executor-side read path (`read_partition`) of one partition in-process.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from confluent_kafka import Consumer, Producer, TopicPartition

from connector import broker
from connector.kafka_source import (
    READER_DEFAULTS,
    KafkaInputPartition,
    KafkaSource,
    close_cached_consumers,
    read_partition,
)
from connector.offsets import SourceSettings

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PARTITIONS = 4
REPEATS = 3
RECORD_BYTES = 200


def record(i: int) -> bytes:
    body = {
        "id": i,
        "user": f"user-{i % 10_000:05d}",
        "amount": round(i * 0.37 % 1000, 2),
        "ts": 1_700_000_000_000 + i,
    }
    text = json.dumps(body)
    return json.dumps({**body, "pad": "x" * max(0, RECORD_BYTES - len(text) - 10)}).encode()


def produce(bootstrap: str, topic: str, count: int) -> None:
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "linger.ms": 50,
            "batch.size": 1_000_000,
            "queue.buffering.max.messages": 500_000,
        }
    )
    for i in range(count):
        while True:
            try:
                producer.produce(topic, value=record(i), key=str(i % 1000).encode(), partition=i % PARTITIONS)
                break
            except BufferError:
                producer.poll(0.05)
        if i % 10_000 == 0:
            producer.poll(0)
    if producer.flush(120):
        raise RuntimeError("records were not all delivered")


def raw_consume(bootstrap: str, topic: str, count: int) -> float:
    """Seconds to consume the whole topic with the bare client (fresh consumer, explicit assignment)."""
    config = {**READER_DEFAULTS, "bootstrap.servers": bootstrap, "group.id": "bench-raw", "enable.auto.commit": False}
    consumer = Consumer(config)
    consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    started = time.perf_counter()
    seen = 0
    while seen < count:
        for message in consumer.consume(num_messages=10_000, timeout=1.0):
            if message.error() is None:
                seen += 1
    elapsed = time.perf_counter() - started
    consumer.close()
    return elapsed


def spark_session() -> SparkSession:
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("flink-kafka-source-bench")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("WARN")
    spark.dataSource.register(KafkaSource)
    return spark


def source_to_noop(
    spark: SparkSession, bootstrap: str, topic: str, count: int, checkpoint: Path
) -> tuple[float, float]:
    """(wall seconds from start() to the end, seconds of micro-batch execution) for the whole topic."""
    options = {
        "topic": topic,
        "properties.bootstrap.servers": bootstrap,
        "scan.startup.mode": "earliest-offset",
    }
    frame = spark.readStream.format("flink-kafka").options(**options).load()
    started = time.perf_counter()
    query = (
        frame.writeStream.format("noop")
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    wall = time.perf_counter() - started
    progress = [p for p in query.recentProgress if p["numInputRows"]]
    rows = sum(p["numInputRows"] for p in progress)
    if rows != count:
        raise RuntimeError(f"the query read {rows} records, expected {count}")
    return wall, sum(p["durationMs"]["triggerExecution"] for p in progress) / 1000.0


def profile_reader(bootstrap: str, topic: str, count: int) -> None:
    settings = SourceSettings.from_options(
        {"topic": topic, "properties.bootstrap.servers": bootstrap, "scan.startup.mode": "earliest-offset"}
    )
    profiler = cProfile.Profile()
    profiler.enable()
    rows = sum(b.num_rows for b in read_partition(settings, KafkaInputPartition(topic, 0, 0, count // PARTITIONS)))
    profiler.disable()
    close_cached_consumers()
    print(f"\nProfile of read_partition over one partition ({rows} records):")
    pstats.Stats(profiler).sort_stats("tottime").print_stats(12)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    count = args.records

    work = Path(tempfile.mkdtemp(prefix="source-bench-"))
    info = broker.start(work / "broker", on_progress=print)
    try:
        topic = f"bench-{int(time.time())}"
        broker.create_topic(info.bootstrap, topic, partitions=PARTITIONS)
        started = time.perf_counter()
        produce(info.bootstrap, topic, count)
        took = time.perf_counter() - started
        print(f"produced {count:,} records of ~{len(record(count // 2))} bytes in {took:.1f}s")

        raw = []
        for i in range(REPEATS):
            raw.append(raw_consume(info.bootstrap, topic, count))
            print(f"(a) raw consume #{i + 1}: {raw[-1]:.2f}s = {count / raw[-1]:,.0f} records/s")

        spark = spark_session()
        walls, batches = [], []
        for i in range(REPEATS):
            wall, batch = source_to_noop(spark, info.bootstrap, topic, count, work / f"checkpoint-{i}")
            walls.append(wall)
            batches.append(batch)
            print(
                f"(b) source -> noop #{i + 1}: wall {wall:.2f}s = {count / wall:,.0f} records/s; "
                f"micro-batches {batch:.2f}s = {count / batch:,.0f} records/s"
            )
        spark.stop()

        a = count / statistics.median(raw)
        b_wall = count / statistics.median(walls)
        b_batch = count / statistics.median(batches)
        print(f"\nmedian (a) raw confluent-kafka consume: {a:,.0f} records/s")
        print(f"median (b) flink-kafka source -> noop: {b_wall:,.0f} records/s wall, {b_batch:,.0f} in batches")
        print(f"ratio b/a: {b_wall / a:.2f} (wall), {b_batch / a:.2f} (micro-batches)")
        if args.profile:
            profile_reader(info.bootstrap, topic, count)
    finally:
        broker.stop(work / "broker")
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
