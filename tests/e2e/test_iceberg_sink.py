"""The `iceberg` sink against a real broker and Spark, its tables read back by Iceberg's own Java library
(tests/e2e/iceberg/ReadIceberg.java, iceberg-data 1.10.0 from Maven Central: what Flink and Spark read them with): a
GROUP BY upserted into Flink's final table, deletes of a changelog, partitioned appends behind a quality gate, a
replayed micro-batch written once, kill -9 at any moment, a table unlike the DDL refused at start."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from support.commands import run
from support.crashes import Feed, kill_at_each_moment_then_catch_up

from connector.dev import broker
from connector.dev.maven import Artifact, resolve_jars

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.slow

READER = Path(__file__).parent / "iceberg" / "ReadIceberg.java"
ICEBERG_JAVA = "1.10.0"
JAVA_READER_JARS = (
    Artifact("org.apache.iceberg", "iceberg-data", ICEBERG_JAVA),
    Artifact("org.apache.iceberg", "iceberg-parquet", ICEBERG_JAVA),
    Artifact("org.apache.hadoop", "hadoop-client-api", "3.4.1"),
    Artifact("org.apache.hadoop", "hadoop-client-runtime", "3.4.1"),
)


class IcebergTable:
    """What Iceberg's Java library reads from a table: its partition spec, snapshots and rows."""

    def __init__(self, output: str) -> None:
        lines = [line.split("\t") for line in output.splitlines()]
        self.spec = next(line[1] for line in lines if line[0] == "spec")
        self.identifier = next(line[1] for line in lines if line[0] == "identifier")
        self.snapshots = [(line[1], line[2]) for line in lines if line[0] == "snapshot"]
        self.rows = sorted(tuple(line[1:]) for line in lines if line[0] == "row")


