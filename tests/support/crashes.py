"""Crashing `kafka-sql run` on purpose: every process of a run (driver, JVM, Python workers) killed with SIGKILL at a
chosen moment of a micro-batch, as a machine crash would, then restarted from the same checkpoint; a Feed producing
records meanwhile; CRASH_PIPELINE, the crash tests' pipeline (tests/e2e/test_crash_recovery.py)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from confluent_kafka import Producer

from support.commands import KAFKA_SQL

# The crash tests' source topic has PARTITIONS partitions; the Feed writes record `id` to partition id % PARTITIONS.
PARTITIONS = 3

CRASH_PIPELINE = """
SET 'pipeline.name' = 'crash';
SET 'execution.checkpointing.interval' = '1 s';

CREATE TABLE events (id BIGINT, payload STRING) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("topic") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'properties.group.id' = '{{ var("group") }}',
  'scan.startup.mode' = 'earliest-offset',
{% if var("bounded", "false") == "true" %}
  'scan.bounded.mode' = 'latest-offset',
{% endif %}
  'format' = 'json'
);

CREATE TABLE files (id BIGINT, payload STRING) WITH (
  'connector' = 'filesystem',
  'path' = '{{ var("path") }}',
  'format' = 'parquet'
);

CREATE TABLE copies (id BIGINT, payload STRING) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("out") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'sink.delivery-guarantee' = 'exactly-once',
  'sink.transactional-id-prefix' = '{{ var("out") }}',
  'format' = 'json'
);

EXECUTE STATEMENT SET
BEGIN
  INSERT INTO files SELECT id, payload FROM events;
  INSERT INTO copies SELECT id, payload FROM events;
END;
"""


def start_run(sql: Path, checkpoint: Path, log: Path, variables: dict[str, str]) -> subprocess.Popen[bytes]:
    """`kafka-sql run` in its own process group (so a signal reaches the JVM and the Python workers too). Its
    temporary folders (Spark's, the JVM's, Python's) go next to `checkpoint`: a killed run cannot remove them."""
    args = [str(KAFKA_SQL), "run", str(sql), "--checkpoint-dir", str(checkpoint)]
    for key, value in variables.items():
        args += ["--var", f"{key}={value}"]
    scratch = checkpoint.parent / "scratch"
    scratch.mkdir(exist_ok=True)
    java_options = f"{os.environ.get('JAVA_TOOL_OPTIONS', '')} -Djava.io.tmpdir={scratch}".strip()
    with log.open("ab") as out:
        return subprocess.Popen(
            args,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=sql.parent,
            env={
                **os.environ,
                "PYSPARK_PYTHON": sys.executable,
                "TMPDIR": str(scratch),
                "SPARK_LOCAL_DIRS": str(scratch),
                "JAVA_TOOL_OPTIONS": java_options,
            },
            start_new_session=True,
        )


def process_tree(root: int) -> list[int]:
    """`root` and its descendants. Spark's Python daemons run in process groups of their own."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(stat.parent.name))
    tree, todo = [], [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo.extend(children.get(pid, []))
    return tree


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def kill_all(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL every process of the run at once (driver, JVM, Python workers), as a machine crash would."""
    tree = process_tree(process.pid)
    for pid in tree:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    process.wait(60)
    deadline = time.monotonic() + 60
    while any(alive(pid) for pid in tree):
        assert time.monotonic() < deadline, "processes of the killed run are still alive"
        time.sleep(0.1)


def batch_files(checkpoint: Path) -> set[Path]:
    """The offset-log entries of every query: one is written when a micro-batch is planned."""
    return set(checkpoint.glob("*/*/offsets/[0-9]*"))


class Feed:
    """Produces records {"id": n, "payload": "p<n>"} with consecutive ids, spread over the partitions."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.topic = topic
        self.producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 0})
        self.next_id = 0

    def send(self, count: int, pause: float = 0.0, stop: threading.Event | None = None) -> None:
        """`count` records, `pause` seconds apart; with `stop`, keep going until it is set."""
        sent = 0
        while sent < count or (stop is not None and not stop.is_set()):
            i, self.next_id = self.next_id, self.next_id + 1
            self.producer.produce(self.topic, json.dumps({"id": i, "payload": f"p{i}"}), partition=i % PARTITIONS)
            self.producer.poll(0)
            sent += 1
            time.sleep(pause)
        assert self.producer.flush(30) == 0

    def in_background(self, count: int, pause: float, stop: threading.Event | None = None) -> threading.Thread:
        thread = threading.Thread(target=self.send, args=(count, pause, stop))
        thread.start()
        return thread


def commit_files(checkpoint: Path) -> set[Path]:
    """The commit-log entries of every query: one is written when a micro-batch is complete in its sink."""
    return set(checkpoint.glob("*/*/commits/[0-9]*"))


def wait_for_a_batch(
    process: subprocess.Popen[bytes],
    checkpoint: Path,
    before: set[Path],
    log: Callable[[Path], set[Path]] = batch_files,
) -> float:
    """Seconds until this run planned a micro-batch (a new offset-log entry), or completed one with `commit_files`."""
    started = time.monotonic()
    while log(checkpoint) <= before and process.poll() is None and time.monotonic() - started < 120:
        time.sleep(0.05)
    return time.monotonic() - started


# When a sink's crash test kills each run: after a batch was planned (its rows not yet in the sink, or in it but
# not committed to Spark's log) or committed.
SINK_CRASH_MOMENTS = [("planned", 0.3), ("committed", 0.0), ("planned", 1.2)]


def kill_at_each_moment_then_catch_up(sql: Path, checkpoint: Path, variables: dict[str, str], feed: Feed) -> int:
    """Kill `kafka-sql run` of `sql` (every process of it) with SIGKILL at each of SINK_CRASH_MOMENTS while `feed`
    produces 30 records, restarting from `checkpoint` each time; then a bounded run (var `bounded`) catches up.
    Returns how many records were produced (ids 0 to n-1)."""
    log = checkpoint.parent / "runs.log"
    for event, delay in SINK_CRASH_MOMENTS:
        before = batch_files(checkpoint) if event == "planned" else commit_files(checkpoint)
        process = start_run(sql, checkpoint, log, variables)
        producer = feed.in_background(30, 0.1)
        wait_for_a_batch(process, checkpoint, before, batch_files if event == "planned" else commit_files)
        time.sleep(delay)
        assert process.poll() is None, f"the run ended by itself; see {log}"
        kill_all(process)
        producer.join()
    final = start_run(sql, checkpoint, log, {**variables, "bounded": "true"})
    assert final.wait(300) == 0, log.read_text()[-3000:]
    return feed.next_id
