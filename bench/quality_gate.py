"""The cost of the data-quality gate: batch time with a 10-expectation suite over batch time without it.

Produces `--batches` x 500k JSON records to a 4-partition topic on a broker started with `connector.dev.broker.start`,
then, after one warm-up run of each, alternating `--repeats` times, runs the same pipeline through `kafka-sql`'s
engine (compile, plan, `engine.start_all`) on local[2] with `'scan.max-records-per-batch' = '500000'`,
Trigger.AvailableNow:

  (a) kafka source -> blackhole sink (`--sink kafka`: a JSON Kafka topic);
  (b) the same with `'quality.suite'`: 10 expectations (not null x2, between x2, in set, regex, row count,
      min / max / mean) and `'quality.on-failure' = 'drop'`.

Batch time is Spark's `triggerExecution` of each micro-batch of 500k rows; the report gives the medians and
the ratio b/a (target: at most 1.15), and the ratio of each repeat's pair of runs, which ran back to back: their
spread shows how much the machine's other load moved the figures during the run. That load hardly changes the CPU
time a run takes (Spark's JVM, its Python workers and this driver process, from /proc), so the report gives it
too, per micro-batch and as a ratio.

    .venv/bin/python bench/quality_gate.py [--batches N] [--repeats N] [--rows-per-batch N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from confluent_kafka import Producer
from workspace import broker_workspace

from connector.dev import broker
from connector.planning.plan import build
from connector.quality.suite import gx_context
from connector.runtime import engine
from connector.sql.frontend import compile_file

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PARTITIONS = 4
TARGET = 1.15
COUNTRIES = ("DE", "FR", "IT", "ES", "NL")
SUITE = {
    "name": "bench",
    "expectations": [
        {"type": "expect_column_values_to_not_be_null", "kwargs": {"column": "id"}},
        {"type": "expect_column_values_to_not_be_null", "kwargs": {"column": "user"}},
        {
            "type": "expect_column_values_to_be_between",
            "kwargs": {"column": "amount", "min_value": 0, "max_value": 1000},
        },
        {"type": "expect_column_values_to_be_between", "kwargs": {"column": "ts", "min_value": 0}},
        {"type": "expect_column_values_to_be_in_set", "kwargs": {"column": "country", "value_set": list(COUNTRIES)}},
        {"type": "expect_column_values_to_match_regex", "kwargs": {"column": "user", "regex": "^user-[0-9]+$"}},
        {"type": "expect_table_row_count_to_be_between", "kwargs": {"min_value": 1, "max_value": 10_000_000}},
        {"type": "expect_column_min_to_be_between", "kwargs": {"column": "amount", "min_value": 0}},
        {"type": "expect_column_max_to_be_between", "kwargs": {"column": "amount", "max_value": 1000}},
        {"type": "expect_column_mean_to_be_between", "kwargs": {"column": "amount", "min_value": 0, "max_value": 1000}},
    ],
}


def record(i: int) -> bytes:
    return json.dumps(
        {
            "id": i,
            "user": f"user-{i % 10_000:05d}",
            "amount": round(i * 0.37 % 1000, 2),
            "country": COUNTRIES[i % len(COUNTRIES)],
            "ts": 1_700_000_000_000 + i,
        }
    ).encode()


def produce(bootstrap: str, topic: str, count: int) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 50, "batch.size": 1_000_000})
    for i in range(count):
        while True:
            try:
                producer.produce(topic, value=record(i), partition=i % PARTITIONS)
                break
            except BufferError:
                producer.poll(0.05)
        if i % 10_000 == 0:
            producer.poll(0)
    if producer.flush(120):
        raise RuntimeError("records were not all delivered")


def pipeline(work: Path, bootstrap: str, topic: str, rows_per_batch: int, gated: bool, sink: str) -> Path:
    quality = ", 'quality.suite' = 'suite.json', 'quality.on-failure' = 'drop'" if gated else ""
    name = "gated" if gated else "plain"
    path = work / f"{name}.sql"
    if sink == "kafka":
        output = f"{topic}-{name}-{time.monotonic_ns()}"
        broker.create_topic(bootstrap, output, partitions=PARTITIONS)
        connector = f"'connector' = 'kafka', 'topic' = '{output}', 'properties.bootstrap.servers' = '{bootstrap}', "
        connector += "'format' = 'json'"
    else:
        connector = "'connector' = 'blackhole'"
    path.write_text(
        "CREATE TABLE orders (id BIGINT, user STRING, amount DOUBLE, country STRING, ts BIGINT) WITH (\n"
        f"  'connector' = 'kafka', 'topic' = '{topic}', 'properties.bootstrap.servers' = '{bootstrap}',\n"
        "  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset',\n"
        f"  'scan.max-records-per-batch' = '{rows_per_batch}', 'format' = 'json');\n"
        "CREATE TABLE sink (id BIGINT, user STRING, amount DOUBLE, country STRING, ts BIGINT)\n"
        f"  WITH ({connector}{quality});\n"
        "INSERT INTO sink SELECT * FROM orders;\n"
    )
    return path


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process `pid` and its descendants (and their reaped children), from /proc."""
    tick = os.sysconf("SC_CLK_TCK")
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry.name)] = int(fields[1])
        times[int(entry.name)] = sum(int(v) for v in fields[11:15]) / tick  # utime stime cutime cstime
    tree, pending = set(), [pid]
    while pending:
        current = pending.pop()
        tree.add(current)
        pending += [child for child, parent in parents.items() if parent == current and child not in tree]
    return sum(times.get(p, 0.0) for p in tree)


