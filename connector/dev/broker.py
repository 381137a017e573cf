"""A real single-node Apache Kafka broker (KRaft) for development and tests.

The broker runs from Kafka's own jars, fetched once from Maven Central with `mvn` and cached under
`${KAFKA_SQL_HOME:-~/.cache/kafka-sql}/kafka-<version>/`. It runs detached from the Python process
that started it, so `kafka-sql broker start` can return; `broker.json` in the data directory records
it so that later calls (from any process) find, reuse or stop it.

Unlike Kafka's defaults, records are kept until deleted (`log.retention.ms` = -1): example and test data
carry fixed event times, often years old, and Kafka's 7-day time retention deletes such records at its next
check (every 5 minutes) after they were written. A topic's own `retention.ms` still applies.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, ClusterMetadata, NewPartitions, NewTopic

from connector.connectors.kafka.retries import retrying
from connector.dev import local
from connector.dev.listeners import Listener
from connector.dev.maven import Artifact, MavenError, resolve_jars
from connector.errors import KafkaSqlError

KAFKA_VERSION = "4.4.0"
LOG4J_VERSION = "2.24.3"
ARTIFACTS = (
    # kafka-tools-api 4.4.0 is missing from Maven Central, and no broker class refers to it.
    Artifact(
        "org.apache.kafka",
        "kafka_2.13",
        KAFKA_VERSION,
        exclusions=(("org.apache.kafka", "kafka-tools-api"),),
    ),
    # Kafka ships no logging backend in its Maven dependencies; its code logs through slf4j 1.7.
    Artifact("org.apache.logging.log4j", "log4j-core", LOG4J_VERSION),
    Artifact("org.apache.logging.log4j", "log4j-slf4j-impl", LOG4J_VERSION),
)
JVM_OPTIONS = (
    "-Xms128m",
    "-Xmx512m",
    "-XX:+UseG1GC",
    "-XX:MaxGCPauseMillis=20",
    "-XX:+ExitOnOutOfMemoryError",
    "-Djava.awt.headless=true",
    # Kafka's own shutdown hook logs; log4j's must not close the log file before it.
    "-Dlog4j2.shutdownHookEnabled=false",
)
HOST = local.HOST
FORMAT_TIMEOUT_SECONDS = 120.0
KILL_WAIT_SECONDS = 10.0
LOG_TAIL_LINES = 30


class BrokerError(KafkaSqlError, RuntimeError):
    """The broker could not be started, stopped or asked to do something."""


@dataclass
class BrokerInfo:
    """A running broker: where clients connect, its process and where it keeps data and logs."""

    bootstrap: str
    pid: int
    data_dir: Path
    log_file: Path


@dataclass
class _State:
    """Contents of broker.json; ports are kept after a stop so a restart keeps its bootstrap address."""

    port: int
    controller_port: int
    pid: int | None


def default_data_dir() -> Path:
    """Broker data of a project lives next to it, like Spark checkpoints."""
    return Path.cwd() / ".kafka-sql" / "broker"


def cache_dir() -> Path:
    """Where the resolved Kafka jars are kept, shared by all projects of a user."""
    home = os.environ.get("KAFKA_SQL_HOME")
    root = Path(home).expanduser() if home else Path.home() / ".cache" / "kafka-sql"
    return root / f"kafka-{KAFKA_VERSION}"


def start(
    data_dir: Path | None = None,
    port: int = 0,
    timeout: float = 90.0,
    on_progress: Callable[[str], None] | None = None,
    listeners: Sequence[Listener] = (),
) -> BrokerInfo:
    """Start the broker of `data_dir` unless it already runs; return once it serves clients (on its PLAINTEXT
    port; `listeners` adds secured ones, see `connector.dev.listeners`).

    `port` 0 reuses the port of the previous run when it is free, else picks a free one.
    `timeout` bounds the broker's own startup, not the first-time download of its jars.
    """
    data_dir = _resolve(data_dir)
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BrokerError(f"cannot use {data_dir} as the broker's data directory: {exc.strerror}") from exc
    with _locked(data_dir):
        state = _read_state(data_dir)
        running = _running(data_dir, state)
        if running is not None and state is not None:
            if port and port != state.port:
                raise BrokerError(
                    f"a broker already runs for {data_dir} at {running.bootstrap}; "
                    f"stop it first to move it to port {port}"
                )
            _wait_ready(running, timeout)
            return running
        java = _java()
        broker_port = _pick_port(port, state.port if state else None, avoid=set())
        controller_port = _pick_port(0, state.controller_port if state else None, avoid={broker_port})
        libs = _libs(on_progress)
        config = _write_config(data_dir, broker_port, controller_port, listeners)
        _set_aside_logs(data_dir)
        if not (_log_dirs(data_dir) / "meta.properties").exists():
            if on_progress is not None:
                on_progress(f"Formatting broker storage in {data_dir}")
            scram = [argument for listener in listeners for argument in listener.format_arguments()]
            _format_storage(java, libs, data_dir, config, scram)
        if on_progress is not None:
            on_progress(f"Starting Kafka {KAFKA_VERSION} broker on {HOST}:{broker_port}")
        pid = _launch(java, libs, data_dir, config, [o for listener in listeners for o in listener.jvm_options()])
        _write_state(data_dir, _State(broker_port, controller_port, pid))
        info = _info(data_dir, broker_port, pid)
        try:
            _wait_ready(info, timeout)
        except BrokerError:
            _terminate(pid, config, timeout=KILL_WAIT_SECONDS)
            _write_state(data_dir, _State(broker_port, controller_port, None))
            raise
    if on_progress is not None:
        on_progress(f"Kafka broker ready at {info.bootstrap} (pid {pid}, log {info.log_file})")
    return info


def stop(data_dir: Path | None = None, timeout: float = 30.0) -> bool:
    """Shut the broker down cleanly (SIGTERM), killing it after `timeout`; False if none ran."""
    data_dir = _resolve(data_dir)
    if not data_dir.is_dir():
        return False
    with _locked(data_dir):
        state = _read_state(data_dir)
        running = _running(data_dir, state)
        if state is None:
            return False
        if running is not None:
            _terminate(running.pid, _config_file(data_dir), timeout)
        _write_state(data_dir, _State(state.port, state.controller_port, None))
        return running is not None


def status(data_dir: Path | None = None) -> BrokerInfo | None:
    """The broker of `data_dir` if its process is alive (it may still be starting)."""
    data_dir = _resolve(data_dir)
    return _running(data_dir, _read_state(data_dir))


def create_topic(
    bootstrap: str,
    name: str,
    partitions: int = 1,
    config: dict[str, str] | None = None,
    timeout: float = 30.0,
    client: Mapping[str, str] | None = None,
) -> None:
    """Create a topic (replication factor 1) and wait until its partitions have leaders; `client`: librdkafka
    settings for a secured broker."""
    admin = _admin(bootstrap, client)
    topic = NewTopic(name, num_partitions=partitions, replication_factor=1, config=config or {})
    request = lambda: admin.create_topics([topic], operation_timeout=timeout)[name]  # noqa: E731
    _retried(request, KafkaError.TOPIC_ALREADY_EXISTS, f"cannot create topic {name!r}", timeout)
    expected = _has_partitions(name, partitions)
    _wait_for(admin, timeout, f"topic {name!r} with {partitions} partitions", expected)


def add_partitions(bootstrap: str, name: str, total: int, timeout: float = 30.0) -> None:
    """Grow a topic to `total` partitions and wait until the new ones have leaders."""
    admin = _admin(bootstrap)
    futures = admin.create_partitions([NewPartitions(name, total)], operation_timeout=timeout)
    _result(futures[name], f"cannot grow topic {name!r} to {total} partitions", timeout)
    _wait_for(admin, timeout, f"topic {name!r} with {total} partitions", _has_partitions(name, total))


def delete_topic(bootstrap: str, name: str, timeout: float = 30.0, client: Mapping[str, str] | None = None) -> None:
    """Delete a topic and wait until metadata no longer lists it."""
    admin = _admin(bootstrap, client)
    request = lambda: admin.delete_topics([name], operation_timeout=timeout)[name]  # noqa: E731
    _retried(request, KafkaError.UNKNOWN_TOPIC_OR_PART, f"cannot delete topic {name!r}", timeout)
    _wait_for(admin, timeout, f"topic {name!r} to disappear", lambda md: name not in md.topics)


def _resolve(data_dir: Path | None) -> Path:
    return (Path(data_dir) if data_dir is not None else default_data_dir()).expanduser().resolve()


@contextlib.contextmanager
def _locked(data_dir: Path) -> Iterator[None]:
    """Serialise start/stop of one data directory between processes."""
    with (data_dir / ".lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _state_file(data_dir: Path) -> Path:
    return data_dir / "broker.json"


def _config_file(data_dir: Path) -> Path:
    return data_dir / "server.properties"


def _log_file(data_dir: Path) -> Path:
    return data_dir / "broker.log"


def _console_file(data_dir: Path) -> Path:
    """The JVM's own stdout/stderr: errors from before logging is set up land here."""
    return data_dir / "broker.out"


