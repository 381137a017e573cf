"""runtime.python_launcher: Spark's Python processes import pyspark from site-packages, not from pyspark.zip."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyspark
import pytest

from connector.runtime.python_launcher import _spark_python_path, python_executable

REPORT = "import json, sys, pyspark; print(json.dumps([pyspark.__file__, sys.path]))"


def _run(python: str, pythonpath: str) -> tuple[str, list[str]]:
    out = subprocess.run(
        [python, "-c", REPORT], env={**os.environ, "PYTHONPATH": pythonpath}, capture_output=True, text=True, check=True
    ).stdout
    origin, path = json.loads(out)
    return origin, path


def test_spark_prefix_is_dropped_and_other_entries_kept(tmp_path: Path) -> None:
    prefix = _spark_python_path()
    assert prefix is not None, "pyspark is pip-installed here, so the launcher applies"
    origin, path = _run(python_executable(), os.pathsep.join([prefix, str(tmp_path)]))
    assert origin == pyspark.__file__
    assert str(tmp_path) in path
    assert not [entry for entry in path if entry in prefix.split(os.pathsep)]


def test_other_pythonpath_is_left_alone(tmp_path: Path) -> None:
    zip_first = os.pathsep.join([str(tmp_path / "pyspark.zip"), str(tmp_path)])
    _, path = _run(python_executable(), zip_first)
    assert path[1:3] == [str(tmp_path / "pyspark.zip"), str(tmp_path)]


def test_launcher_runs_this_interpreter() -> None:
    out = subprocess.run(
        [python_executable(), "-c", "import sys; print(sys.prefix)"], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == sys.prefix


def test_unwritable_cache_falls_back_to_this_interpreter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocked = tmp_path / "cache"
    blocked.write_text("a file where the cache directory would go")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    assert python_executable() == sys.executable
