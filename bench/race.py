"""Race: this project's Kafka source and pipeline against Spark's built-in Kafka source and sink, in one run.

    .venv/bin/python bench/race.py [--records 1000000] [--repeats 3] [--backlog 10000000] [--profile]

Starts a broker (`connector.dev.broker`), produces --records JSON records of about 200 bytes to a fresh
4-partition topic and measures, on the same topic, each --repeats times (medians are reported):

* the raw confluent-kafka consume loop: one consumer with the source's reader settings (READER_DEFAULTS),
  `consume(num_messages=CONSUME_RECORDS)` batches as the source asks for them, each record's error()
  checked, nothing else: the ceiling for a Python reader (in this process);
* `flink-kafka` source -> noop sink, Trigger.AvailableNow, a fresh checkpoint each run;
* Spark's built-in Kafka source (spark-sql-kafka-0-10, resolved with mvn: `connector.runtime.spark_jars`) -> noop;
* the ceiling of any Python Data Source: `bench/ceiling_source.py` yields Arrow batches of the `flink-kafka`
  source's schema built before the query, reading no Kafka -> noop. What it costs is Spark's alone (the Python
  worker's Arrow stream, the JVM's conversion to rows, the sink), so no Python source can beat its rate; the
  report shows it against the raw loop, which hands nothing to Spark;
* end to end, JSON parse + filter + Kafka sink to another topic: the kafka-sql engine running a small SQL
  file (flink-kafka source, Flink JSON format, flink-kafka-sink), and the built-in source and sink with
  from_json/to_json; plus, to tell source from sink, the flink-kafka source with the built-in sink;
* with --backlog N (default 10M; 0 skips it), the peak RSS of the Python workers while the source reads a
  backlog of N records in one micro-batch.

Spark runs in a child process (bench/race_spark.py) with local[2] and the built-in connector's jars on
`spark.jars`. Besides records/s over the wall time of each query (from building it, i.e. load() or
compiling the SQL file, to its end: start-up included) and over its micro-batches only (triggerExecution
of the batches with records), the table shows the start-up time and the CPU seconds all processes used
(JVM, Python workers, the source's driver-side Python, the broker; sampled from /proc), which the noise of
a shared machine disturbs much less. --profile samples the Python workers with py-spy (not a project
dependency: `.venv/bin/pip install py-spy`) during one more run of the source -> noop and of the kafka-sql
engine, and prints where they spend their time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from confluent_kafka import Consumer, Producer, TopicPartition

from connector.connectors.kafka.reader import CONSUME_RECORDS, READER_DEFAULTS
from connector.dev import broker

sys.path.insert(0, str(Path(__file__).parent))
from procs import Monitor
from race_spark import CASES, THRESHOLD
from workspace import broker_workspace

PARTITIONS = 4
WARMUP_RECORDS = 20_000
RECORD_BYTES = 200
GOALS = (
    ("source-noop", "builtin-noop", 1.0),
    ("source-noop", "raw", 0.8),
    ("e2e-ours", "e2e-builtin", 1.0),
)
MEMORY_GOAL_MB = 256


def record(i: int) -> tuple[bytes, bytes, bool]:
    """(key, JSON value of about RECORD_BYTES bytes, kept by the end-to-end filter) of record `i`."""
    amount = round(i * 0.37 % 1000, 2)
    value = (
        f'{{"id": {i}, "customer": "customer-{i % 10_000:05d}", "amount": {amount}, '
        f'"ts": {1_700_000_000_000 + i}, "pad": "{_PAD}"}}'
    )
    return b"%d" % (i % 1000), value.encode(), amount >= THRESHOLD


_PAD = "x" * (RECORD_BYTES - 86)  # the other fields take about 86 bytes


def produce(bootstrap: str, topic: str, count: int) -> dict[str, int | str]:
    """Write `count` records round-robin over the partitions; return the topic's description for the child."""
    producer = Producer(
        {"bootstrap.servers": bootstrap, "linger.ms": 50, "batch.size": 1_000_000, "compression.type": "none"}
    )
    selected = 0
    # by partition: produce_batch places every message of a call by its `partition` argument (a message's own
    # 'partition' is ignored, measured with confluent-kafka 2.16)
    pending: list[list[dict[str, bytes]]] = [[] for _ in range(PARTITIONS)]
    for i in range(count):
        key, value, kept = record(i)
        selected += kept
        pending[i % PARTITIONS].append({"key": key, "value": value})
        if len(pending[i % PARTITIONS]) == 2_500:
            _produce_batch(producer, topic, i % PARTITIONS, pending[i % PARTITIONS])
            pending[i % PARTITIONS] = []
    for partition, messages in enumerate(pending):
        _produce_batch(producer, topic, partition, messages)
    if producer.flush(300):
        raise RuntimeError(f"records were not all delivered to {topic}")
    return {"name": topic, "records": count, "selected": selected}