@pytest.fixture(scope="session")
def read_iceberg() -> Callable[[Path, str, str], IcebergTable]:
    jars = resolve_jars(JAVA_READER_JARS, broker.cache_dir().parent / f"iceberg-java-{ICEBERG_JAVA}")
    java = shutil.which("java")
    assert java is not None

    def read(warehouse: Path, database: str, table: str) -> IcebergTable:
        done = subprocess.run(
            [java, "-cp", ":".join(map(str, jars)), str(READER), f"file://{warehouse}", database, table],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        return IcebergTable(done.stdout)

    return read


PIPELINE = """
CREATE TABLE orders (id BIGINT, customer STRING, amount DECIMAL(10, 2), `at` TIMESTAMP(3)) WITH (
  'connector' = 'kafka', 'topic' = '{{ var("topic") }}', 'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', 'format' = 'json'
);
CREATE TABLE lake ({{ var("columns") }}) {{ var("partitioned", "") }} WITH (
  'connector' = 'iceberg', 'catalog-name' = 'local', 'catalog-type' = 'hadoop',
  'warehouse' = '{{ var("warehouse") }}', 'catalog-database' = 'shop', 'catalog-table' = '{{ var("table") }}'
);
INSERT INTO lake {{ var("query") }};
"""
ORDERS = [
    {"id": 1, "customer": "ann", "amount": 10.5, "at": "2024-05-06 07:08:09.123"},
    {"id": 2, "customer": "bob", "amount": 3, "at": "2024-05-06 07:08:10"},
    {"id": 3, "customer": "ann", "amount": 1.25, "at": "2024-05-06 07:08:11"},
    {"id": 4, "customer": "cid", "amount": None, "at": None},
]


def _run(capsys: pytest.CaptureFixture[str], tmp_path: Path, variables: dict[str, str], checkpoint: str = "cp") -> Any:
    (tmp_path / "to_lake.sql").write_text(PIPELINE)
    return run(capsys, tmp_path / "to_lake.sql", tmp_path / checkpoint, warehouse=str(tmp_path / "lake"), **variables)


def _orders(topic_factory: Callable[..., str], produce: Callable[[str, Sequence[Any]], None]) -> str:
    topic = topic_factory()
    produce(topic, [(None, json.dumps(o).encode(), None, None, None) for o in ORDERS])
    return topic


def test_a_group_by_lands_as_flinks_final_table_upserted_by_primary_key(
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Callable[[str, Sequence[Any]], None],
    read_iceberg: Callable[[Path, str, str], IcebergTable],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    topic = _orders(topic_factory, produce)
    variables = {
        "topic": topic, "brokers": kafka_bootstrap, "table": "totals",
        "columns": "customer STRING, orders BIGINT, total DECIMAL(12, 2), PRIMARY KEY (customer) NOT ENFORCED",
        "query": "SELECT customer, COUNT(*), SUM(amount) FROM orders GROUP BY customer",
    }  # fmt: skip

    first = _run(capsys, tmp_path, variables)
    produce(topic, [(None, json.dumps({"id": 5, "customer": "bob", "amount": 2}).encode(), None, None, None)])
    second = _run(capsys, tmp_path, variables)  # the same checkpoint: only the new record, replacing bob's row

    assert first.code == 0, first.err
    assert second.code == 0, second.err
    table = read_iceberg(tmp_path / "lake", "shop", "totals")
    assert table.rows == [("ann", "2", "11.75"), ("bob", "2", "5.00"), ("cid", "1", "null")]
    assert table.identifier == "[customer]"  # the PRIMARY KEY, as Flink creates the table
    # the second run's batch (ids go on from the checkpoint): bob's new row after the delete of his old one
    assert table.snapshots[:2] == [("append", "1"), ("overwrite", "1")]
    assert table.snapshots[-1] == ("append", "0")  # the first run's batch 0: no key to delete yet


CATALOG_PIPELINE = """
CREATE TABLE orders (id BIGINT, customer STRING, amount DECIMAL(10, 2), `at` TIMESTAMP(3)) WITH (
  'connector' = 'kafka', 'topic' = '{{ var("topic") }}', 'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', 'format' = 'json'
);
CREATE CATALOG lake WITH (
  'type' = 'iceberg', 'catalog-type' = 'hadoop', 'warehouse' = '{{ var("warehouse") }}', 'property-version' = '1'
);
CREATE DATABASE IF NOT EXISTS lake.shop;
CREATE TABLE lake.shop.order_log (id BIGINT, customer STRING) PARTITIONED BY (customer);
USE CATALOG lake;
USE shop;
CREATE TABLE per_customer (customer STRING, orders BIGINT, PRIMARY KEY (customer) NOT ENFORCED);
EXECUTE STATEMENT SET BEGIN
INSERT INTO lake.shop.order_log SELECT id, customer FROM default_catalog.default_database.orders;
INSERT INTO per_customer SELECT customer, COUNT(*) FROM default_catalog.default_database.orders GROUP BY customer;
END;
"""


def test_tables_created_in_an_iceberg_catalog_are_its_iceberg_tables(
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Callable[[str, Sequence[Any]], None],
    read_iceberg: Callable[[Path, str, str], IcebergTable],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Flink's way: CREATE CATALOG ... ('type' = 'iceberg'), CREATE DATABASE, USE CATALOG / USE, then tables without
    a connector, by qualified or plain name."""

    topic = _orders(topic_factory, produce)
    (tmp_path / "catalog.sql").write_text(CATALOG_PIPELINE)
    variables = {"topic": topic, "brokers": kafka_bootstrap, "warehouse": str(tmp_path / "lake")}

    result = run(capsys, tmp_path / "catalog.sql", tmp_path / "cp", **variables)

    assert result.code == 0, result.err
    log = read_iceberg(tmp_path / "lake", "shop", "order_log")
    assert log.rows == [("1", "ann"), ("2", "bob"), ("3", "ann"), ("4", "cid")]
    assert "customer: identity" in log.spec
    assert read_iceberg(tmp_path / "lake", "shop", "per_customer").rows == [("ann", "2"), ("bob", "1"), ("cid", "1")]


def test_a_null_primary_key_never_reaches_the_required_key_column(
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Callable[[str, Sequence[Any]], None],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    topic = _orders(topic_factory, produce)
    produce(topic, [(None, json.dumps({"id": 6, "amount": 1}).encode(), None, None, None)])  # no customer
    variables = {
        "topic": topic, "brokers": kafka_bootstrap, "table": "totals",
        "columns": "customer STRING, orders BIGINT, total DECIMAL(12, 2), PRIMARY KEY (customer) NOT ENFORCED",
        "query": "SELECT customer, COUNT(*), SUM(amount) FROM orders GROUP BY customer",
    }  # fmt: skip

    result = _run(capsys, tmp_path, variables)

    assert result.code != 0
    # the engine's NOT NULL enforcer (Flink's default), before the batch reaches the table
    assert "Column 'customer' of table 'lake' is NOT NULL, however, a null value is being written" in result.err


UPSERT_PIPELINE = """
CREATE TABLE prices (sku STRING, price INT, PRIMARY KEY (sku) NOT ENFORCED) WITH (
  'connector' = 'upsert-kafka', 'topic' = '{{ var("topic") }}', 'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.bounded.mode' = 'latest-offset', 'key.format' = 'raw', 'value.format' = 'json'
);
CREATE TABLE latest (sku STRING, price INT, PRIMARY KEY (sku) NOT ENFORCED) WITH (
  'connector' = 'iceberg', 'catalog-name' = 'local', 'catalog-type' = 'hadoop', 'warehouse' = '{{ var("warehouse") }}'
);
INSERT INTO latest SELECT sku, price FROM prices;
"""


def test_deletes_of_a_changelog_delete_their_key(
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Callable[[str, Sequence[Any]], None],
    read_iceberg: Callable[[Path, str, str], IcebergTable],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    topic = topic_factory()
    produce(topic, [
        (b"a", b'{"sku": "a", "price": 1}', None, None, None), (b"b", b'{"sku": "b", "price": 2}', None, None, None),
        (b"a", b'{"sku": "a", "price": 3}', None, None, None), (b"b", None, None, None, None),
        (b"c", b'{"sku": "c", "price": 4}', None, None, None),
    ])  # fmt: skip
    (tmp_path / "latest.sql").write_text(UPSERT_PIPELINE)
    variables = {"topic": topic, "brokers": kafka_bootstrap, "warehouse": str(tmp_path / "lake")}

    result = run(capsys, tmp_path / "latest.sql", tmp_path / "cp", **variables)

    assert result.code == 0, result.err
    # Flink's defaults: database 'default_database', the table's own name
    assert read_iceberg(tmp_path / "lake", "default_database", "latest").rows == [("a", "3"), ("c", "4")]


def test_partitioned_appends_behind_a_quality_gate_are_written_once_when_a_batch_is_replayed(
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Callable[[str, Sequence[Any]], None],
    read_iceberg: Callable[[Path, str, str], IcebergTable],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A crash after the Iceberg commit but before Spark's commit log: the restarted query runs the batch again (its
    commit file is gone), and the table keeps one copy of each row, in the DDL's partitions."""
    topic = _orders(topic_factory, produce)
    variables = {
        "topic": topic, "brokers": kafka_bootstrap, "table": "order_log", "partitioned": "PARTITIONED BY (customer)",
        "columns": "id BIGINT, customer STRING, amount DECIMAL(10, 2), `at` TIMESTAMP(3), "
                   "CONSTRAINT priced EXPECT (amount IS NOT NULL) ON VIOLATION DROP ROW",
        "query": "SELECT id, customer, amount, `at` FROM orders",
    }  # fmt: skip
    assert _run(capsys, tmp_path, variables).code == 0
    table = read_iceberg(tmp_path / "lake", "shop", "order_log")
    assert table.rows == [
        ("1", "ann", "10.50", "2024-05-06T07:08:09.123"), ("2", "bob", "3.00", "2024-05-06T07:08:10"),
        ("3", "ann", "1.25", "2024-05-06T07:08:11"),
    ]  # fmt: skip  # 4 has no amount: dropped by the gate
    assert "customer: identity" in table.spec
    assert table.snapshots == [("append", "0")]

    commits = sorted((tmp_path / "cp").glob("*/*/commits/0"))
    assert len(commits) == 1, list((tmp_path / "cp").rglob("*"))
    commits[0].unlink()  # as if the runner died right after the Iceberg commit
    commits[0].with_name(".0.crc").unlink(missing_ok=True)
    replay = _run(capsys, tmp_path, variables)

    assert replay.code == 0, replay.err
    again = read_iceberg(tmp_path / "lake", "shop", "order_log")
    assert (again.rows, again.snapshots) == (table.rows, table.snapshots)
    assert commits[0].exists()  # the batch did run again, and was found committed


def test_a_table_unlike_the_ddl_is_refused_at_start_naming_it_and_its_columns(
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Callable[[str, Sequence[Any]], None],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import pyarrow as pa

    from connector.connectors.iceberg.hadoop_catalog import HadoopCatalog

    (tmp_path / "lake").mkdir()
    catalog = HadoopCatalog("local", warehouse=str(tmp_path / "lake"))
    catalog.create_namespace("shop")
    catalog.create_table("shop.other", pa.schema([("id", pa.int64()), ("note", pa.string())]))
    topic = _orders(topic_factory, produce)
    variables = {
        "topic": topic, "brokers": kafka_bootstrap, "table": "other",
        "columns": "id BIGINT, customer STRING", "query": "SELECT id, customer FROM orders",
    }  # fmt: skip

    result = _run(capsys, tmp_path, variables)

    assert result.code != 0
    assert "table local.shop.other has the columns id, note, but the DDL declares id, customer" in result.err
    assert "to_lake.sql:7:" in result.err, result.err  # the 'catalog-name' option's line


CRASH_PIPELINE = """
SET 'execution.checkpointing.interval' = '1 s';
CREATE TABLE events (id BIGINT, payload STRING) WITH (
  'connector' = 'kafka', 'topic' = '{{ var("topic") }}', 'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'properties.group.id' = 'iceberg-crash', 'scan.startup.mode' = 'earliest-offset',
{% if var("bounded", "false") == "true" %}  'scan.bounded.mode' = 'latest-offset',
{% endif %}  'format' = 'json'
);
CREATE TABLE events_log (id BIGINT, payload STRING) WITH (
  'connector' = 'iceberg', 'catalog-name' = 'local', 'catalog-type' = 'hadoop', 'warehouse' = '{{ var("warehouse") }}'
);
INSERT INTO events_log SELECT id, payload FROM events;
"""


def test_appends_hold_every_record_once_after_kill_9_at_any_moment(
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    read_iceberg: Callable[[Path, str, str], IcebergTable],
    tmp_path: Path,
) -> None:
    """`kafka-sql run` (every process of it) killed with SIGKILL while batches are planned, written and committed,
    restarted from its checkpoint each time, then a bounded run catches up: the table holds each record once."""

    topic = topic_factory(partitions=3)
    (tmp_path / "crash.sql").write_text(CRASH_PIPELINE)
    variables = {"brokers": kafka_bootstrap, "topic": topic, "warehouse": str(tmp_path / "lake")}

    produced = kill_at_each_moment_then_catch_up(
        tmp_path / "crash.sql", tmp_path / "checkpoints", variables, Feed(kafka_bootstrap, topic)
    )

    ids = sorted(int(row[0]) for row in read_iceberg(tmp_path / "lake", "default_database", "events_log").rows)
    assert ids == list(range(produced))  # none lost, none twice
