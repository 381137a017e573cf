"""Nexmark: each query of the benchmark's own Flink SQL run by real Apache Flink and by `kafka-sql run`, one topic.

    .venv/bin/python bench/nexmark.py [--events 5000000] [--queries q0 q1 ...] [--rate 10000]

Needs Flink's environment (`make .flink-venv/.installed`) and Nexmark's sources beside the project
(../shared/nexmark, or NEXMARK_DIR). `kafka-sql nexmark`'s generator writes --events events (seed 0, --rate
events per second of event time) to a fresh 4-partition topic; each query is the conformance suite's
(`tests/conformance/nexmark.py`: Nexmark's DDL and views, the query, comparable sinks instead of blackhole),
bounded at the topic's end. For each query, the engines alternate, Flink 2.3 first (a local mini-cluster,
parallelism = cores, a checkpoint every 3 minutes as in Nexmark's Flink configuration,
`tests/conformance/flink_job.py`), then kafka-sql (local[*]), each as a user starts it,
a process from the command to its exit:

* over an empty topic: the start-up and shut-down cost alone;
* over the events: the whole-process wall time.

Reported per query: both wall times, the steady throughput (events / (wall - empty-topic wall): start-up
excluded) and kafka-sql's figures as ratios of Flink's (wall: lower is better, events/s: higher is better).
A query an engine cannot run shows why. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "tests" / "conformance"))
import nexmark_cases as nexmark  # noqa: E402
from record_flink import flink_jars  # noqa: E402
from workspace import broker_workspace  # noqa: E402

from connector.dev import broker  # noqa: E402
from connector.dev.nexmark import NexmarkConfig, produce  # noqa: E402
from connector.sql.template.templating import render_string  # noqa: E402

PARTITIONS = 4


@dataclass(frozen=True)
class Timing:
    empty: float  # wall seconds over an empty topic
    full: float  # wall seconds over the events
    error: str | None = None

    def rate(self, events: int) -> float:
        return events / (self.full - self.empty) if self.full > self.empty else 0.0


def command(engine: str, sql: Path, work: Path, jars: str) -> list[str]:
    if engine == "flink":
        python = os.environ.get("FLINK_PYTHON", str(REPO / ".flink-venv" / "bin" / "python"))
        return [python, str(REPO / "tests" / "conformance" / "flink_job.py"), str(sql), jars]
    kafka_sql = str(Path(sys.executable).with_name("kafka-sql"))
    return [kafka_sql, "run", str(sql), "--checkpoint-dir", str(work / f"{sql.stem}-checkpoints")]


def timed(engine: str, query: str, topic: str, bootstrap: str, work: Path, jars: str) -> float:
    """One run of `query` over `topic` into fresh sink topics; its wall seconds. RuntimeError when it fails."""
    name = f"nexmark_{query}"
    run = f"{engine}-{query}-{topic}-{time.monotonic_ns()}"
    variables = {"brokers": bootstrap, "nexmark": topic}
    text = nexmark.sql(name)
    for sink in nexmark.sinks(text):
        variables[sink] = f"{run}-{sink}"
        broker.create_topic(bootstrap, variables[sink], partitions=PARTITIONS)
    parallelism = os.cpu_count() or 1
    sql = work / f"{run}.sql"
    rendered = render_string(text, f"{name}.sql", variables).text
    # Flink: a checkpoint every 3 minutes, as Nexmark's own Flink configuration has it (the conformance suite's
    # 1-second checkpoints fail under this load: "Exceeded checkpoint tolerable failure threshold")
    # and in files: the default storage, the JobManager's memory, takes at most 5 MB of state per task, which the
    # joins and Top-N outgrow at this size ("Asynchronous task checkpoint failed")
    settings = (
        f"SET 'parallelism.default' = '{parallelism}';\nSET 'execution.checkpointing.interval' = '3 min';\n"
        f"SET 'execution.checkpointing.storage' = 'filesystem';\n"
        f"SET 'execution.checkpointing.dir' = 'file://{work / (run + '-flink-checkpoints')}';\n"
    )
    sql.write_text(settings + rendered if engine == "flink" else rendered)
    started = time.time()
    done = subprocess.run(command(engine, sql, work, jars), capture_output=True, text=True, timeout=3600, cwd=REPO,
                          check=False)
    wall = time.time() - started
    if done.returncode != 0:
        output = (done.stdout + done.stderr).splitlines()
        causes = [line for line in output if line.startswith("Caused by:")]  # Flink's root cause is the last one
        lines = causes or [line for line in output if "rror" in line]
        raise RuntimeError(lines[-1][:300] if lines else done.stderr[-300:])
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=5_000_000)
    parser.add_argument("--rate", type=int, default=10_000, help="events per second of event time")
    parser.add_argument("--queries", nargs="+", default=[n.removeprefix("nexmark_") for n in nexmark.NAMES])
    args = parser.parse_args()
    if not nexmark.available():
        sys.exit(f"needs Nexmark's sources at {nexmark.QUERIES} (or NEXMARK_DIR)")
    jars = flink_jars()
    results: dict[str, dict[str, Timing]] = {}
    with broker_workspace("nexmark-") as (work, info):
        empty, full = "nexmark-empty", "nexmark-events"
        broker.create_topic(info.bootstrap, empty, partitions=PARTITIONS)
        broker.create_topic(info.bootstrap, full, partitions=PARTITIONS)
        started = time.time()
        produce(info.bootstrap, full, args.events, NexmarkConfig(first_event_rate=args.rate), partitions=PARTITIONS)
        print(f"{args.events:,} events written in {time.time() - started:.0f} s", flush=True)
        for query in args.queries:
            results[query] = {}
            for engine in ("flink", "kafka-sql"):
                try:
                    timing = Timing(timed(engine, query, empty, info.bootstrap, work, jars),
                                    timed(engine, query, full, info.bootstrap, work, jars))
                except RuntimeError as error:
                    timing = Timing(0.0, 0.0, str(error))
                results[query][engine] = timing
                print(f"{query} {engine}: " + (f"failed: {timing.error}" if timing.error else
                      f"empty {timing.empty:.1f} s, events {timing.full:.1f} s, "
                      f"{timing.rate(args.events):,.0f} events/s"), flush=True)
    cores = os.cpu_count() or 1
    print(f"\n{args.events:,} Nexmark events; Flink 2.3 (parallelism {cores}) and kafka-sql (local[*]) on {cores} "
          "cores; ratios: kafka-sql / Flink")
    print("| query | Flink wall s | kafka-sql wall s | wall ratio | Flink events/s | kafka-sql events/s | rate ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for query, timings in results.items():
        flink, ours = timings["flink"], timings["kafka-sql"]
        if flink.error or ours.error:
            reason = "; ".join(f"{e}: {t.error}" for e, t in timings.items() if t.error)
            print(f"| {query} | {reason} |||||")
            continue
        f_rate, o_rate = flink.rate(args.events), ours.rate(args.events)
        print(f"| {query} | {flink.full:.1f} | {ours.full:.1f} | {ours.full / flink.full:.2f} | {f_rate:,.0f} | "
              f"{o_rate:,.0f} | {o_rate / f_rate if f_rate else 0:.2f} |")


if __name__ == "__main__":
    main()
