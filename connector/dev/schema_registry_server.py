"""A Confluent-compatible schema registry for development and tests: Apicurio Registry 2.4.2.Final, built once
from Maven Central into a runnable Quarkus application and started on loopback with in-memory storage.

Why this one: Confluent's Schema Registry is not on the Maven Central reachable here, Karapace is not on PyPI, and
Apicurio 3.x's own modules are not served; Apicurio 2.4.2.Final resolves with three workarounds (see
`apicurio/pom.xml`: everit-json-schema from its Central coordinates, one extension pinned to the version Central has,
the app's classes unpacked as the application). Its Confluent API lives under `/apis/ccompat/v7`. The build (about
40 s, 230 MB of downloads) lands in `${KAFKA_SQL_HOME:-~/.cache/kafka-sql}/apicurio-registry-2.4.2-b2/`, renamed into
place only when complete. Apicurio's default compatibility is NONE (Confluent's is BACKWARD); `start` sets
BACKWARD, as a Confluent registry has it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import ssl
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from connector.dev import broker, local
from connector.dev.maven import MVN_TIMEOUT_SECONDS, MavenError
from connector.errors import KafkaSqlError

VERSION = "2.4.2.Final"
_SOURCES = Path(__file__).resolve().parent / "apicurio"
_RUNNER = "target/apicurio-registry-runner-1.0-runner.jar"
_READY_SECONDS = 90.0
API = "/apis/ccompat/v7"


class RegistryStartError(KafkaSqlError, RuntimeError):
    """The registry could not be built or did not start."""


@dataclass(frozen=True)
class ServerTls:
    """HTTPS for the registry: its certificate and key (PEM files) and the CA that signed them; with `clients` (a
    PKCS12 trust store and its password) a client's certificate must be signed by one of its CAs when it
    presents one."""

    certificate: Path
    key: Path
    ca: Path
    clients: tuple[Path, str] | None = None


@dataclass(frozen=True)
class RegistryInfo:
    port: int
    pid: int
    log_file: Path
    ca: Path | None = None  # served over HTTPS only, with a certificate this CA (PEM) signed

    @property
    def url(self) -> str:
        """The Confluent-compatible API, as 'avro-confluent.url' takes it."""
        return f"{'https' if self.ca else 'http'}://127.0.0.1:{self.port}{API}"

    def context(self) -> ssl.SSLContext | None:
        """What trusts the registry's certificate (None: plain HTTP)."""
        return ssl.create_default_context(cafile=str(self.ca)) if self.ca else None


def _home() -> Path:
    return broker.cache_dir().parent / "apicurio-registry-2.4.2-b2"  # b2: built to request client certificates


def build() -> Path:
    """The built application's folder (built by the first call)."""
    home = _home()
    if (home / _RUNNER).is_file():
        return home
    mvn = shutil.which("mvn")
    if mvn is None:
        raise MavenError("Maven (`mvn`) is needed once to build the schema registry from Maven Central")
    home.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".apicurio-", dir=home.parent))
    for name in ("pom.xml", "settings.xml"):
        shutil.copy(_SOURCES / name, work / name)
    (work / "config").mkdir()
    shutil.copy(_SOURCES / "application.properties", work / "config" / "application.properties")
    done = subprocess.run(
        [mvn, "-B", "-q", "-s", "settings.xml", "package"],
        cwd=work, capture_output=True, text=True, timeout=MVN_TIMEOUT_SECONDS,
    )  # fmt: skip
    if done.returncode != 0:
        shutil.rmtree(work, ignore_errors=True)
        raise RegistryStartError(f"building Apicurio Registry {VERSION} failed: {(done.stdout + done.stderr)[-3000:]}")
    shutil.rmtree(work / "target" / "classes", ignore_errors=True)
    if (home / _RUNNER).is_file():  # another process finished first
        shutil.rmtree(work, ignore_errors=True)
    else:
        shutil.rmtree(home, ignore_errors=True)
        work.rename(home)
    return home


