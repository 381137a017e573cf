"""Resolve jars from Maven Central with the `mvn` client into a local cache directory.

The broker needs Kafka's server jars, which only Maven Central serves here. Resolution runs once:
the jars are copied into a temporary directory and renamed into place only when complete, so an
interrupted download never leaves a half-filled cache behind, and later calls touch no network.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

from connector.errors import KafkaSqlError

# Pinned so a fresh machine resolves exactly what was tested.
DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1"
MVN_TIMEOUT_SECONDS = 1200.0
_MAVEN_ADVICE = ("-e switch", "-X switch", "For more information about the errors", "[ERROR] [Help ")


class MavenError(KafkaSqlError, RuntimeError):
    """Maven is missing or could not resolve the requested jars."""


@dataclass(frozen=True)
class Artifact:
    """A Maven dependency; `exclusions` lists (groupId, artifactId) pairs left out of its tree; `classifier` and
    `type` name a file other than the main jar (protoc's executable: 'linux-x86_64', 'exe')."""

    group: str
    artifact: str
    version: str
    exclusions: tuple[tuple[str, str], ...] = ()
    classifier: str | None = None
    type: str = "jar"


def resolve_jars(
    artifacts: Sequence[Artifact],
    dest: Path,
    on_progress: Callable[[str], None] | None = None,
    suffix: str = "jar",
) -> list[Path]:
    """Return the runtime jars (files ending in `suffix`) of `artifacts` (with their dependencies), cached in `dest`.

    `dest` exists only once resolution completed, so its presence is the cache-hit test.
    """
    if not dest.is_dir():
        dest.parent.mkdir(parents=True, exist_ok=True)
        with _locked(dest.parent / ".resolve.lock"):
            if not dest.is_dir():
                _download(artifacts, dest, on_progress, suffix)
    return sorted(dest.glob(f"*.{suffix}"))


@contextlib.contextmanager
def _locked(lock_file: Path) -> Iterator[None]:
    """Serialise resolutions of the same cache between processes."""
    with lock_file.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _download(
    artifacts: Sequence[Artifact], dest: Path, on_progress: Callable[[str], None] | None, suffix: str
) -> None:
    mvn = shutil.which("mvn")
    if mvn is None:
        raise MavenError(
            "Maven (`mvn`) is needed once to download the Kafka broker jars from Maven Central; "
            "install it (e.g. `apt-get install maven`) and retry"
        )
    # Leftovers of interrupted runs: safe to remove while holding the lock.
    for stale in dest.parent.glob(f".{dest.name}-*"):
        shutil.rmtree(stale, ignore_errors=True)
    work = Path(tempfile.mkdtemp(prefix=f".{dest.name}-", dir=dest.parent))
    try:
        pom = work / "pom.xml"
        pom.write_text(_pom(artifacts), encoding="utf-8")
        if on_progress is not None:
            on_progress(f"Downloading {_describe(artifacts)} with mvn from Maven Central (first run only)...")
        started = time.monotonic()
        command = [
            mvn,
            "-B",
            "-q",
            "-U",  # retry downloads that failed before instead of trusting Maven's cached failure
            "-Dstyle.color=never",
            "-f",
            str(pom),
            f"{DEPENDENCY_PLUGIN}:copy-dependencies",
            f"-DoutputDirectory={work / 'jars'}",
            "-DincludeScope=runtime",
        ]
        try:
            result = subprocess.run(
                command,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=MVN_TIMEOUT_SECONDS,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise MavenError(
                f"mvn did not finish resolving {_describe(artifacts)} within {MVN_TIMEOUT_SECONDS:.0f}s; "
                "check that Maven Central is reachable"
            ) from exc
        if result.returncode != 0:
            tail = _error_summary(result.stdout + result.stderr)
            raise MavenError(
                f"mvn could not resolve {_describe(artifacts)} (exit {result.returncode}):\n{tail}"
            )
        jars = work / "jars"
        if not any(jars.glob(f"*.{suffix}")):
            raise MavenError(f"mvn resolved no .{suffix} files for {_describe(artifacts)}")
        shutil.copy2(pom, jars / "pom.xml")
        os.rename(jars, dest)
        if on_progress is not None:
            count = len(list(dest.glob(f"*.{suffix}")))
            on_progress(f"Downloaded {count} files in {time.monotonic() - started:.0f}s into {dest}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _error_summary(output: str) -> str:
    """Maven's own error lines without its generic advice, else the end of its output."""
    lines = re.sub(r"\x1b\[[0-9;]*m", "", output).strip().splitlines()
    errors = [
        line
        for line in lines
        if line.startswith("[ERROR]") and line[7:].strip() and not any(a in line for a in _MAVEN_ADVICE)
    ]
    return "\n".join(errors[:5] or lines[-20:])


def _describe(artifacts: Sequence[Artifact]) -> str:
    return ", ".join(f"{a.group}:{a.artifact}:{a.version}" for a in artifacts)


def _pom(artifacts: Sequence[Artifact]) -> str:
    dependencies = "".join(_dependency(a) for a in artifacts)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<project xmlns="http://maven.apache.org/POM/4.0.0">\n'
        "  <modelVersion>4.0.0</modelVersion>\n"
        "  <groupId>kafka-sql.local</groupId>\n"
        "  <artifactId>resolved-jars</artifactId>\n"
        "  <version>1</version>\n"
        "  <packaging>pom</packaging>\n"
        f"  <dependencies>\n{dependencies}  </dependencies>\n"
        "</project>\n"
    )


def _dependency(artifact: Artifact) -> str:
    exclusions = "".join(
        f"        <exclusion><groupId>{escape(group)}</groupId>"
        f"<artifactId>{escape(name)}</artifactId></exclusion>\n"
        for group, name in artifact.exclusions
    )
    return (
        "    <dependency>\n"
        f"      <groupId>{escape(artifact.group)}</groupId>\n"
        f"      <artifactId>{escape(artifact.artifact)}</artifactId>\n"
        f"      <version>{escape(artifact.version)}</version>\n"
        + (f"      <classifier>{escape(artifact.classifier)}</classifier>\n" if artifact.classifier else "")
        + (f"      <type>{escape(artifact.type)}</type>\n" if artifact.type != "jar" else "")
        + (f"      <exclusions>\n{exclusions}      </exclusions>\n" if exclusions else "")
        + "    </dependency>\n"
    )