def _produce_batch(producer: Producer, topic: str, partition: int, messages: list[dict[str, bytes]]) -> None:
    while messages:
        producer.produce_batch(topic, messages, partition=partition)
        messages = [m for m in messages if "_error" in m]  # the local queue was full: wait and retry those
        for message in messages:
            del message["_error"]
        producer.poll(0.05 if messages else 0)


def raw_consume(bootstrap: str, topic: str, count: int, broker_pid: int) -> dict[str, float]:
    """One consumer over every partition: wall seconds, and CPU seconds of this process and the broker."""
    consumer = Consumer(
        {**READER_DEFAULTS, "bootstrap.servers": bootstrap, "group.id": "race-raw", "enable.auto.commit": False}
    )
    consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    with Monitor(os.getpid(), extra={"broker": broker_pid}) as usage:
        started = time.perf_counter()
        seen = 0
        while seen < count:
            for message in consumer.consume(num_messages=CONSUME_RECORDS, timeout=1.0):
                if message.error() is None:
                    seen += 1
        wall = time.perf_counter() - started
    consumer.close()
    return {"wall": wall, "cpu": usage.total_cpu, "records": seen}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--backlog", type=int, default=10_000_000, help="records of the memory run (0: skip)")
    parser.add_argument("--profile", action="store_true", help="py-spy the Python workers in one more run")
    args = parser.parse_args()
    if args.profile and not Path(sys.executable).with_name("py-spy").exists():
        sys.exit("--profile needs py-spy in the venv: .venv/bin/pip install py-spy")

    with broker_workspace("race-") as (work, info):
        topics = {
            name: _topic(info.bootstrap, name, count)
            for name, count in (("race", args.records), ("warmup", WARMUP_RECORDS))
        }
        print(f"records are ~{len(record(args.records // 2)[1])} bytes of JSON")
        raw = []
        for i in range(args.repeats):
            raw.append(raw_consume(info.bootstrap, str(topics["race"]["name"]), args.records, info.pid))
            wall = raw[-1]["wall"]
            print(f"  round {i + 1}: raw consume loop: {wall:.2f}s = {args.records / wall:,.0f} records/s")
        config = {
            "mode": "race",
            "bootstrap": info.bootstrap,
            "broker_pid": info.pid,
            "work": str(work),
            "results": str(work / "results.jsonl"),
            "partitions": PARTITIONS,
            "repeats": args.repeats,
            "topics": topics,
            "cases": list(CASES),
            "profile": ["source-noop", "e2e-ours"] if args.profile else [],
        }
        _spark_child(work, config)
        if args.backlog:
            config.update(mode="backlog", topics={"backlog": _topic(info.bootstrap, "backlog", args.backlog)})
            _spark_child(work, config)
        report(args.records, raw, [json.loads(line) for line in (work / "results.jsonl").read_text().splitlines()])
        for case in config["profile"]:
            print_profile(work / f"profile-{case}.txt", CASES[case])


def _topic(bootstrap: str, name: str, count: int) -> dict[str, int | str]:
    topic = f"race-{name}-{int(time.time())}"
    broker.create_topic(bootstrap, topic, partitions=PARTITIONS)
    began = time.perf_counter()
    described = produce(bootstrap, topic, count)
    print(f"produced {count:,} records to {topic} in {time.perf_counter() - began:.0f}s")
    return described


def _spark_child(work: Path, config: dict) -> None:
    """Run bench/race_spark.py with `config`; its Spark log goes to a file, shown if it fails."""
    (work / "config.json").write_text(json.dumps(config))
    log = work / f"spark-{config['mode']}.log"
    print(f"Spark ({config['mode']}) runs in a child process, log: {log}")
    with log.open("w") as spark_log:
        child = subprocess.run(
            [sys.executable, str(Path(__file__).with_name("race_spark.py")), str(work / "config.json")],
            stderr=spark_log,
            check=False,
        )
    if child.returncode != 0:
        print(log.read_text()[-5000:], file=sys.stderr)
        sys.exit(f"the Spark part failed (exit {child.returncode})")


@dataclass
class Row:
    """Medians of one case; rates in records/s, `start` = wall time outside micro-batches (query start-up)."""

    case: str
    title: str
    wall: float
    batches: float
    start: float
    cpu: float
    rss: int | None
    split: str


