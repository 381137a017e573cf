"""The `jdbc` sink on a real PostgreSQL server (Debian's package, started by `connector.dev.postgres`): a GROUP BY
upserted into Flink's final table, appends behind a quality gate written exactly once across a replayed micro-batch,
failures that name the table and the database's reason."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from support.commands import run
from support.crashes import Feed, kill_at_each_moment_then_catch_up

from connector.dev import postgres

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.slow


@pytest.fixture
def database(postgres_server: postgres.PostgresInfo) -> postgres.PostgresInfo:
    return postgres_server


def sql(db: postgres.PostgresInfo, statement: str) -> list[list[str | None]]:
    return postgres.query(db, statement)


PIPELINE = """
CREATE TABLE orders (id BIGINT, customer STRING, amount DECIMAL(10, 2), `at` TIMESTAMP(3)) WITH (
  'connector' = 'kafka', 'topic' = '{{ var("topic") }}', 'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', 'format' = 'json'
);
CREATE TABLE {{ var("table") }} ({{ var("columns") }}) WITH (
  'connector' = 'jdbc', 'url' = '{{ var("url") }}', 'table-name' = '{{ var("table") }}',
  'username' = 'kafka_sql', 'password' = '{{ var("password") }}'
);
INSERT INTO {{ var("table") }} {{ var("query") }};
"""
ORDERS = [
    {"id": 1, "customer": "ann", "amount": 10.5, "at": "2024-05-06 07:08:09.123"},
    {"id": 2, "customer": "bob", "amount": 3, "at": "2024-05-06 07:08:10"},
    {"id": 3, "customer": "ann", "amount": 1.25, "at": "2024-05-06 07:08:11"},
    {"id": 4, "customer": "cid", "amount": None, "at": None},
]


def _run(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    db: postgres.PostgresInfo,
    variables: dict[str, str],
    checkpoint: str = "cp",
) -> Any:
    (tmp_path / "to_db.sql").write_text(PIPELINE)
    return run(
        capsys, tmp_path / "to_db.sql", tmp_path / checkpoint, url=db.jdbc_url, password=db.password, **variables
    )


def _orders(topic_factory: Callable[..., str], produce: Callable[[str, Sequence[Any]], None]) -> str:
    topic = topic_factory()
    produce(topic, [(None, json.dumps(o).encode(), None, None, None) for o in ORDERS])
    return topic


def test_a_group_by_lands_as_flinks_final_table_upserted_by_primary_key(
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Callable[[str, Sequence[Any]], None],
    database: postgres.PostgresInfo,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    sql(database, "CREATE TABLE totals (customer VARCHAR(20) PRIMARY KEY, orders BIGINT, total NUMERIC(12, 2))")
    sql(database, "INSERT INTO totals VALUES ('ann', 99, 99.00), ('old', 1, 1.00)")  # updated, and left alone
    topic = _orders(topic_factory, produce)
    variables = {
        "topic": topic, "brokers": kafka_bootstrap, "table": "totals",
        "columns": "customer STRING, orders BIGINT, total DECIMAL(12, 2), PRIMARY KEY (customer) NOT ENFORCED",
        "query": "SELECT customer, COUNT(*), SUM(amount) FROM orders GROUP BY customer",
    }  # fmt: skip

    result = _run(capsys, tmp_path, database, variables)

    assert result.code == 0, result.err
    assert sql(database, "SELECT customer, orders, total FROM totals ORDER BY customer") == [
        ["ann", "2", "11.75"], ["bob", "1", "3.00"], ["cid", "1", None], ["old", "1", "1.00"],
    ]  # fmt: skip
    assert database.password not in result.out + result.err


def test_appends_behind_a_quality_gate_are_written_once_when_a_batch_is_replayed(
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Callable[[str, Sequence[Any]], None],
    database: postgres.PostgresInfo,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A crash after the transaction but before Spark's commit log: the restarted query runs the batch again
    (its commit file is gone), and the database keeps one copy of each row."""
    sql(database, "CREATE TABLE order_log (id BIGINT, customer TEXT, amount NUMERIC(10, 2), at TIMESTAMP(3))")
    topic = _orders(topic_factory, produce)
    variables = {
        "topic": topic, "brokers": kafka_bootstrap, "table": "order_log",
        "columns": "id BIGINT, customer STRING, amount DECIMAL(10, 2), `at` TIMESTAMP(3), "
                   "CONSTRAINT priced EXPECT (amount IS NOT NULL) ON VIOLATION DROP ROW",
        "query": "SELECT id, customer, amount, `at` FROM orders",
    }  # fmt: skip
    assert _run(capsys, tmp_path, database, variables).code == 0
    rows = sql(database, "SELECT id, customer, amount, at FROM order_log ORDER BY id")
    assert rows == [
        ["1", "ann", "10.50", "2024-05-06 07:08:09.123"], ["2", "bob", "3.00", "2024-05-06 07:08:10"],
        ["3", "ann", "1.25", "2024-05-06 07:08:11"],
    ]  # 4 has no amount: dropped by the gate

    commits = sorted((tmp_path / "cp").glob("*/*/commits/0"))
    assert len(commits) == 1, list((tmp_path / "cp").rglob("*"))
    commits[0].unlink()  # as if the runner died right after the database transaction
    commits[0].with_name(".0.crc").unlink(missing_ok=True)
    replay = _run(capsys, tmp_path, database, variables)

    assert replay.code == 0, replay.err
    assert sql(database, "SELECT id, customer, amount, at FROM order_log ORDER BY id") == rows
    assert commits[0].exists()  # the batch did run again, and was found written