def _log_dirs(data_dir: Path) -> Path:
    return data_dir / "data"


def _read_state(data_dir: Path) -> _State | None:
    try:
        raw = json.loads(_state_file(data_dir).read_text(encoding="utf-8"))
        return _State(port=int(raw["port"]), controller_port=int(raw["controller_port"]), pid=raw["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _write_state(data_dir: Path, state: _State) -> None:
    path = _state_file(data_dir)
    temporary = path.with_suffix(".json.tmp")
    payload = {"port": state.port, "controller_port": state.controller_port, "pid": state.pid}
    temporary.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    os.replace(temporary, path)


def _info(data_dir: Path, port: int, pid: int) -> BrokerInfo:
    return BrokerInfo(bootstrap=f"{HOST}:{port}", pid=pid, data_dir=data_dir, log_file=_log_file(data_dir))


def _running(data_dir: Path, state: _State | None) -> BrokerInfo | None:
    if state is None or state.pid is None or not _alive(state.pid, _config_file(data_dir)):
        return None
    return _info(data_dir, state.port, state.pid)


def _alive(pid: int, config: Path) -> bool:
    """Whether `pid` is a live (non-zombie) broker of this config, not a recycled pid."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return False
    proc = Path(f"/proc/{pid}")
    if not proc.is_dir():  # no procfs (macOS): the pid check is all there is
        return True
    try:
        state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        cmdline = (proc / "cmdline").read_bytes().split(b"\0")
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X") and str(config).encode() in cmdline


def _terminate(pid: int, config: Path, timeout: float) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    if _wait_exit(pid, config, timeout):
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    if not _wait_exit(pid, config, KILL_WAIT_SECONDS):
        raise BrokerError(f"Kafka broker (pid {pid}) did not exit even after SIGKILL")


def _wait_exit(pid: int, config: Path, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while _alive(pid, config):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.1)
    return True


def _libs(on_progress: Callable[[str], None] | None) -> Path:
    libs = cache_dir() / "libs"
    try:
        resolve_jars(ARTIFACTS, libs, on_progress)
    except MavenError as exc:
        raise BrokerError(str(exc)) from exc
    return libs


def _java() -> str:
    found = local.java()
    if found is None:
        raise BrokerError(
            "Java 17 or newer is needed to run the Kafka broker; install a JDK "
            "(e.g. `apt-get install openjdk-17-jre-headless`) or set JAVA_HOME"
        )
    return found


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        # Like the JVM, ignore connections of a previous run still in TIME_WAIT.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((HOST, port))
        except OSError:
            return False
    return True


def _pick_port(requested: int, previous: int | None, avoid: set[int]) -> int:
    if requested:
        if requested in avoid or not _port_free(requested):
            raise BrokerError(
                f"port {requested} on {HOST} is already in use; choose another port or 0 for a free one"
            )
        return requested
    if previous and previous not in avoid and _port_free(previous):
        return previous
    while True:
        port = local.free_port()
        if port not in avoid:
            return port


def _write_config(data_dir: Path, port: int, controller_port: int, listeners: Sequence[Listener] = ()) -> Path:
    """Write server.properties and the log4j2 config for one run; ports may change between runs."""
    extra_listener = "".join(f",{listener.protocol}://{HOST}:{listener.port}" for listener in listeners)
    protocols = "".join(f",{listener.protocol}:{listener.protocol}" for listener in listeners)
    settings = {
        "process.roles": "broker,controller",
        "node.id": "1",
        "controller.quorum.voters": f"1@{HOST}:{controller_port}",
        "listeners": f"PLAINTEXT://{HOST}:{port},CONTROLLER://{HOST}:{controller_port}{extra_listener}",
        "advertised.listeners": f"PLAINTEXT://{HOST}:{port}{extra_listener}",
        "listener.security.protocol.map": f"PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT{protocols}",
        "inter.broker.listener.name": "PLAINTEXT",
        "controller.listener.names": "CONTROLLER",
        "log.dirs": str(_log_dirs(data_dir)),
        "num.partitions": "1",
        "default.replication.factor": "1",
        "min.insync.replicas": "1",
        "auto.create.topics.enable": "false",
        "group.initial.rebalance.delay.ms": "0",
        "offsets.topic.replication.factor": "1",
        "offsets.topic.num.partitions": "1",
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        "transaction.state.log.num.partitions": "1",
        "share.coordinator.state.topic.replication.factor": "1",
        "share.coordinator.state.topic.min.isr": "1",
        "log.segment.bytes": str(16 * 1024 * 1024),
        "log.retention.ms": "-1",  # see the module notes
        "num.network.threads": "2",
        "num.io.threads": "2",
        **{key: value for listener in listeners for key, value in listener.settings().items()},
    }
    config = _config_file(data_dir)
    escaped = {key: value.replace("\\", "\\\\").replace("\n", "\\n") for key, value in settings.items()}  # PEM texts
    config.write_text("".join(f"{key}={value}\n" for key, value in escaped.items()), encoding="utf-8")
    _log4j_file(data_dir).write_text(_log4j_config(_log_file(data_dir)), encoding="utf-8")
    return config


def _log4j_file(data_dir: Path) -> Path:
    return data_dir / "log4j2.xml"


def _log4j_config(log_file: Path) -> str:
    path = escape(str(log_file), {'"': "&quot;"})
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<Configuration status="WARN">
  <Appenders>
    <RollingFile name="file" fileName="{path}" filePattern="{path}.%i">
      <PatternLayout pattern="[%d] %p %m (%c)%n"/>
      <Policies><SizeBasedTriggeringPolicy size="20 MB"/></Policies>
      <DefaultRolloverStrategy max="2"/>
    </RollingFile>
  </Appenders>
  <Loggers>
    <Root level="INFO"><AppenderRef ref="file"/></Root>
    <Logger name="kafka.request.logger" level="WARN"/>
  </Loggers>
</Configuration>
"""


def _java_command(java: str, libs: Path, data_dir: Path, main: str, jvm_options: Sequence[str] = ()) -> list[str]:
    return [
        java,
        *JVM_OPTIONS,
        *jvm_options,
        f"-Dlog4j2.configurationFile={_log4j_file(data_dir)}",
        "-cp",
        str(libs / "*"),
        main,
    ]


def _cluster_id() -> str:
    """A Kafka Uuid in its base64 form; one starting with '-' would read as a CLI option."""
    while True:
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not cluster_id.startswith("-"):
            return cluster_id


def _format_storage(java: str, libs: Path, data_dir: Path, config: Path, extra: list[str]) -> None:
    command = [
        *_java_command(java, libs, data_dir, "kafka.tools.StorageTool"),
        "format",
        "--cluster-id",
        _cluster_id(),
        "--config",
        str(config),
        *extra,
    ]
    try:
        result = subprocess.run(
            command,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=FORMAT_TIMEOUT_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise BrokerError(
            f"formatting Kafka storage in {data_dir} took over {FORMAT_TIMEOUT_SECONDS:.0f}s"
        ) from exc
    if result.returncode != 0:
        output = (result.stdout + result.stderr).strip()
        raise BrokerError(
            f"formatting Kafka storage in {data_dir} failed (exit {result.returncode}):\n{output}"
        )


def _launch(java: str, libs: Path, data_dir: Path, config: Path, jvm_options: Sequence[str] = ()) -> int:
    """Start the broker detached: a shell backgrounds it and exits, so it outlives this process."""
    command = [*_java_command(java, libs, data_dir, "kafka.Kafka", jvm_options), str(config)]
    script = '"$@" </dev/null >>"$KAFKA_SQL_BROKER_CONSOLE" 2>&1 &\necho $!'
    result = subprocess.run(
        ["sh", "-c", script, "sh", *command],
        env={**os.environ, "KAFKA_SQL_BROKER_CONSOLE": str(_console_file(data_dir))},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        start_new_session=True,
        check=False,
    )
    if result.returncode != 0 or not result.stdout.strip().isdigit():
        raise BrokerError(f"could not launch the Kafka broker: {(result.stdout + result.stderr).strip()}")
    return int(result.stdout.strip())


def _wait_ready(info: BrokerInfo, timeout: float) -> None:
    """Wait until the broker is registered and answers metadata requests."""
    config = _config_file(info.data_dir)
    port = int(info.bootstrap.rsplit(":", 1)[1])
    deadline = time.monotonic() + timeout
    while True:
        if not _alive(info.pid, config):
            raise BrokerError(
                f"Kafka broker (pid {info.pid}) exited during startup.{_log_tail(info.data_dir)}"
            )
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise BrokerError(
                f"Kafka broker did not become ready within {timeout:.0f}s.{_log_tail(info.data_dir)}"
            )
        if _accepts_connections(port) and _serves_metadata(info.bootstrap, min(5.0, remaining)):
            return
        time.sleep(0.2)


def _accepts_connections(port: int) -> bool:
    """Cheap check first, so the Kafka client does not log refused connections while the JVM boots."""
    try:
        with socket.create_connection((HOST, port), timeout=1.0):
            return True
    except OSError:
        return False


def _serves_metadata(bootstrap: str, timeout: float) -> bool:
    try:
        metadata = _admin(bootstrap).list_topics(timeout=timeout)
    except KafkaException:
        return False
    # A broker not yet registered with the controller (fenced) is left out of metadata.
    return bool(metadata.brokers)


def _set_aside_logs(data_dir: Path) -> None:
    """Keep the previous run's logs apart, so errors reported for this run are this run's."""
    for path in (_console_file(data_dir), _log_file(data_dir)):
        if path.exists():
            os.replace(path, path.with_name(path.name + ".previous"))


def _log_tail(data_dir: Path) -> str:
    """The broker's last error with its stack trace if it logged one, else the end of its logs."""
    parts = []
    for path in (_console_file(data_dir), _log_file(data_dir)):
        try:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        errors = [i for i, line in enumerate(lines) if " ERROR " in line or " FATAL " in line]
        if errors:
            parts.append(f"\nLast error in {path}:\n" + "\n".join(lines[errors[-1] :][:LOG_TAIL_LINES]))
        elif lines:
            parts.append(f"\nLast lines of {path}:\n" + "\n".join(lines[-LOG_TAIL_LINES:]))
    return "".join(parts) or f"\nNo broker log was written in {data_dir}."


def _admin(bootstrap: str, client: Mapping[str, str] | None = None) -> AdminClient:
    return AdminClient({**(client or {}), "bootstrap.servers": bootstrap})


def _code(exc: KafkaException) -> int | None:
    error = exc.args[0] if exc.args else None
    return error.code() if isinstance(error, KafkaError) else None


def _retried(request: Callable[[], Future[None]], done: int, failure: str, timeout: float) -> None:
    """The admin request's result, asked again through transient errors (a broker restarting: no controller yet,
    timeouts) for `timeout` seconds; a retry answered with `done` (the topic already created or deleted: the reply to
    an earlier attempt was lost) succeeds. BrokerError saying `failure` and Kafka's words otherwise."""
    attempts = 0

    def attempt() -> None:
        nonlocal attempts
        attempts += 1
        try:
            request().result(timeout=timeout)
        except KafkaException as exc:
            if attempts == 1 or _code(exc) != done:
                raise

    try:
        retrying(attempt, failure.replace("cannot ", "request to "), timeout)
    except KafkaException as exc:
        error = exc.args[0] if exc.args else None
        raise BrokerError(f"{failure}: {error.str() if isinstance(error, KafkaError) else exc}") from exc


def _result(future: Future[None], failure: str, timeout: float) -> None:
    try:
        future.result(timeout=timeout)
    except KafkaException as exc:
        error = exc.args[0] if exc.args else None
        raise BrokerError(f"{failure}: {error.str() if isinstance(error, KafkaError) else exc}") from exc


def _has_partitions(name: str, count: int) -> Callable[[ClusterMetadata], bool]:
    def check(metadata: ClusterMetadata) -> bool:
        topic = metadata.topics.get(name)
        if topic is None or topic.error is not None or len(topic.partitions) != count:
            return False
        return all(partition.leader >= 0 for partition in topic.partitions.values())

    return check


def _wait_for(
    admin: AdminClient, timeout: float, what: str, check: Callable[[ClusterMetadata], bool]
) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            if check(admin.list_topics(timeout=max(0.5, min(5.0, deadline - time.monotonic())))):
                return
        except KafkaException:
            pass
        if time.monotonic() >= deadline:
            raise BrokerError(f"timed out after {timeout:.0f}s waiting for {what} to show in metadata")
        time.sleep(0.1)
