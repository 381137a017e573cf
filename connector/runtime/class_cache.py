"""A class data sharing archive for the driver JVM: Spark's classes mapped from one file instead of read, parsed
and verified from its jars at every start (measured on 2 cores: a session ready in 3.5 s instead of 5.6-6.0 s).

The first run for a Java and Spark installation has its JVM write the archive of the classes it loaded as it
exits (`-XX:ArchiveClassesAtExit`, JDK 13 and later), into a pending file of its own; the writing goes on for
some seconds after the run returns. A later run, once that JVM is gone, checks the file with `java -Xshare:on`
(which refuses a truncated archive or one for other jars) and from then on starts with it. A JVM that cannot
use an archive ignores it without a word (`-Xshare:auto`, CDS logging off), so only start-up time depends on it.
Each Spark installation (each virtual environment) has an archive of its own, about 180 MB; those of
installations that are gone are deleted. `KAFKA_SQL_CLASS_CACHE=0` turns it off. The options go into
`spark.driver.defaultJavaOptions`, so a user's `spark.driver.extraJavaOptions` still apply.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

QUIET = "-Xshare:auto -Xlog:cds*=off"
_WRITE = "-XX:ArchiveClassesAtExit="
SETTLED_SECONDS = 600.0  # a pending archive without a record of its JVM is finished (or abandoned) after this


def java_options() -> str | None:
    """The driver JVM's options for the archive: use it, or write it; None where it does not apply."""
    if os.environ.get("KAFKA_SQL_CLASS_CACHE") == "0":
        return None
    key = _installation_key()
    if key is None:
        return None
    directory = _directory()
    archive = directory / f"{key}.jsa"
    _forget_removed_installations(directory, key)
    if not archive.exists():
        _promote_pending(directory, key, archive)
    if archive.exists():
        return f"{_option('-XX:SharedArchiveFile=', archive)} {QUIET}"
    if any(directory.glob(f"{key}.*.pending.jsa")):
        return None  # another run's JVM is writing it
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return f"{_option(_WRITE, _pending(directory, key, os.getpid()))} {QUIET}"


def record_writer(spark: Any, options: str) -> None:
    """After the session started with `options` (from `java_options`): if its JVM writes a pending archive, note
    which JVM it is (its pid, Java and class path), so a later run knows when it is done and how to check it."""
    if _WRITE not in options:
        return
    pending = Path(next(o for o in shlex.split(options) if o.startswith(_WRITE)).removeprefix(_WRITE))
    jvm = spark.sparkContext._jvm
    arguments = " ".join(jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments().toArray())
    if f"{_WRITE}{pending}" not in arguments:  # a JVM started before this session's options
        return
    system = jvm.java.lang.System
    writer = {
        "pid": int(jvm.java.lang.ProcessHandle.current().pid()),
        "java": str(Path(system.getProperty("java.home")) / "bin" / "java"),
        "classpath": system.getProperty("java.class.path"),
    }
    pending.with_suffix(".json").write_text(json.dumps(writer), encoding="utf-8")


def _promote_pending(directory: Path, key: str, archive: Path) -> None:
    """Check each finished pending archive; keep the first that a JVM maps (`-Xshare:on`), delete the others."""
    for pending in sorted(directory.glob(f"{key}.*.pending.jsa")):
        record = pending.with_suffix(".json")
        try:
            writer = json.loads(record.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            writer = None
        if writer is not None and _alive(int(writer["pid"])):
            continue
        if writer is None and time.time() - pending.stat().st_mtime < SETTLED_SECONDS:
            continue
        usable = writer is not None and not archive.exists() and _maps(pending, writer)
        if usable:
            pending.replace(archive)  # atomic: runs starting together see it whole or not at all
            record.replace(archive.with_suffix(".json"))  # what it belongs to, for `_forget_removed_installations`
        else:
            pending.unlink(missing_ok=True)
            record.unlink(missing_ok=True)


def _forget_removed_installations(directory: Path, key: str) -> None:
    """Delete the archives of Spark installations that are gone (a removed virtual environment or checkout): each
    installation has its own, of about 180 MB. An archive names its Java and class path in its record; one
    without a record (written before archives had one) is deleted too, and its installation writes it again."""
    for archive in directory.glob("spark-*.jsa"):
        if archive.name.split(".", 1)[0] == key:
            continue
        record = archive.with_suffix(".json")
        try:
            writer = json.loads(record.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            writer = None
        if writer is None:
            pending = archive.name.endswith(".pending.jsa")
            if pending and _age(archive) < SETTLED_SECONDS:  # its JVM may not have recorded itself yet
                continue
        elif _alive_writer(archive, writer) or _installed(writer):
            continue
        archive.unlink(missing_ok=True)
        record.unlink(missing_ok=True)


def _alive_writer(archive: Path, writer: dict[str, Any]) -> bool:
    return archive.name.endswith(".pending.jsa") and _alive(int(writer["pid"]))


def _installed(writer: dict[str, Any]) -> bool:
    """Whether the Java and the jars of a record's class path still exist. Its directories are not judged: Spark
    puts its conf directory on the class path whether or not there is one (pip's pyspark has none)."""
    entries = [entry for entry in str(writer["classpath"]).split(os.pathsep) if entry.endswith((".jar", "*"))]
    return Path(writer["java"]).exists() and all(Path(entry.removesuffix("*")).exists() for entry in entries)


def _age(path: Path) -> float:
    try:
        return time.time() - path.stat().st_mtime
    except OSError:
        return 0.0


def _maps(pending: Path, writer: dict[str, Any]) -> bool:
    command = [writer["java"], f"-XX:SharedArchiveFile={pending}", "-Xshare:on", "-cp", writer["classpath"], "-version"]
    try:
        return subprocess.run(command, capture_output=True, timeout=60, check=False).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _option(flag: str, path: Path) -> str:
    """`flag` and `path` as one JVM option in Spark's option string, which splits at spaces outside quotes."""
    option = f"{flag}{path}"
    return shlex.quote(option) if any(c.isspace() or c in "'\"\\" for c in option) else option


def _pending(directory: Path, key: str, pid: int) -> Path:
    return directory / f"{key}.{pid}.pending.jsa"


def _directory() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kafka-sql" / "jvm"


def _installation_key() -> str | None:
    """What the archive belongs to: the Java that runs Spark (its `release` file) and Spark's jars."""
    if os.name != "posix":
        return None
    try:
        from pyspark.find_spark_home import _find_spark_home

        spark_home = Path(_find_spark_home())
    except Exception:  # pyspark cannot say where Spark is: Spark will report that itself
        return None
    java_home = os.environ.get("JAVA_HOME")
    java = Path(java_home) / "bin" / "java" if java_home else shutil.which("java")
    if java is None:
        return None
    java = Path(java).resolve()
    release = java.parent.parent / "release"
    try:
        version = release.read_text(encoding="utf-8")
        jars = sorted(f"{p.name}:{p.stat().st_size}" for p in (spark_home / "jars").glob("*.jar"))
    except OSError:
        return None
    if _major(version) < 13:
        return None
    digest = hashlib.sha256("\n".join([str(java), version, str(spark_home), *jars]).encode()).hexdigest()
    return f"spark-{digest[:16]}"


def _major(release: str) -> int:
    for line in release.splitlines():
        if line.startswith("JAVA_VERSION="):
            version = line.split("=", 1)[1].strip('"')
            head = version.split(".")[0]
            return int(version.split(".")[1]) if head == "1" else int(head) if head.isdigit() else 0
    return 0
