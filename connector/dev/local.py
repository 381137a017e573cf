"""What the development servers (broker, registry, PostgreSQL) share: a free loopback port and the Java runtime."""

from __future__ import annotations

import os
import shutil
import socket
from pathlib import Path

HOST = "127.0.0.1"


def free_port() -> int:
    """A TCP port on loopback that nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((HOST, 0))
        port: int = probe.getsockname()[1]
        return port


def java() -> str | None:
    """The `java` of JAVA_HOME, else the one on the PATH, else None."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").is_file():
        return str(Path(java_home) / "bin" / "java")
    return shutil.which("java")
