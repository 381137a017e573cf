"""`kafka-sql run --master spark://...`: a pipeline on a Spark standalone cluster gives the local run's output.

The cluster is one master and one small worker, started with the scripts bundled in the pyspark package
(`sbin/spark-daemon.sh`, which the start-master/start-worker scripts of a Spark distribution wrap; pip's
pyspark ships without those two) and stopped when the module's tests are done.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pyspark
import pytest
from support.commands import KAFKA_SQL, assert_readable, run, run_args
from support.pipelines import ORDERS_TO_FILES, expected_big_orders, orders, read_files
from support.topics import Produce, committed, produce_json

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SPARK_HOME = Path(pyspark.__file__).parent
MASTER = "org.apache.spark.deploy.master.Master"
WORKER = "org.apache.spark.deploy.worker.Worker"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cluster_state(web_port: int) -> dict[str, object]:
    """The master's status page as JSON (its workers, their state)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{web_port}/json/", timeout=5) as response:
        state: dict[str, object] = json.load(response)
        return state


@dataclass
class Cluster:
    url: str  # spark://127.0.0.1:PORT
    web_port: int


@pytest.fixture(scope="module")
def spark_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """A running master with one alive worker (1 core, 1 GiB)."""
    work = tmp_path_factory.mktemp("spark-cluster")
    port, web_port = free_port(), free_port()
    env = {
        **os.environ,
        "SPARK_HOME": str(SPARK_HOME),
        "PYSPARK_PYTHON": sys.executable,
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_LOG_DIR": str(work / "logs"),
        "SPARK_PID_DIR": str(work),
        "SPARK_WORKER_DIR": str(work / "worker"),
        "SPARK_IDENT_STRING": work.name,
    }
    daemon = str(SPARK_HOME / "sbin" / "spark-daemon.sh")
    url = f"spark://127.0.0.1:{port}"

    def control(*args: str) -> None:
        subprocess.run([daemon, *args], env=env, check=True, capture_output=True, timeout=120)

    control("start", MASTER, "1", "--host", "127.0.0.1", "--port", str(port), "--webui-port", str(web_port))
    try:
        control("start", WORKER, "1", "--host", "127.0.0.1", "--cores", "1", "--memory", "1g",
                "--webui-port", str(free_port()), url)
        deadline = time.monotonic() + 180
        while True:
            try:
                workers = cluster_state(web_port).get("workers")
            except OSError:
                workers = None
            if isinstance(workers, list) and any(w.get("state") == "ALIVE" for w in workers):
                break
            assert time.monotonic() < deadline, f"no worker registered with {url}; logs in {work / 'logs'}"
            time.sleep(1)
        yield Cluster(url, web_port)
    finally:
        control("stop", WORKER, "1")
        control("stop", MASTER, "1")


@pytest.mark.slow
def test_a_pipeline_on_a_standalone_cluster_writes_what_a_local_run_writes(
    spark_cluster: Cluster,
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Produce,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    topic = topic_factory(partitions=3)
    records = orders(30, 3)
    produce_json(produce, topic, records)
    sql = tmp_path / "orders_to_files.sql"
    sql.write_text(ORDERS_TO_FILES)
    variables = {"brokers": kafka_bootstrap, "topic": topic}

    local = run(capsys, sql, tmp_path / "local-checkpoints", **variables, group="local", path=str(tmp_path / "local"))
    on_cluster = subprocess.run(
        [
            str(KAFKA_SQL),
            *run_args(sql, tmp_path / "cluster-checkpoints",
                      {**variables, "group": "cluster", "path": str(tmp_path / "cluster")}),
            "--master",
            spark_cluster.url,
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"},
    )

    assert local.code == 0, local.err
    assert on_cluster.returncode == 0, on_cluster.stderr
    assert f"Starting Spark ({spark_cluster.url})" in on_cluster.stderr
    applications = cluster_state(spark_cluster.web_port).get("completedapps")
    assert isinstance(applications, list) and [a["name"] for a in applications] == ["orders_to_files"]
    local_rows = read_files(spark, tmp_path / "local")
    assert local_rows == expected_big_orders(records)
    assert read_files(spark, tmp_path / "cluster") == local_rows
    assert committed(kafka_bootstrap, "cluster", topic, 3) == committed(kafka_bootstrap, "local", topic, 3)


@pytest.mark.slow
def test_a_master_that_does_not_answer_is_named_with_what_to_check(tmp_path: Path) -> None:
    """Spark tries to register for about 60 s, then stops its context; the user reads why, not a py4j stack trace."""
    sql = tmp_path / "orders_to_files.sql"
    sql.write_text(ORDERS_TO_FILES)
    master = f"spark://127.0.0.1:{free_port()}"  # nothing listens there
    variables = {"brokers": "127.0.0.1:9", "topic": "t", "group": "g", "path": str(tmp_path / "out")}
    done = subprocess.run(
        [str(KAFKA_SQL), *run_args(sql, tmp_path / "checkpoints", variables), "--master", master],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"},
    )
    assert done.returncode == 1, done.stderr
    address = master.removeprefix("spark://")
    assert f"warning: the Spark master does not accept connections ({address}: Connection refused)" in done.stderr
    assert (
        f"error: Spark did not start on master {master}: no master accepts connections ({address}: Connection "
        "refused). Check --master and that the cluster runs."
    ) in done.stderr
    assert_readable(done.stderr)
    assert "internal error" not in done.stderr