def test_a_missing_table_fails_at_start_naming_it_and_the_database_reason(
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Callable[[str, Sequence[Any]], None],
    database: postgres.PostgresInfo,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    topic = _orders(topic_factory, produce)
    variables = {
        "topic": topic, "brokers": kafka_bootstrap, "table": "nowhere",
        "columns": "id BIGINT", "query": "SELECT id FROM orders",
    }  # fmt: skip

    result = _run(capsys, tmp_path, database, variables)

    assert result.code != 0
    assert "JDBC sink 'nowhere': checking table nowhere" in result.err
    assert 'relation "nowhere" does not exist' in result.err


CRASH_PIPELINE = """
SET 'execution.checkpointing.interval' = '1 s';
CREATE TABLE events (id BIGINT, payload STRING) WITH (
  'connector' = 'kafka', 'topic' = '{{ var("topic") }}', 'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'properties.group.id' = 'jdbc-crash', 'scan.startup.mode' = 'earliest-offset',
{% if var("bounded", "false") == "true" %}  'scan.bounded.mode' = 'latest-offset',
{% endif %}  'format' = 'json'
);
CREATE TABLE events_log (id BIGINT, payload STRING) WITH (
  'connector' = 'jdbc', 'url' = '{{ var("url") }}', 'table-name' = 'events_log',
  'username' = 'kafka_sql', 'password' = '{{ var("password") }}'
);
INSERT INTO events_log SELECT id, payload FROM events;
"""
def test_appends_hold_every_record_once_after_kill_9_at_any_moment(
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    database: postgres.PostgresInfo,
    tmp_path: Path,
) -> None:
    """`kafka-sql run` (every process of it) killed with SIGKILL while batches are planned, written and committed,
    restarted from its checkpoint each time, then a bounded run catches up: the table holds each record once."""

    sql(database, "CREATE TABLE events_log (id BIGINT, payload TEXT)")
    topic = topic_factory(partitions=3)
    (tmp_path / "crash.sql").write_text(CRASH_PIPELINE)
    variables = {"brokers": kafka_bootstrap, "topic": topic, "url": database.jdbc_url, "password": database.password}

    produced = kill_at_each_moment_then_catch_up(
        tmp_path / "crash.sql", tmp_path / "checkpoints", variables, Feed(kafka_bootstrap, topic)
    )

    ids = [int(row[0] or -1) for row in sql(database, "SELECT id FROM events_log ORDER BY id")]
    assert ids == list(range(produced))  # none lost, none twice
