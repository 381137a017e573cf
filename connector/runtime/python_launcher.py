"""The Python executable for Spark's Python processes (`PYSPARK_PYTHON`): this interpreter, through a launcher
that makes them import pyspark from site-packages, with bytecode caches, instead of from pyspark.zip.

Spark prepends `$SPARK_HOME/python/lib/pyspark.zip`, py4j's zip and the spark-core jar to the PYTHONPATH of
every Python process it starts (daemons, planning workers, and the streaming source's runner, which starts
anew with each query). Python caches no bytecode for modules imported from a zip, so each of these
processes compiles pyspark again (~0.35 CPU s), and re-reads the directories of the zip and of the jar
(about 7,500 entries, in pure Python) when the worker invalidates the import caches (~0.1 s).

When SPARK_HOME is the pyspark package this interpreter imports (a pip install, the usual case), that zip
holds the package's own files, py4j's zip is the installed py4j's version and the jar holds no Python: the
launcher removes exactly that prefix from PYTHONPATH and changes nothing else. With any other Spark
installation the interpreter itself is used.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import subprocess
import sys
from pathlib import Path


def python_executable() -> str:
    """The launcher (written once into the user's cache directory), or `sys.executable` where it does not apply."""
    prefix = _spark_python_path()
    if prefix is None:
        return sys.executable
    script = (
        "#!/bin/sh\n"
        "# kafka-sql (connector.runtime.python_launcher): import pyspark from site-packages, not from pyspark.zip\n"
        f"prefix={shlex.quote(prefix)}\n"
        'case "$PYTHONPATH" in\n'
        '  "$prefix") PYTHONPATH= ;;\n'
        '  "$prefix":*) PYTHONPATH=${PYTHONPATH#"$prefix":} ;;\n'
        "esac\n"
        f'exec {shlex.quote(sys.executable)} "$@"\n'
    )
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kafka-sql"
    launcher = cache / f"python-{hashlib.sha256(script.encode()).hexdigest()[:16]}"
    if not launcher.exists():
        try:
            cache.mkdir(parents=True, exist_ok=True)
            partial = launcher.with_name(f"{launcher.name}.{os.getpid()}")
            partial.write_text(script, encoding="utf-8")
            partial.chmod(0o755)
            partial.replace(launcher)  # atomic: sessions starting together write the same file
        except OSError:  # a read-only home: start-up is slower, nothing else changes
            return sys.executable
    return str(launcher)


def cannot_import_connector(python: str) -> str | None:
    """Why Spark's Python processes, started as `python` (PYSPARK_PYTHON), could not import kafka-sql's package,
    which its sources and sinks run; None when they can (this interpreter, the launcher, or another with kafka-sql
    installed). Asked of `python` itself: a process that only looks for the package."""
    if python in (sys.executable, python_executable()):
        return None
    look = "import importlib.util, sys; sys.exit(importlib.util.find_spec('connector') is None)"
    try:
        done = subprocess.run([python, "-c", look], capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"cannot be started: {error}"
    return None if done.returncode == 0 else "does not have kafka-sql installed"


def _spark_python_path() -> str | None:
    """What Spark prepends to PYTHONPATH (`PythonUtils.sparkPythonPath`), if it only repeats installed packages."""
    if os.name != "posix":
        return None
    try:
        import py4j.version
        import pyspark
        from pyspark.find_spark_home import _find_spark_home
    except ImportError:
        return None
    home = Path(pyspark.__file__).parent
    spark_home = Path(_find_spark_home())
    lib = spark_home / "python" / "lib"
    py4j_zip = lib / f"py4j-{py4j.version.__version__}-src.zip"
    jars = list((spark_home / "jars").glob("spark-core_*.jar"))
    if spark_home.resolve() != home.resolve() or not (lib / "pyspark.zip").is_file() or not py4j_zip.is_file():
        return None
    if len(jars) != 1:
        return None
    return os.pathsep.join(str(p) for p in (lib / "pyspark.zip", py4j_zip, jars[0]))
