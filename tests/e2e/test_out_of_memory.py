"""A driver that runs out of memory is reported as such, naming what to raise or bound, never as a lost connection
or an internal error: `kafka-sql run` as a user starts it, with a driver of 512 MB and a group whose LISTAGG grows
past it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from support.commands import KAFKA_SQL, assert_readable

PIPELINE = """
CREATE TABLE src (k STRING, payload STRING) WITH (
  'connector' = 'kafka', 'topic' = '{topic}', 'properties.bootstrap.servers' = '{bootstrap}',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', 'format' = 'json'
);
CREATE TABLE dst (k STRING, payloads STRING, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'print');
INSERT INTO dst SELECT k, LISTAGG(payload) FROM src GROUP BY k;
"""


def test_a_driver_out_of_memory_names_the_setting_to_raise(
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Callable[[str, Sequence[tuple[object, ...]]], None],
    tmp_path: Path,
) -> None:
    topic = topic_factory()
    payload = "x" * 1000
    for start in range(0, 200_000, 20_000):  # each call waits for its records: the producer's queue holds these
        produce(topic, [(None, json.dumps({"k": "one", "payload": f"{i}{payload}"}), None, None, None)
                        for i in range(start, start + 20_000)])  # fmt: skip
    pipeline = tmp_path / "listagg.sql"
    pipeline.write_text(PIPELINE.format(topic=topic, bootstrap=kafka_bootstrap))
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_DRIVER_MEMORY": "512m"}
    done = subprocess.run(
        [str(KAFKA_SQL), "run", str(pipeline), "--checkpoint-dir", str(tmp_path / "checkpoints")],
        capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env,
    )  # fmt: skip
    assert done.returncode != 0
    assert "the Spark driver ran out of memory (java.lang.OutOfMemoryError)" in done.stderr, done.stderr[-3000:]
    assert "SPARK_DRIVER_MEMORY" in done.stderr and "'scan.max-records-per-batch'" in done.stderr
    assert "internal error" not in done.stderr and "ConnectionRefusedError" not in done.stderr
    assert_readable(done.stderr)
