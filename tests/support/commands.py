"""kafka-sql's commands as the tests run them: `run` in this process (on the test SparkSession), `run_subprocess` as a
user starts it (with its own Spark), `explain_json` in this process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from connector.entrypoints import cli

# The installed `kafka-sql` script of this venv.
KAFKA_SQL = Path(sys.executable).parent / "kafka-sql"


@dataclass
class Result:
    code: int
    out: str
    err: str


def run_args(sql: Path, checkpoint: Path, variables: dict[str, str]) -> list[str]:
    args = ["run", str(sql), "--checkpoint-dir", str(checkpoint)]
    for key, value in variables.items():
        args += ["--var", f"{key}={value}"]
    return args


def run(capsys: pytest.CaptureFixture[str], sql: Path, checkpoint: Path, **variables: str) -> Result:
    """`kafka-sql run` in this process, on the test SparkSession (the `spark` fixture), whose shuffle
    partitions the run changes and this restores."""
    from pyspark.sql import SparkSession

    session = SparkSession.getActiveSession()
    assert session is not None, "request the spark fixture: runs in this process use the test session"
    partitions = session.conf.get("spark.sql.shuffle.partitions")
    capsys.readouterr()
    try:
        code = cli.main(run_args(sql, checkpoint, variables))
    finally:
        session.conf.set("spark.sql.shuffle.partitions", partitions or "2")
    captured = capsys.readouterr()
    return Result(code, captured.out, captured.err)


def run_subprocess(sql: Path, checkpoint: Path, **variables: str) -> Result:
    """`kafka-sql run` as a user starts it, with its own Spark; `err` holds Spark's log too."""
    done = subprocess.run(
        [str(KAFKA_SQL), *run_args(sql, checkpoint, variables)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=sql.parent,
        env={**os.environ, "PYSPARK_PYTHON": sys.executable},
    )
    return Result(done.returncode, done.stdout, done.stderr)


def assert_readable(text: str) -> None:
    """What a user reads on a failure: no Python traceback, no JVM stack frames, none of Spark's start-up lines (its
    default log profile, Hadoop's native library)."""
    assert "Traceback" not in text, text
    assert "\tat " not in text, text
    assert "log4j" not in text and "NativeCodeLoader" not in text, text


def explain_json(capsys: pytest.CaptureFixture[str], path: Path | str, *args: str) -> dict[str, Any]:
    """`kafka-sql explain PATH --format json` in this process, as a document."""
    assert cli.main(["explain", str(path), "--format", "json", *args]) == 0
    document: dict[str, Any] = json.loads(capsys.readouterr().out)
    return document
