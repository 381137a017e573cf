"""Google's protobuf compiler (`protoc`), from Maven Central, for development and tests.

The `protobuf` format reads a FileDescriptorSet ('protobuf.descriptor-file'), which `protoc --include_imports
--descriptor_set_out=FILE x.proto` writes. Users run their own protoc; the test suite and the Flink conformance
recorder take Google's build of it from Maven Central (`com.google.protobuf:protoc`, one executable per platform),
cached like the broker's jars, in the version whose Java code Flink's protobuf format (protobuf-java 4.32.1) runs.
"""

from __future__ import annotations

import platform
import stat
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

from connector.dev import broker
from connector.dev.maven import Artifact, MavenError, resolve_jars

VERSION = "4.32.1"  # protobuf-java of org.apache.flink:flink-protobuf:2.3.0


def _classifier() -> str:
    system = {"Linux": "linux", "Darwin": "osx", "Windows": "windows"}.get(platform.system())
    machines = {"x86_64": "x86_64", "AMD64": "x86_64", "aarch64": "aarch_64", "arm64": "aarch_64"}
    machine = machines.get(platform.machine())
    if system is None or machine is None:
        raise MavenError(f"Maven Central has no protoc build for {platform.system()} {platform.machine()}")
    return f"{system}-{machine}"


def executable(on_progress: Callable[[str], None] | None = None) -> Path:
    """The protoc executable, downloaded by the first call into `${KAFKA_SQL_HOME:-~/.cache/kafka-sql}/protoc-*`."""
    artifact = Artifact("com.google.protobuf", "protoc", VERSION, classifier=_classifier(), type="exe")
    dest = broker.cache_dir().parent / f"protoc-{VERSION}"
    (found,) = resolve_jars([artifact], dest, on_progress, suffix="exe")
    found.chmod(found.stat().st_mode | stat.S_IXUSR)
    return found


def compile_protos(protos: Sequence[Path], out: Path, java_out: Path | None = None) -> Path:
    """`protos` compiled into the FileDescriptorSet `out` (imports included), and into Java sources under
    `java_out` if given; returns `out`. Raises CalledProcessError with protoc's message."""
    includes = sorted({str(p.resolve().parent) for p in protos})
    command = [str(executable()), *(f"-I{i}" for i in includes), "--include_imports", f"--descriptor_set_out={out}"]
    if java_out is not None:
        java_out.mkdir(parents=True, exist_ok=True)
        command.append(f"--java_out={java_out}")
    subprocess.run([*command, *(str(p.resolve()) for p in protos)], check=True, capture_output=True, text=True)
    return out