def run_pipeline(spark: SparkSession, path: Path, checkpoint: Path, rows_per_batch: int) -> tuple[list[float], float]:
    """Run the pipeline over the whole topic: the execution time of each full micro-batch, and the CPU seconds
    of the whole run."""
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    processes = (int(jvm.ProcessHandle.current().pid()), os.getpid())
    compiled = compile_file(path)
    plan = build(compiled.require(), path.stem)
    cpu = sum(cpu_seconds(p) for p in processes)
    (running,) = engine.start_all(spark, plan, checkpoint, compiled.require())
    running.query.awaitTermination()
    cpu = sum(cpu_seconds(p) for p in processes) - cpu
    if running.query.exception() is not None:
        raise RuntimeError(str(running.query.exception()))
    full = [p for p in running.query.recentProgress if p["numInputRows"] == rows_per_batch]
    return [p["durationMs"]["triggerExecution"] / 1000.0 for p in full], cpu


def spark_session() -> SparkSession:
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("quality-gate-bench")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("WARN")
    return spark


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batches", type=int, default=3, help="micro-batches per run (default 3)")
    parser.add_argument("--repeats", type=int, default=5, help="runs of each pipeline, alternating (default 5)")
    parser.add_argument("--rows-per-batch", type=int, default=500_000)
    parser.add_argument(
        "--sink",
        choices=["blackhole", "kafka"],
        default="blackhole",
        help="blackhole (the gate checks and writes in one pass) or kafka (rows are checked before they are "
        "written, from memory)",
    )
    args = parser.parse_args()
    count = args.batches * args.rows_per_batch

    with broker_workspace("quality-gate-bench-") as (work, info):
        topic = f"bench-{int(time.time())}"
        broker.create_topic(info.bootstrap, topic, partitions=PARTITIONS)
        started = time.perf_counter()
        produce(info.bootstrap, topic, count)
        print(f"produced {count:,} records of ~{len(record(count // 2))} bytes in {time.perf_counter() - started:.1f}s")
        (work / "suite.json").write_text(json.dumps(SUITE))
        gx_context()  # great-expectations' import (seconds, once per process) is no batch cost
        spark = spark_session()
        times: dict[bool, list[float]] = {False: [], True: []}
        pairs: list[float] = []  # per repeat: median gated batch time over the median of the plain run before it
        last_plain: list[float] = []
        cpu: dict[bool, list[float]] = {False: [], True: []}
        for repeat in range(-1, args.repeats):  # run -1 warms the JVM up and is not counted
            for gated in (False, True):
                path = pipeline(work, info.bootstrap, topic, args.rows_per_batch, gated, args.sink)
                checkpoint = work / f"checkpoint-{repeat}-{path.stem}"
                found, used = run_pipeline(spark, path, checkpoint, args.rows_per_batch)
                if repeat < 0:
                    continue
                times[gated] += found
                if gated:
                    pairs.append(statistics.median(found) / statistics.median(last_plain))
                else:
                    last_plain = found
                cpu[gated].append(used / args.batches)
                shown = ", ".join(f"{t:.2f}s" for t in found)
                print(
                    f"run {repeat + 1} {'(b) gated' if gated else '(a) plain'}: {len(found)} batches of "
                    f"{args.rows_per_batch:,} rows: {shown}; CPU {used / args.batches:.2f}s per batch"
                )
        spark.stop()
        plain, gated_median = statistics.median(times[False]), statistics.median(times[True])
        ratio = gated_median / plain
        cpu_plain, cpu_gated = statistics.median(cpu[False]), statistics.median(cpu[True])
        print(f"\nmedian batch time (a) without the gate: {plain:.2f}s; CPU per batch {cpu_plain:.2f}s")
        print(f"median batch time (b) with a 10-expectation suite: {gated_median:.2f}s; CPU per batch {cpu_gated:.2f}s")
        print(f"ratio b/a: {ratio:.3f} (target <= {TARGET}: {'met' if ratio <= TARGET else 'NOT met'})")
        print(f"ratio of each repeat's pair of runs: {', '.join(f'{r:.3f}' for r in pairs)}")
        print(f"CPU time ratio b/a: {cpu_gated / cpu_plain:.3f}")


if __name__ == "__main__":
    main()
