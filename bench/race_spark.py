"""The Spark half of bench/race.py, run in its own process: `python bench/race_spark.py CONFIG.json`.

One SparkSession (local[2]) with Spark's built-in Kafka connector on `spark.jars` (which must be set when
the session starts) runs every Spark case, so both sources get the same JVM, the same Python workers and
the same settings. Each case is warmed up once on a small topic, then the cases run in rounds, in a
different order each round, so that drift of the shared machine's load spreads over all of them. Each run
is a fresh query with a fresh checkpoint under Trigger.AvailableNow, and checks its record counts.

Results are appended to the `results` file of the config, one JSON object per line.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from confluent_kafka.admin import AdminClient
from pyspark import cloudpickle

from connector.connectors.kafka.records import MAX_BATCH_RECORDS
from connector.connectors.kafka.source import KafkaSource
from connector.dev import broker
from connector.planning.plan import build
from connector.runtime import engine
from connector.runtime.python_launcher import python_executable
from connector.runtime.spark_jars import spark_kafka_jars
from connector.sql.frontend import compile_file

sys.path.insert(0, str(Path(__file__).parent))
import ceiling_source
from ceiling_source import ipc_batch
from procs import Monitor, Usage, role, snapshot

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming import StreamingQuery

# The filter keeps records with amount >= THRESHOLD; race.py counts how many that is when it produces them.
THRESHOLD = 500
RECORD_DDL = "id BIGINT, customer STRING, amount DOUBLE, ts BIGINT"
PIPELINE = """\
-- bench/race.py end to end: JSON parse, filter, Kafka sink
CREATE TABLE orders (
  id BIGINT,
  customer STRING,
  amount DOUBLE,
  ts BIGINT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("source") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE big_orders (
  id BIGINT,
  customer STRING,
  amount DOUBLE,
  ts BIGINT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("sink") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO big_orders SELECT id, customer, amount, ts FROM orders WHERE amount >= {{ var("threshold") }};
"""

CASES = {
    "source-noop": "flink-kafka source -> noop",
    "builtin-noop": "built-in kafka source -> noop",
    "ceiling-noop": "ceiling: Python Data Source, no Kafka -> noop",
    # end to end: JSON parse, filter, JSON to another topic
    "e2e-ours": "e2e: kafka-sql engine (flink-kafka source + sink)",
    "e2e-builtin": "e2e: built-in source + sink, from_json/to_json",
    "e2e-mixed": "e2e: flink-kafka source + built-in sink",
}


@dataclass
class Run:
    """One measured run of a case."""

    case: str
    records: int
    wall: float  # seconds from start() to the end of the query
    batches: float  # seconds of micro-batch execution (triggerExecution of batches with rows)
    cpu: dict[str, float]
    peak_worker_rss: int
    worker_hwm: int
    written: int | None = None  # records in the sink topic (end to end)


@dataclass
class Topic:
    name: str
    records: int
    selected: int  # records the end-to-end filter keeps


class Race:
    def __init__(self, config: dict[str, Any]) -> None:
        self.bootstrap: str = config["bootstrap"]
        self.broker_pid: int = config["broker_pid"]
        self.work = Path(config["work"])
        self.results = Path(config["results"])
        self.partitions: int = config["partitions"]
        self.spark = _session()
        self.spark.dataSource.register(KafkaSource)
        cloudpickle.register_pickle_by_value(ceiling_source)  # bench/ is not on the Python workers' path
        self.spark.dataSource.register(ceiling_source.CeilingSource)
        self._sinks = 0

    # ---- cases

    def source_noop(self, topic: Topic) -> StreamingQuery:
        frame = self.spark.readStream.format("flink-kafka").options(**self._source_options(topic)).load()
        return self._noop(frame)

    def builtin_noop(self, topic: Topic) -> StreamingQuery:
        return self._noop(self._builtin_source(topic))

    def ceiling_noop(self, topic: Topic) -> StreamingQuery:
        """Spark's cost of the source's rows alone (`ceiling_source`): what the raw loop leaves out."""
        from race import record  # here: race imports this module

        keys, values = zip(*(record(i)[:2] for i in range(min(MAX_BATCH_RECORDS, topic.records))), strict=True)
        options = {
            "batch": ipc_batch(list(keys), list(values), topic.name).hex(),
            "records": str(topic.records),
            "partitions": str(self.partitions),
        }
        return self._noop(self.spark.readStream.format(ceiling_source.NAME).options(**options).load())

    def e2e_ours(self, topic: Topic, sink: str) -> StreamingQuery:
        sql = self.work / "race.sql"
        sql.write_text(PIPELINE, encoding="utf-8")
        compiled = compile_file(
            sql, {"source": topic.name, "sink": sink, "brokers": self.bootstrap, "threshold": str(THRESHOLD)}
        )
        plan = build(compiled.require(), "race")
        (running,) = engine.start_all(self.spark, plan, Path(tempfile.mkdtemp(dir=self.work)))
        return running.query

    def e2e_builtin(self, topic: Topic, sink: str) -> StreamingQuery:
        return self._builtin_sink(self._filtered(self._builtin_source(topic)), sink)

    def e2e_mixed(self, topic: Topic, sink: str) -> StreamingQuery:
        raw = self.spark.readStream.format("flink-kafka").options(**self._source_options(topic)).load()
        return self._builtin_sink(self._filtered(raw), sink)

    # ---- measuring

    def measure(self, case: str, topic: Topic, record: bool = True) -> Run:
        """Run `case` over the whole of `topic`; the time runs from building the query to its end."""
        starter = getattr(self, case.replace("-", "_"))
        sink = self._new_sink_topic() if case.startswith("e2e") else None
        with Monitor(os.getpid(), extra={"broker": self.broker_pid}) as usage:
            began = time.perf_counter()
            query = starter(topic, sink) if sink else starter(topic)
            query.awaitTermination()
            wall = time.perf_counter() - began
        run = _run(case, query, wall, usage)
        if run.records != topic.records:
            raise RuntimeError(f"{case} read {run.records} records of {topic.name}, expected {topic.records}")
        if sink is not None:
            run.written = _count(self.bootstrap, sink)
            if run.written < topic.selected:
                raise RuntimeError(f"{case} wrote {run.written} records to {sink}, expected {topic.selected}")
        if record:
            self.save(run)
        return run

    def save(self, run: Run) -> None:
        with self.results.open("a") as out:
            out.write(json.dumps(asdict(run)) + "\n")

    def profile(self, case: str, topic: Topic, output: Path) -> None:
        """One more run of `case` with py-spy sampling every Python worker (the executor side)."""
        procs = snapshot()
        daemons = [
            p
            for p in procs.values()
            if role(p, procs) == "python-daemon"
            and p.command.endswith("pyspark.worker")
            and _under(p.pid, os.getpid(), procs)
        ]
        spy = subprocess.Popen(
            [
                str(Path(sys.executable).with_name("py-spy")),
                "record",
                "--pid",
                str(daemons[0].pid),
                "--subprocesses",
                "--rate",
                "250",
                "--format",
                "raw",
                "--output",
                str(output),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(1.0)  # py-spy attaches
        self.measure(case, topic, record=False)
        spy.send_signal(signal.SIGINT)
        spy.wait(60)

    # ---- helpers

    def _source_options(self, topic: Topic) -> dict[str, str]:
        """As a Flink SQL table's WITH clause would set them."""
        return {
            "connector": "kafka",
            "topic": topic.name,
            "properties.bootstrap.servers": self.bootstrap,
            "scan.startup.mode": "earliest-offset",
            "format": "json",
        }

    def _builtin_source(self, topic: Topic) -> DataFrame:
        return (
            self.spark.readStream.format("kafka")
            .option("kafka.bootstrap.servers", self.bootstrap)
            .option("subscribe", topic.name)
            .option("startingOffsets", "earliest")
            .load()
        )

    def _filtered(self, raw: DataFrame) -> DataFrame:
        from pyspark.sql import functions as F

        parsed = raw.select(F.from_json(F.col("value").cast("string"), RECORD_DDL).alias("r")).select("r.*")
        return parsed.where(F.col("amount") >= THRESHOLD).select(
            F.to_json(F.struct("id", "customer", "amount", "ts")).alias("value")
        )

    def _noop(self, frame: DataFrame) -> StreamingQuery:
        return (
            frame.writeStream.format("noop")
            .option("checkpointLocation", tempfile.mkdtemp(dir=self.work))
            .trigger(availableNow=True)
            .start()
        )

    def _builtin_sink(self, frame: DataFrame, sink: str) -> StreamingQuery:
        return (
            frame.writeStream.format("kafka")
            .option("kafka.bootstrap.servers", self.bootstrap)
            .option("topic", sink)
            .option("checkpointLocation", tempfile.mkdtemp(dir=self.work))
            .trigger(availableNow=True)
            .start()
        )

    def _new_sink_topic(self) -> str:
        self._sinks += 1
        name = f"race-sink-{os.getpid()}-{self._sinks}"
        broker.create_topic(self.bootstrap, name, partitions=self.partitions)
        return name


def _session() -> SparkSession:
    os.environ["PYSPARK_PYTHON"] = python_executable()  # as connector.runtime.runner runs a local pipeline
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    jars = ",".join(str(jar) for jar in spark_kafka_jars(on_progress=print))
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("kafka-sql-race")
        .config("spark.jars", jars)
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


def _run(case: str, query: StreamingQuery, wall: float, usage: Usage) -> Run:
    progress = [p for p in query.recentProgress if p["numInputRows"]]
    return Run(
        case=case,
        records=sum(p["numInputRows"] for p in progress),
        wall=wall,
        batches=sum(p["durationMs"]["triggerExecution"] for p in progress) / 1000.0,
        cpu=usage.cpu,
        peak_worker_rss=usage.peak_worker_rss,
        worker_hwm=usage.worker_hwm,
    )


def _count(bootstrap: str, topic: str) -> int:
    """Records in a topic: the sum of its partitions' high watermarks (nothing is ever deleted here)."""
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import OffsetSpec

    admin = AdminClient({"bootstrap.servers": bootstrap})
    partitions = admin.list_topics(topic, timeout=30).topics[topic].partitions
    futures = admin.list_offsets({TopicPartition(topic, p): OffsetSpec.latest() for p in partitions})
    return sum(future.result().offset for future in futures.values())


def _under(pid: int, root: int, procs: dict[int, Any]) -> bool:
    while pid in procs and pid != root:
        pid = procs[pid].ppid
    return pid == root


def main() -> None:
    config = json.loads(Path(sys.argv[1]).read_text())
    topics = {name: Topic(**topic) for name, topic in config["topics"].items()}
    race = Race(config)
    if config["mode"] == "backlog":  # alone in a fresh session: the workers hold nothing else
        run = race.measure("source-noop", topics["backlog"], record=False)
        run.case = "backlog"
        race.save(run)
        print(f"  backlog of {run.records:,} records: peak worker RSS {run.peak_worker_rss >> 20} MB", flush=True)
    else:
        cases: list[str] = config["cases"]
        for case in cases:
            race.measure(case, topics["warmup"], record=False)
            print(f"  warmed up {case}", flush=True)
        for round_ in range(config["repeats"]):
            shift = round_ % len(cases)
            for case in cases[shift:] + cases[:shift]:
                run = race.measure(case, topics["race"])
                print(
                    f"  round {round_ + 1}: {CASES[case]}: {run.wall:.2f}s = {run.records / run.wall:,.0f} "
                    f"records/s (micro-batches {run.records / run.batches:,.0f}/s, CPU {sum(run.cpu.values()):.1f}s)",
                    flush=True,
                )
        for case in config["profile"]:
            race.profile(case, topics["race"], Path(config["work"]) / f"profile-{case}.txt")
    race.spark.stop()


if __name__ == "__main__":
    main()
