"""The driver's SparkSession for `kafka-sql run`, on a JVM started while the pipeline compiles.

Starting the driver JVM (spark-submit, its launcher, the JVM up to its py4j gateway: about 1.6 s on 2 cores)
needs nothing from the pipeline but the jars of the Spark modules its formats need, and compiling the pipeline
(mostly importing sqlglot, pyspark, pandas and pyarrow: about 1.1 s) needs no JVM. So `JvmLaunch` starts the
JVM in a thread as the run begins, and `spark_session` then adds the pipeline's jars to the driver's class
loader, as spark-submit does with `spark.jars` before it starts the gateway (its MutableURLClassLoader, the
context class loader of the gateway's threads), and creates the session on that JVM; the SparkContext ships the
same jars to executors (`spark.jars`). Measured on 2 cores, 100k records: the session ready 1.0-1.5 s sooner.

This module imports nothing heavy at the top: the CLI imports it before the rest of kafka-sql.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import socket
import sys
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from connector.errors import KafkaSqlError
from connector.runtime import class_cache, live
from connector.runtime.python_launcher import python_executable

# Rows go to the Python sinks (Kafka, ...) in Arrow batches of this many: the first records reach Kafka once the
# first 1,000 are decoded, not 10,000 (Spark's default; the first output of a bounded run of 100k records 9.7 ->
# 8.6 s measured, the same rate at 1M).
ARROW_BATCH_RECORDS = 1_000
DATAFRAME_DEBUGGING = "spark.python.sql.dataFrameDebugging.enabled"
# Settings under which Spark evaluates Flink SQL as Flink does, at run time (not only when a query is analysed, as
# `engine.flink_arithmetic`): every `kafka-sql run` session and the pytest plugin's session start with them.
FLINK_SQL_CONF = {
    # Flink's TIMESTAMP is a wall-clock value; UTC keeps it unchanged through Spark's event-time TIMESTAMP.
    "spark.sql.session.timeZone": "UTC",
    # UPPER / LOWER map case as Flink does (Java's String.toUpperCase, not ICU's); ICU also costs the first batch of
    # a run about 1.5 s loading its data (measured: first tasks 5.9 -> 4.2 s).
    "spark.sql.icu.caseMappings.enabled": "false",
    # A map built with a key twice (STR_TO_MAP('a=1,a=2'), MAP_FROM_ARRAYS) keeps the last value, as in Flink;
    # Spark's default fails the query.
    "spark.sql.mapKeyDedupPolicy": "LAST_WIN",
}
# Settings every `kafka-sql run` session starts with.
SESSION_CONF = {
    "spark.sql.shuffle.partitions": "4",
    "spark.sql.streaming.stopTimeout": "60s",
    "spark.ui.showConsoleProgress": "false",
    # Executors report a running batch's figures with their heartbeats: the live display's records so far.
    "spark.executor.heartbeatInterval": live.HEARTBEAT_INTERVAL,
    **FLINK_SQL_CONF,
    "spark.sql.execution.arrow.maxRecordsPerBatch": str(ARROW_BATCH_RECORDS),
    # pyspark's DataFrame debugging sends the Python call site of every Column function to the JVM (about ten py4j
    # round trips each); a pipeline's decoding and encoding build a few thousand Columns, and the call sites would
    # name kafka-sql's own modules, never the user's SQL. Off: 2.1x fewer round trips over 20 conformance cases' queries
    # (2-13x per Column function; measured 2026-11-28).
    DATAFRAME_DEBUGGING: "false",
}
# The driver JVM's JIT compiles a method with C2 (the optimizing compiler) only once it ran 10x as often as Java's
# defaults ask: most of a run's start-up code (analysis, planning) then stays with C1, and the C2 compiler threads
# stop taking one of the machine's cores while the run starts; the per-record loops still reach C2. Measured on 2
# cores (bench/race_flink.py's pipeline, 2026-11-28): 1M records 17.3-17.9 s instead of 18.9-20.3 s (CPU 29-31 s
# instead of 35-38 s), 10M records 47.4-50.8 s against 49.3-50.1 s. C1 alone (TieredStopAtLevel=1) started faster
# still but ran 10M records in 68 s instead of 45 s.
JIT_OPTIONS = (
    "-XX:Tier4InvocationThreshold=50000 -XX:Tier4MinInvocationThreshold=6000 -XX:Tier4CompileThreshold=150000 "
    "-XX:Tier4BackEdgeThreshold=400000"
)
# The driver JVM exits at its first OutOfMemoryError (HotSpot's exit code 3), so that a run reports it as such
# (`driver_exit`) instead of losing the JVM's connection mid-call or running on with threads dead.
OOM_OPTION = "-XX:+ExitOnOutOfMemoryError"
OOM_EXIT_CODE = 3
LOST_DRIVER_WAIT = 10.0  # seconds a JVM that stopped answering is given to exit before the error is a bug's
MEMORY_HINT = (
    "raise the driver's memory (SPARK_DRIVER_MEMORY=4g, or spark.driver.memory in spark-defaults.conf), or bound "
    "each micro-batch with the Kafka source's 'scan.max-records-per-batch'"
)
# The driver JVM's log configuration where Spark's conf folder has none (`_log_options`).
LOG_CONFIG = Path(__file__).with_name("log4j2.properties")
# A local run starts without Spark's web UI: starting it took 0.5-1.1 s of a run's start-up on 2 cores (the first output
# record of bench/race_flink.py's 1M pipeline 8.99 s instead of 9.90 s, medians of 4 alternating runs, 2026-11-29),
# and the live display shows a running batch's progress from Spark's status store, which runs without the UI. Runs on
# a cluster keep it, and so does a spark-defaults.conf that sets `spark.ui.enabled` itself.
UI_ENABLED = "spark.ui.enabled"
# Spark's class loaders that take jars while the JVM runs (spark-submit's, with or without userClassPathFirst).
_JAR_LOADERS = ("org.apache.spark.util.MutableURLClassLoader", "org.apache.spark.util.ChildFirstURLClassLoader")
# Loggers that print each task and query failure with its stack trace; the runner reports a failure once.
_FAILURE_LOGGERS = (
    "org.apache.spark.executor.Executor",
    "org.apache.spark.scheduler.TaskSetManager",
    "org.apache.spark.util.Utils",
    "org.apache.spark.sql.execution.datasources",
    "org.apache.spark.sql.execution.streaming",
)


class JvmLaunch:
    """The driver JVM of a session for `master` and `app_name`, started in a thread; `spark_session` takes it."""

    def __init__(self, master: str, app_name: str) -> None:
        _prepare_environment(master)
        self.master = master
        self.app_name = app_name
        self.java_options: str | None = None
        self._gateway: Any = None
        self._error: BaseException | None = None
        self._taken = False
        self._thread = threading.Thread(target=self._launch, name="kafka-sql-jvm-launch", daemon=True)
        self._thread.start()

    @classmethod
    def start(cls, master: str, app_name: str) -> JvmLaunch | None:
        """A launch, or None where this process already has a Spark JVM (a session in a test or a notebook)."""
        if "pyspark" in sys.modules:
            from pyspark import SparkContext

            if SparkContext._gateway is not None:
                return None
        return cls(master, app_name)

    def _launch(self) -> None:
        try:
            self.java_options = class_cache.java_options()
            from pyspark import SparkConf
            from pyspark.java_gateway import launch_gateway

            conf = SparkConf(loadDefaults=False)
            conf.setAll(list(_settings(self.master, self.app_name, self.java_options).items()))
            self._gateway = launch_gateway(conf)
        except BaseException as err:  # re-raised in the thread that takes the gateway
            self._error = err

    def take(self) -> Any:
        """The started gateway (waiting for it); the launch's error if it failed."""
        self._thread.join()
        self._taken = True
        if self._error is not None:
            raise self._error
        return self._gateway

    def close(self) -> None:
        """Stop the JVM if no session took it (the run ended before it needed Spark): at once where this
        process's children are known (Linux), else once it has started."""
        if self._taken:
            return
        self._taken = True
        if self._thread.is_alive():
            _stop_launching_jvm()  # launch_gateway then sees the process end and raises, ending the thread
        self._thread.join()
        if self._gateway is not None:
            self._gateway.shutdown()
            process = getattr(self._gateway, "proc", None)
            if process is not None:  # the JVM exits when its stdin closes
                process.stdin.close()
                process.wait(timeout=30)


