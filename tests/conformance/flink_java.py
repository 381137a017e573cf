"""Run a small Java program against the Flink of PyFlink's venv (`make flink-reserved`, `make flink-functions`).

The program is launched from source (JDK 11 or later) with the planner jar from inside flink-table-planner-loader
(which hides it behind its own class loader) and the other jars of PyFlink's lib folder on the class path.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def pyflink_lib(flink_python: str) -> Path:
    code = "import os, pyflink; print(os.path.dirname(pyflink.__file__))"
    done = subprocess.run([flink_python, "-c", code], capture_output=True, text=True, check=True)
    return Path(done.stdout.strip()) / "lib"


def ask_flink(program: str, class_name: str, what: str) -> tuple[str, list[str]]:
    """Flink's version and the words `program` (class `class_name`) prints; exits naming `what` when it fails."""
    flink_python = os.environ.get("FLINK_PYTHON", str(REPO / ".flink-venv" / "bin" / "python"))
    lib = pyflink_lib(flink_python)
    version = next(lib.glob("flink-dist-*.jar")).stem.removeprefix("flink-dist-")
    with tempfile.TemporaryDirectory() as work:
        with zipfile.ZipFile(next(lib.glob("flink-table-planner-loader-*.jar"))) as loader:
            planner = loader.extract("flink-table-planner.jar", work)
        source = Path(work, f"{class_name}.java")
        source.write_text(program, encoding="utf-8")
        others = [str(jar) for jar in lib.glob("*.jar") if "planner-loader" not in jar.name]
        classpath = os.pathsep.join([planner, *others])
        done = subprocess.run(["java", "-cp", classpath, str(source)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"{what} could not be asked:\n{done.stderr[-3000:]}")
    return version, [word for word in done.stdout.split() if word]


def write_list(target: Path, header: str, words: list[str]) -> None:
    target.write_text(f"# {header}\n" + "\n".join(words) + "\n", encoding="utf-8")
    print(f"{len(words)} names -> {target.relative_to(REPO)}")