def default_dir() -> Path:
    return Path.cwd() / ".kafka-sql" / "registry"


def _state(directory: Path) -> Path:
    return directory / "registry.json"


def status(directory: Path | None = None) -> RegistryInfo | None:
    """The registry `start` left running with its files in `directory`, or None."""
    directory = directory or default_dir()
    try:
        state = json.loads(_state(directory).read_text())
        os.kill(int(state["pid"]), 0)
    except (OSError, ValueError, KeyError):
        return None
    ca = Path(state["ca"]) if state.get("ca") else None
    return RegistryInfo(int(state["port"]), int(state["pid"]), directory / "registry.log", ca)


def start(log_dir: Path | None = None, port: int = 0, tls: ServerTls | None = None) -> RegistryInfo:
    """A registry on loopback (`port`, or a free one), its log and state in `log_dir`; ready (and
    BACKWARD-compatible) on return. An already running one is returned as it is. With `tls` it serves HTTPS
    only (Quarkus's `quarkus.http.ssl.*`)."""
    log_dir = log_dir or default_dir()
    running = status(log_dir)
    if running is not None:
        return running
    home = build()
    port = port or local.free_port()
    log_dir.mkdir(parents=True, exist_ok=True)
    log_file = log_dir / "registry.log"
    environment = {**os.environ, "REGISTRY_PORT": str(port), "REGISTRY_HOST": "127.0.0.1"}
    if tls is not None:
        environment.update(
            QUARKUS_HTTP_SSL_PORT=str(port),
            QUARKUS_HTTP_PORT=str(local.free_port()),  # not served: insecure requests are disabled
            QUARKUS_HTTP_INSECURE_REQUESTS="disabled",
            QUARKUS_HTTP_SSL_CERTIFICATE_FILES=str(tls.certificate),
            QUARKUS_HTTP_SSL_CERTIFICATE_KEY_FILES=str(tls.key),
        )
        if tls.clients is not None:
            environment["QUARKUS_HTTP_SSL_CERTIFICATE_TRUST_STORE_FILE"] = str(tls.clients[0])
            environment["QUARKUS_HTTP_SSL_CERTIFICATE_TRUST_STORE_PASSWORD"] = tls.clients[1]
    with log_file.open("w") as log:
        process = subprocess.Popen(
            [local.java() or "java", "-Xmx256m", "-jar", str(home / _RUNNER)],
            cwd=home, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, env=environment,
        )  # fmt: skip
    info = RegistryInfo(port, process.pid, log_file, tls.ca if tls else None)
    _state(log_dir).write_text(json.dumps({"port": port, "pid": process.pid, "ca": str(info.ca or "")}))
    deadline = time.monotonic() + _READY_SECONDS
    base = info.url.removesuffix(API)
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = log_file.read_text()[-3000:]
            raise RegistryStartError(f"the schema registry exited ({process.returncode}): {tail}")
        try:
            with urllib.request.urlopen(f"{base}/health/ready", timeout=2, context=info.context()):
                pass
            _put(f"{info.url}/config", {"compatibility": "BACKWARD"}, info.context())
            return info
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.25)
    stop(info)
    raise RegistryStartError(f"the schema registry was not ready after {_READY_SECONDS:.0f} s (log {log_file})")


def _put(url: str, body: dict[str, str], context: ssl.SSLContext | None = None) -> None:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), method="PUT", headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10, context=context):
        pass


def stop(info: RegistryInfo) -> None:
    """Stop the registry (its in-memory schemas are gone)."""
    _state(info.log_file.parent).unlink(missing_ok=True)
    try:
        os.kill(info.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    for _ in range(100):
        with contextlib.suppress(ChildProcessError):  # reap it when this process started it
            os.waitpid(info.pid, os.WNOHANG)
        try:
            os.kill(info.pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    os.kill(info.pid, signal.SIGKILL)