def report(count: int, raw: list[dict[str, float]], runs: list[dict]) -> None:
    raw_wall = count / statistics.median(r["wall"] for r in raw)
    rows = {
        "raw": Row(
            "raw",
            "raw confluent-kafka consume loop",
            raw_wall,
            raw_wall,
            0.0,
            statistics.median(r["cpu"] for r in raw),
            None,
            "",
        )
    }
    for case, title in CASES.items():
        mine = [r for r in runs if r["case"] == case]
        if mine:
            rows[case] = Row(
                case,
                title,
                count / statistics.median(r["wall"] for r in mine),
                count / statistics.median(r["batches"] for r in mine),
                statistics.median(r["wall"] - r["batches"] for r in mine),
                statistics.median(sum(r["cpu"].values()) for r in mine),
                max(r["peak_worker_rss"] for r in mine),
                _cpu_split(mine),
            )
    print(f"\n{count:,} records of ~200 B JSON, 4 partitions, local[2]; medians of {len(raw)} runs.")
    print("Rates in records/s over the query's wall time and over its micro-batches; ratios are this case's")
    print("rate over the reference's, and for CPU the reference's CPU seconds over this case's (> 1: cheaper).\n")
    print(
        f"{'':52} {'records/s':>10} {'records/s':>10} {'start':>6} {'CPU':>5} {'worker':>6}   "
        f"{'vs built-in':^17}   {'vs raw':^11}"
    )
    print(
        f"{'case':52} {'wall':>10} {'batches':>10} {'s':>6} {'s':>5} {'RSS MB':>6}   "
        f"{'wall':>5} {'batch':>5} {'CPU':>5}   {'wall':>5} {'batch':>5}"
    )
    for row in rows.values():
        builtin = (
            None if row.case == "raw" else rows.get("e2e-builtin" if row.case.startswith("e2e") else "builtin-noop")
        )
        versus_raw = None if row.case.startswith("e2e") else rows["raw"]
        print(
            f"{row.title[:52]:52} {row.wall:>10,.0f} {row.batches:>10,.0f} {row.start:>6.1f} {row.cpu:>5.1f} "
            f"{_num(row.rss / 2**20 if row.rss else None, '.0f'):>6}   "
            f"{_num(row.wall / builtin.wall if builtin else None, '.2f'):>5} "
            f"{_num(row.batches / builtin.batches if builtin else None, '.2f'):>5} "
            f"{_num(builtin.cpu / row.cpu if builtin else None, '.2f'):>5}   "
            f"{_num(row.wall / versus_raw.wall if versus_raw else None, '.2f'):>5} "
            f"{_num(row.batches / versus_raw.batches if versus_raw else None, '.2f'):>5}"
        )
    print("\nCPU seconds by process (median run):")
    for row in rows.values():
        if row.split:
            print(f"  {row.title[:52]:52} {row.split}")
    print("\nGoals (on wall-time rates; micro-batch rates in brackets):")
    for case, against, goal in GOALS:
        if case in rows and against in rows:
            ratio = rows[case].wall / rows[against].wall
            in_batches = rows[case].batches / rows[against].batches
            verdict = "met" if ratio >= goal else "NOT met"
            print(f"  {case} / {against}: {ratio:.2f} ({in_batches:.2f}), goal >= {goal}: {verdict}")
    if "ceiling-noop" in rows and "source-noop" in rows:
        ceiling, source = rows["ceiling-noop"], rows["source-noop"]
        print(
            f"  bound: Spark's own cost of the source's rows (ceiling-noop, no Kafka read at all) allows "
            f"{ceiling.wall / rows['raw'].wall:.2f} ({ceiling.batches / rows['raw'].batches:.2f}) of the raw loop; "
            f"the source reaches {source.wall / ceiling.wall:.2f} ({source.batches / ceiling.batches:.2f}) of it"
        )
    for run in (r for r in runs if r["case"] == "backlog"):
        mb = max(run["peak_worker_rss"], run["worker_hwm"]) / 2**20
        print(
            f"  peak RSS of a Python worker reading a backlog of {run['records']:,} records in one micro-batch: "
            f"{mb:.0f} MB, goal <= {MEMORY_GOAL_MB} MB: {'met' if mb <= MEMORY_GOAL_MB else 'NOT met'} "
            f"({run['records'] / run['wall']:,.0f} records/s)"
        )


def _cpu_split(runs: list[dict]) -> str:
    middle = sorted(runs, key=lambda r: r["wall"])[len(runs) // 2]
    return ", ".join(f"{name} {seconds:.1f}" for name, seconds in sorted(middle["cpu"].items(), key=lambda x: -x[1]))


def _num(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def print_profile(path: Path, title: str, top: int = 25) -> None:
    """Where the Python workers spent their samples: by function (self) and including callees."""
    own: Counter[str] = Counter()
    within: Counter[str] = Counter()
    total = 0
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = stack.split(";")
        total += int(count)
        own[frames[-1]] += int(count)
        for frame in set(frames):
            within[frame] += int(count)
    if not total:
        print("py-spy recorded nothing")
        return
    print(f"\nPython workers during {title} ({total} samples), by own time:")
    for frame, samples in own.most_common(top):
        print(f"  {samples / total:6.1%}  {frame}")
    print("including callees:")
    for frame, samples in within.most_common(top):
        if "process " not in frame:
            print(f"  {samples / total:6.1%}  {frame}")


if __name__ == "__main__":
    main()