def _stop_launching_jvm() -> None:
    """Terminate the spark-submit process (the driver JVM once it execs java) this process started: the child
    whose arguments include `pyspark-shell`, the application pyspark's `launch_gateway` always submits."""
    me = os.getpid()
    try:
        entries = [e for e in Path("/proc").iterdir() if e.name.isdigit()]
    except OSError:  # no /proc: the caller waits for the JVM to start, then stops it
        return
    for entry in entries:
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            if parent == me and b"pyspark-shell" in (entry / "cmdline").read_bytes().split(b"\0"):
                os.kill(int(entry.name), signal.SIGTERM)
        except (OSError, ValueError, IndexError):  # gone meanwhile, or not ours to read
            continue


def spark_session(master: str, app_name: str, jars: Sequence[Path] = (), launch: JvmLaunch | None = None) -> Any:
    """A SparkSession whose Python workers run this interpreter, with the package shipped to executors and
    `jars` (Spark modules the pipeline's formats need) on driver and executors; on `launch`'s JVM if given."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    if launch is not None:
        gateway = launch.take()
        java_options = launch.java_options
        SparkContext._ensure_initialized(gateway=gateway)
        _add_driver_jars(gateway.jvm, jars)
    else:
        _prepare_environment(master)
        java_options = class_cache.java_options()
    builder = SparkSession.builder
    for key, value in _settings(master, app_name, java_options).items():
        builder = builder.config(key, value)
    if jars:
        builder = builder.config("spark.jars", ",".join(str(jar) for jar in jars))
    try:
        spark = builder.getOrCreate()
    except Exception as err:  # a py4j error with Java's stack trace: what failed, in one line
        raise SparkStartError(f"Spark did not start on master {master}: {_start_failure(master, err)}") from None
    _quiet_spark_logs(spark)
    _quiet_lost_driver(spark)
    if java_options:
        class_cache.record_writer(spark, java_options)
    from connector.runtime import data_sources

    data_sources.load_static(spark)
    if not master.startswith("local"):
        spark.sparkContext.addPyFile(_package_zip())
    return spark


def driver_exit(wait: float = 0.0) -> str | None:
    """Why this process's driver JVM is gone, when it is (None while it runs, or when it is not ours to watch).
    `wait`: seconds to give a JVM that stopped answering to end (a dying JVM refuses connections before it exits)."""
    import subprocess

    from pyspark import SparkContext

    process = getattr(SparkContext._gateway, "proc", None) if SparkContext._gateway is not None else None
    if process is None:
        return None
    try:
        code = process.wait(timeout=wait) if wait else process.poll()
    except subprocess.TimeoutExpired:
        code = None
    if code is None:
        return None
    if code == OOM_EXIT_CODE:
        return f"the Spark driver ran out of memory (java.lang.OutOfMemoryError) and stopped: {MEMORY_HINT}"
    return f"the Spark driver JVM exited with code {code}; its log above says why"


def _quiet_lost_driver(spark: Any) -> None:
    """pyspark's accumulator server prints a traceback when the driver JVM's connection ends mid-update (the JVM
    died: `driver_exit` says why, once); other errors it prints as before."""
    server = getattr(spark.sparkContext, "_accumulatorServer", None)
    if server is None:
        return
    printed = server.handle_error

    def handle_error(request: Any, client_address: Any) -> None:
        if driver_exit(wait=LOST_DRIVER_WAIT) is None:
            printed(request, client_address)

    server.handle_error = handle_error


class SparkStartError(KafkaSqlError):
    """The session could not be created (a standalone master that never accepted the application, ...)."""


def master_unreachable(master: str, timeout: float = 2.0) -> str | None:
    """For a standalone master URL (`spark://host:port[,host:port]`), why no master accepts a TCP connection
    ('127.0.0.1:7077: Connection refused'); None when one does, and for every other kind of master."""
    if not master.startswith("spark://"):
        return None
    problems = []
    for address in master.removeprefix("spark://").split(","):
        host, _, port = address.rpartition(":")
        try:
            with socket.create_connection((host, int(port)), timeout=timeout):
                return None
        except (OSError, ValueError) as error:
            problems.append(f"{address}: {getattr(error, 'strerror', None) or error}")
    return "; ".join(problems)


def _start_failure(master: str, error: Exception) -> str:
    """Why the session did not start: an unreachable master (Spark then stops its context and reports only that
    it is stopped), else the Java exception's first line."""
    unreachable = master_unreachable(master)
    if unreachable:
        return f"no master accepts connections ({unreachable}). Check --master and that the cluster runs."
    java = getattr(error, "java_exception", None)
    return str(java.toString()) if java is not None else str(error).strip().splitlines()[0]


