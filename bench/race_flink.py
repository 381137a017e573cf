"""Race: one Flink SQL file run by real Apache Flink and by `kafka-sql run`, on the same broker and input.

    .venv/bin/python bench/race_flink.py [--records 100000 1000000] [--repeats 1]

Needs Flink's environment (`make .flink-venv/.installed`: PyFlink from PyPI) and Flink's Kafka SQL connector
(Maven Central, as the conformance suite resolves it). For each size, a fresh 4-partition topic gets that many
JSON records of about 210 bytes (`race.record`); then each engine runs, as a user starts it (a process from the
command to its exit), the pipeline

    INSERT INTO dst SELECT id, UPPER(customer), amount * 1.2, ts FROM src WHERE amount >= THRESHOLD

bounded ('scan.bounded.mode' = 'latest-offset'), into a fresh topic each run: Flink 2.3 in a local mini-cluster
(tests/conformance/flink_job.py, parallelism = the machine's cores), kafka-sql with `kafka-sql run` (local[*]).
The output topic stamps each record with the broker's clock as it is appended (`message.timestamp.type` =
LogAppendTime), and a consumer reads those stamps afterwards, so the figures do not depend on how fast the
watcher keeps up while both engines use every core. Reported per engine (medians over --repeats): the whole
process's wall time, the time to the first output record, the steady-state rate (output records between the
first and the last one, over that time: start-up excluded), and kafka-sql's figures as ratios of Flink's (wall and first
output: lower is better; rate: higher is better). Both must write the same number of records.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from confluent_kafka import Consumer

from connector.dev import broker

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "tests" / "conformance"))
from race import PARTITIONS, produce  # noqa: E402
from race_spark import THRESHOLD  # noqa: E402
from record_flink import flink_jars  # noqa: E402
from workspace import broker_workspace  # noqa: E402

PIPELINE = """SET 'parallelism.default' = '{parallelism}';

CREATE TABLE src (id BIGINT, customer STRING, amount DOUBLE, ts BIGINT) WITH (
  'connector' = 'kafka', 'topic' = '{source}', 'properties.bootstrap.servers' = '{bootstrap}',
  'properties.group.id' = 'race-{run}', 'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset', 'format' = 'json'
);
CREATE TABLE dst (id BIGINT, customer STRING, amount DOUBLE, ts BIGINT) WITH (
  'connector' = 'kafka', 'topic' = '{sink}', 'properties.bootstrap.servers' = '{bootstrap}', 'format' = 'json'
);
INSERT INTO dst SELECT id, UPPER(customer), amount * 1.2, ts FROM src WHERE amount >= {threshold};
"""


@dataclass(frozen=True)
class Run:
    wall: float  # the process, command to exit
    first: float  # command to the first output record
    rate: float  # output records/s between the first and the last output record
    records: int


def appended(bootstrap: str, topic: str, expected: int, timeout: float = 60.0) -> tuple[int, float, float]:
    """The records of `topic` and the broker's append times (epoch seconds) of its first and last one."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"watch-{topic}",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    records, first, last = 0, float("inf"), 0.0
    deadline = time.monotonic() + timeout
    try:
        while records < expected and time.monotonic() < deadline:
            for message in consumer.consume(num_messages=10_000, timeout=0.2):
                if message.error() is None:
                    stamp = message.timestamp()[1] / 1000
                    first, last = min(first, stamp), max(last, stamp)
                    records += 1
    finally:
        consumer.close()
    return records, first, last


def race_once(engine: str, command: list[str], bootstrap: str, sink: str, expected: int) -> Run:
    broker.create_topic(bootstrap, sink, partitions=PARTITIONS, config={"message.timestamp.type": "LogAppendTime"})
    started = time.time()
    done = subprocess.run(command, capture_output=True, text=True, timeout=1800, cwd=REPO, check=False)
    wall = time.time() - started
    if done.returncode != 0:
        raise RuntimeError(f"{engine} failed:\n{done.stderr[-3000:]}")
    records, first, last = appended(bootstrap, sink, expected)
    if not records:
        raise RuntimeError(f"{engine} wrote nothing")
    span = last - first
    return Run(wall, first - started, records / span if span > 0 else 0.0, records)


def median(runs: list[Run]) -> Run:
    return Run(statistics.median(r.wall for r in runs), statistics.median(r.first for r in runs),
               statistics.median(r.rate for r in runs), runs[0].records)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    flink_python = os.environ.get("FLINK_PYTHON", str(REPO / ".flink-venv" / "bin" / "python"))
    if not Path(flink_python).exists():
        sys.exit("needs Flink's environment: make .flink-venv/.installed (or FLINK_PYTHON)")
    jars = flink_jars()
    cores = os.cpu_count() or 1
    with broker_workspace("race-flink-") as (work, info):
        results: list[tuple[int, Run, Run]] = []
        for size in args.records:
            source = f"race-flink-src-{size}"
            broker.create_topic(info.bootstrap, source, partitions=PARTITIONS)
            expected = int(produce(info.bootstrap, source, size)["selected"])
            runs: dict[str, list[Run]] = {"flink": [], "kafka-sql": []}
            for repeat in range(args.repeats):
                for engine in runs:
                    run = f"{engine}-{size}-{repeat}"
                    sql = work / f"{run}.sql"
                    sql.write_text(PIPELINE.format(parallelism=cores, source=source, sink=f"race-out-{run}",
                                                   bootstrap=info.bootstrap, run=run, threshold=THRESHOLD))
                    if engine == "flink":
                        command = [flink_python, str(REPO / "tests" / "conformance" / "flink_job.py"), str(sql),
                                   jars]
                    else:
                        command = [str(Path(sys.executable).with_name("kafka-sql")), "run", str(sql),
                                   "--checkpoint-dir", str(work / f"{run}-checkpoints")]
                    result = race_once(engine, command, info.bootstrap, f"race-out-{run}", expected)
                    if result.records != expected:
                        raise RuntimeError(f"{engine} wrote {result.records} records, expected {expected}")
                    runs[engine].append(result)
                    print(f"{run}: wall {result.wall:.1f} s, first output {result.first:.1f} s, "
                          f"{result.rate:,.0f} records/s", flush=True)
            results.append((size, median(runs["flink"]), median(runs["kafka-sql"])))
    print(f"\nFlink 2.3 (parallelism {cores}) against kafka-sql (local[*]) on {cores} cores, medians of "
          f"{args.repeats}; ratios: kafka-sql / Flink")
    print(f"{'records':>10} {'engine':>10} {'wall s':>8} {'first s':>8} {'records/s':>11}")
    for size, flink, ours in results:
        for name, figures in (("flink", flink), ("kafka-sql", ours)):
            print(f"{size:>10,} {name:>10} {figures.wall:>8.1f} {figures.first:>8.1f} {figures.rate:>11,.0f}")
        print(f"{'':>10} {'ratio':>10} {ours.wall / flink.wall:>8.2f} {ours.first / flink.first:>8.2f} "
              f"{ours.rate / flink.rate if flink.rate else 0:>11.2f}")


if __name__ == "__main__":
    main()
