"""connector.runtime.class_cache: the first run's driver JVM writes a class data sharing archive as it exits, later
runs start with it, and an archive a JVM cannot map is never used."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from connector.runtime import class_cache

_SESSION = r"""
from connector.runtime.session import spark_session

spark = spark_session("local[1]", "class-cache")
assert spark.range(5).count() == 5
jvm = spark.sparkContext._jvm
print("pid", jvm.java.lang.ProcessHandle.current().pid())
print("args", " ".join(jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments().toArray()))
"""


def _session(cache: Path, conf_dir: Path | None = None) -> dict[str, str]:
    environment = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    environment.pop("KAFKA_SQL_CLASS_CACHE", None)
    if conf_dir is not None:
        environment["SPARK_CONF_DIR"] = str(conf_dir)
    done = subprocess.run([sys.executable, "-c", _SESSION], capture_output=True, text=True, timeout=300,
                          env=environment, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(line.split(" ", 1) for line in done.stdout.splitlines() if line.startswith(("pid ", "args ")))


def _gone(pid: int, timeout: float = 180.0) -> None:
    deadline = time.monotonic() + timeout
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not Path(f"/proc/{pid}").exists(), "the first run's JVM did not finish writing its archive"


@pytest.mark.slow
def test_the_first_run_writes_the_archive_and_later_runs_start_with_it(tmp_path: Path) -> None:
    cache = tmp_path / "a cache"  # a space in the path: the JVM options quote it
    first = _session(cache)
    jvm_dir = cache / "kafka-sql" / "jvm"
    assert "-XX:ArchiveClassesAtExit=" in first["args"]
    assert "-Xlog:cds*=off" in first["args"]  # Java's notes on classes it cannot archive stay out of the output
    _gone(int(first["pid"]))

    # An administrator's driver options in spark-defaults.conf are kept beside the archive's, and come last.
    conf_dir = tmp_path / "conf"
    conf_dir.mkdir()
    (conf_dir / "spark-defaults.conf").write_text("spark.driver.defaultJavaOptions  -Dsite.option=kept\n")
    second = _session(cache, conf_dir)
    kept = second["args"].find("-Dsite.option=kept")
    assert kept > second["args"].index("-XX:SharedArchiveFile=") > second["args"].index("-XX:Tier4BackEdgeThreshold=")
    archives = list(jvm_dir.glob("*.jsa"))
    assert [a.name for a in archives if "pending" not in a.name] == [a.name for a in archives]
    assert len(archives) == 1
    assert json.loads(archives[0].with_suffix(".json").read_text())["pid"] == int(first["pid"])  # what it belongs to
    assert f"-XX:SharedArchiveFile={archives[0]}" in second["args"]
    assert "ArchiveClassesAtExit" not in second["args"]


def test_an_archive_a_jvm_cannot_map_is_deleted_and_written_again(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("KAFKA_SQL_CLASS_CACHE", raising=False)
    options = class_cache.java_options()
    assert options is not None and "-XX:ArchiveClassesAtExit=" in options
    pending = Path(options.split("-XX:ArchiveClassesAtExit=")[1].split()[0])
    pending.write_bytes(b"not an archive" * 1000)  # as a JVM killed while writing leaves it
    java = Path(os.environ["JAVA_HOME"]) / "bin" / "java" if "JAVA_HOME" in os.environ else "java"
    writer = {"pid": 2**22 + 1, "java": str(java), "classpath": "."}  # a pid no process has
    pending.with_suffix(".json").write_text(json.dumps(writer))

    again = class_cache.java_options()

    assert not pending.exists()
    assert again is not None and "-XX:ArchiveClassesAtExit=" in again  # not used: written anew by this run
    assert not list(pending.parent.glob("*.jsa"))


def test_off_when_asked(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("KAFKA_SQL_CLASS_CACHE", "0")
    assert class_cache.java_options() is None


def test_archives_of_removed_installations_are_deleted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("KAFKA_SQL_CLASS_CACHE", raising=False)
    jvm_dir = tmp_path / "kafka-sql" / "jvm"
    jvm_dir.mkdir(parents=True)
    java = str(Path(os.environ["JAVA_HOME"]) / "bin" / "java") if "JAVA_HOME" in os.environ else "/usr/bin/java"
    installed = tmp_path / "venv" / "jars"
    installed.mkdir(parents=True)
    (installed / "spark-core.jar").write_bytes(b"jar")
    removed = tmp_path / "removed-venv" / "jars"

    def archive(name: str, jars: Path | None, pid: int = 2**22 + 1) -> Path:
        path = jvm_dir / name
        path.write_bytes(b"archive")
        if jars is not None:  # as Spark's launcher lists it: a conf directory pip's pyspark does not have, the jars
            classpath = f"{jars.parent / 'conf'}:{jars / 'spark-core.jar'}:{jars}/*"
            record = {"pid": pid, "java": java, "classpath": classpath}
            path.with_suffix(".json").write_text(json.dumps(record))
        return path

    kept = archive("spark-00000000000000a1.jsa", installed)
    gone = archive("spark-00000000000000a2.jsa", removed)
    unrecorded = archive("spark-00000000000000a3.jsa", None)
    writing = archive(f"spark-00000000000000a4.{os.getpid()}.pending.jsa", removed, pid=os.getpid())
    written = archive("spark-00000000000000a5.7.pending.jsa", removed)

    assert class_cache.java_options() is not None

    assert kept.exists() and kept.with_suffix(".json").exists()
    assert writing.exists()  # its JVM is still writing it
    for path in (gone, unrecorded, written):
        assert not path.exists() and not path.with_suffix(".json").exists(), path
