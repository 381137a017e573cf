"""connector.runtime.session: `kafka-sql run` starts Spark's JVM while the file compiles; the session is created on
that JVM with the pipeline's jars on the driver and the executors, and a run that ends before it needs Spark leaves
no JVM behind."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from connector.runtime.session import LOG_CONFIG, JvmLaunch, _log_options, _settings

KAFKA_SQL = Path(sys.executable).with_name("kafka-sql")

_LAUNCHED_WITH_JARS = r"""
from connector.formats.avro import SPARK_AVRO
from connector.runtime.session import JvmLaunch, spark_session
from connector.runtime.spark_jars import package_jars

launch = JvmLaunch.start("local[1]", "launch-jars")
jars = package_jars([SPARK_AVRO])  # resolved while the JVM starts, as `kafka-sql run` does
spark = spark_session("local[1]", "launch-jars", jars, launch)
from pyspark.sql import functions as F
from pyspark.sql.avro.functions import from_avro, to_avro

schema = '{"type": "record", "name": "r", "fields": [{"name": "id", "type": "long"}]}'
rows = (spark.range(3).select(F.struct("id").alias("s")).select(to_avro("s").alias("b"))
        .select(from_avro("b", schema).alias("s")).select("s.id").collect())
print("ids", [r.id for r in rows])
print("jvm", spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())
print("launched", launch.take().proc.pid)
print("jars", spark.sparkContext.getConf().get("spark.jars"))
print("app", spark.sparkContext.appName)
"""

_CLOSED_AT_ONCE = r"""
import os, time
from pathlib import Path
from connector.runtime.session import JvmLaunch

launch = JvmLaunch.start("local[1]", "launch-closed")
time.sleep(0.5)  # spark-submit is running, the JVM not yet ready
launch.close()
time.sleep(0.5)
me = str(os.getpid())
children = [p.name for p in Path("/proc").iterdir() if p.name.isdigit()
            and (p / "stat").read_text().rsplit(")", 1)[1].split()[1] == me]
print("children", children)
"""


def _script(code: str) -> dict[str, str]:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)


def test_the_session_runs_on_the_launched_jvm_with_the_pipelines_jars_on_driver_and_executors() -> None:
    out = _script(_LAUNCHED_WITH_JARS)
    assert out["ids"] == "[0, 1, 2]"  # spark-avro's functions planned on the driver and run in tasks
    assert out["jvm"] == out["launched"]  # one JVM: the one started before the jars were known
    assert "spark-avro_2.13" in out["jars"]
    assert out["app"] == "launch-jars"


def test_closing_a_launch_no_session_took_stops_its_jvm_at_once() -> None:
    assert _script(_CLOSED_AT_ONCE)["children"] == "[]"


def test_no_second_jvm_where_the_process_already_has_a_session(spark: SparkSession) -> None:
    assert JvmLaunch.start("local[1]", "in-a-test") is None


def test_a_run_of_a_file_with_errors_reports_them_and_leaves_no_jvm(tmp_path: Path) -> None:
    name = f"broken_{uuid.uuid4().hex[:8]}"
    sql = tmp_path / f"{name}.sql"
    sql.write_text("CREATE TABLE src (id BIGINT) WITH ('connector' = 'datagen');\n"
                   "INSERT INTO nowhere SELECT * FROM src;\n")
    done = subprocess.run([str(KAFKA_SQL), "run", str(sql)], capture_output=True, text=True, timeout=120, check=False,
                          cwd=tmp_path)
    assert done.returncode == 1
    assert f"{name}.sql:2:13: error [unknown-table]" in done.stdout + done.stderr
    time.sleep(1.0)
    lingering = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and f"spark.app.name={name}".encode() in (entry / "cmdline").read_bytes():
                lingering.append(entry.name)
        except OSError:
            continue
    assert lingering == [], f"JVMs of the run still alive: {lingering} (this process is {os.getpid()})"


def test_the_driver_gets_kafka_sqls_log_configuration_unless_one_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without one, Spark prints its default profile's lines at every start; an administrator's stays in force."""
    conf_dir = tmp_path / "conf"
    conf_dir.mkdir()
    monkeypatch.setenv("SPARK_CONF_DIR", str(conf_dir))
    monkeypatch.delenv("JAVA_TOOL_OPTIONS", raising=False)
    monkeypatch.delenv("SPARK_SUBMIT_OPTS", raising=False)
    monkeypatch.delenv("KAFKA_SQL_DEBUG", raising=False)
    assert _log_options(None) == f"-Dlog4j2.configurationFile={LOG_CONFIG.as_uri()} -Dkafka_sql.exceptions=1"
    assert LOG_CONFIG.is_file()
    monkeypatch.setenv("KAFKA_SQL_DEBUG", "1")
    assert _log_options(None) == f"-Dlog4j2.configurationFile={LOG_CONFIG.as_uri()} -Dkafka_sql.exceptions=full"

    assert _log_options("-Dlog4j2.configurationFile=file:/etc/spark/log4j2.xml") is None
    monkeypatch.setenv("JAVA_TOOL_OPTIONS", "-Dlog4j2.configurationFile=/etc/log4j2.xml")
    assert _log_options(None) is None
    monkeypatch.delenv("JAVA_TOOL_OPTIONS")
    (conf_dir / "log4j2.properties").write_text("rootLogger.level = info\n")
    assert _log_options(None) is None


_LOGS_AN_EXCEPTION = r"""
import sys
from connector.runtime.session import _log_options
from pyspark.sql import SparkSession

spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
         .config("spark.driver.extraJavaOptions", _log_options(None)).getOrCreate())
jvm = spark.sparkContext._jvm
failure = jvm.java.lang.NullPointerException("the task scheduler is null")
jvm.org.apache.logging.log4j.LogManager.getLogger("org.apache.spark.SparkContext").error("Error initializing", failure)
spark.stop()
"""


@pytest.mark.parametrize("debug", ["", "1"])
def test_spark_logs_an_exception_as_its_first_line_and_kafka_sql_debug_as_its_stack_trace(
    tmp_path: Path, debug: str
) -> None:
    """A failing start (a standalone master that gives up) logs Spark's error with the exception; the user reads
    what failed, not JVM stack frames, unless they ask for them."""
    environment = {k: v for k, v in os.environ.items() if k not in ("JAVA_TOOL_OPTIONS", "SPARK_SUBMIT_OPTS")}
    done = subprocess.run(
        [sys.executable, "-c", _LOGS_AN_EXCEPTION],
        capture_output=True,
        text=True,
        timeout=180,
        env={**environment, "SPARK_CONF_DIR": str(tmp_path), "KAFKA_SQL_DEBUG": debug},
    )
    assert done.returncode == 0, done.stderr
    assert "ERROR SparkContext: Error initializing\njava.lang.NullPointerException: the task scheduler is null\n" in (
        done.stderr
    )
    assert ("\tat " in done.stderr) == bool(debug), done.stderr


def test_a_local_run_starts_without_sparks_web_ui_unless_spark_defaults_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The UI cost a second of start-up on 2 cores; the live display reads the status store, which runs without it."""
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path))
    assert _settings("local[*]", "p", None)["spark.ui.enabled"] == "false"
    assert "spark.ui.enabled" not in _settings("spark://127.0.0.1:7077", "p", None)  # a cluster run keeps it
    (tmp_path / "spark-defaults.conf").write_text("spark.ui.enabled   true\n")
    assert "spark.ui.enabled" not in _settings("local[*]", "p", None)  # spark-submit then applies the file's