def _prepare_environment(master: str) -> None:
    """What the driver JVM and the Python workers it starts read from the environment."""
    # Locally the executors are this machine, where the launcher (and this interpreter) exist.
    os.environ.setdefault("PYSPARK_PYTHON", python_executable() if master.startswith("local") else sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if master.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")


def _settings(master: str, app_name: str, java_options: str | None) -> dict[str, str]:
    # The driver JVM's options go on spark-submit's command line, which replaces spark-defaults.conf's value of the
    # same key: an administrator's options are kept by putting them after ours (the JVM takes the last of an option
    # given twice), and a user's spark.driver.extraJavaOptions follow all of them.
    defaults = _spark_defaults()
    administrators = defaults.get("spark.driver.defaultJavaOptions", "").strip() or None
    options = " ".join(
        o for o in (JIT_OPTIONS, OOM_OPTION, _log_options(administrators), java_options, administrators) if o
    )
    local = master.startswith("local") and UI_ENABLED not in defaults
    return {
        "spark.master": master,
        "spark.app.name": app_name,
        **SESSION_CONF,
        **({UI_ENABLED: "false"} if local else {}),
        "spark.driver.defaultJavaOptions": options,
    }


def _spark_conf_dir() -> Path:
    """The conf folder spark-submit reads: $SPARK_CONF_DIR, else $SPARK_HOME/conf, else the pyspark package's conf."""
    conf_dir = os.environ.get("SPARK_CONF_DIR")
    if conf_dir is not None:
        return Path(conf_dir)
    home = os.environ.get("SPARK_HOME")
    if home is None:
        import pyspark

        home = str(Path(pyspark.__file__).parent)
    return Path(home, "conf")


def _spark_defaults() -> dict[str, str]:
    """The spark-defaults.conf spark-submit reads (`_spark_conf_dir`), where Spark intends administrators to set
    `spark.driver.defaultJavaOptions` and the like."""
    import javaproperties

    try:
        text = (_spark_conf_dir() / "spark-defaults.conf").read_text(encoding="utf-8")
    except OSError:
        return {}
    return dict(javaproperties.loads(text))


def _log_options(administrators: str | None) -> str | None:
    """The driver JVM's options for `LOG_CONFIG` (exceptions logged as their first line, KAFKA_SQL_DEBUG=1 with
    their stack traces), unless a log4j2 configuration is given already: a file in Spark's
    conf folder (which the JVM would find on its class path) or a JVM option of the administrator's or the
    environment's. A user's own in spark.driver.extraJavaOptions comes later on the command line and wins."""
    environment = (os.environ.get(name) for name in ("JAVA_TOOL_OPTIONS", "SPARK_SUBMIT_OPTS"))
    given = " ".join(o for o in (administrators, *environment) if o)
    if "log4j2.configurationFile" in given or "log4j.configurationFile" in given:
        return None
    if any(_spark_conf_dir().glob("log4j2*.*")):
        return None
    exceptions = "full" if os.environ.get("KAFKA_SQL_DEBUG") else "1"
    return f"-Dlog4j2.configurationFile={LOG_CONFIG.as_uri()} -Dkafka_sql.exceptions={exceptions}"


def _add_driver_jars(jvm: Any, jars: Sequence[Path]) -> None:
    """Put `jars` on the driver's class path of a running JVM, as spark-submit does with `spark.jars`."""
    if not jars:
        return
    loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
    if str(loader.getClass().getName()) not in _JAR_LOADERS:
        raise RuntimeError(f"cannot add the Spark modules' jars to the driver: its class loader is {loader}")
    for jar in jars:
        loader.addURL(jvm.java.io.File(str(jar)).toURI().toURL())


def _quiet_spark_logs(spark: Any) -> None:
    """Spark's errors only, without the stack traces of failures `run` reports itself (KAFKA_SQL_DEBUG=1: all)."""
    if os.environ.get("KAFKA_SQL_DEBUG"):
        spark.sparkContext.setLogLevel("WARN")
        return
    spark.sparkContext.setLogLevel("ERROR")
    jvm = spark.sparkContext._jvm
    configurator = jvm.org.apache.logging.log4j.core.config.Configurator
    for name in _FAILURE_LOGGERS:
        configurator.setLevel(name, jvm.org.apache.logging.log4j.Level.OFF)
    # py4j logs an exception raised in foreachBatch with its Python traceback; pyspark logs every analysis error it
    # raises (UNRESOLVED_ROUTINE, ...) as a JSON line with the JVM's stack trace before `run` reports the error.
    for name in ("py4j.clientserver", "SQLQueryContextLogger", "DataFrameQueryContextLogger"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


def _package_zip() -> str:
    """The `connector` package as a zip for executors on other machines (Spark's --py-files)."""
    package = Path(__file__).resolve().parents[1]
    target = Path(tempfile.mkdtemp(prefix="kafka-sql-")) / "connector"
    return shutil.make_archive(str(target), "zip", root_dir=package.parent, base_dir=package.name)
