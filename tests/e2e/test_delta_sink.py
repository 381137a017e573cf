"""The `delta` sink against a real broker and Spark, read back with delta-rs (what any Delta reader sees): a GROUP BY
merged into Flink's final table, deletes of a changelog, partitioned appends behind a quality gate, a replayed
micro-batch written once, kill -9 at any moment, and tables that do not match the DDL refused at start."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from support.commands import run
from support.crashes import Feed, kill_at_each_moment_then_catch_up

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.slow

PIPELINE = """
CREATE TABLE orders (id BIGINT, customer STRING, amount DECIMAL(10, 2), `at` TIMESTAMP(3)) WITH (
  'connector' = 'kafka', 'topic' = '{{ var("topic") }}', 'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', 'format' = 'json'
);
CREATE TABLE lake ({{ var("columns") }}) {{ var("partitioned", "") }} WITH (
  'connector' = 'delta', 'table-path' = '{{ var("path") }}'
);
INSERT INTO lake {{ var("query") }};
"""
ORDERS = [
    {"id": 1, "customer": "ann", "amount": 10.5, "at": "2024-05-06 07:08:09.123"},
    {"id": 2, "customer": "bob", "amount": 3, "at": "2024-05-06 07:08:10"},
    {"id": 3, "customer": "ann", "amount": 1.25, "at": "2024-05-06 07:08:11"},
    {"id": 4, "customer": "cid", "amount": None, "at": None},
]


def rows_of(path: Path, *order: str) -> list[dict[str, Any]]:
    from deltalake import DeltaTable

    return sorted(DeltaTable(str(path)).to_pyarrow_table().to_pylist(), key=lambda r: tuple(r[c] for c in order))


def _run(capsys: pytest.CaptureFixture[str], tmp_path: Path, variables: dict[str, str], checkpoint: str = "cp") -> Any:
    (tmp_path / "to_lake.sql").write_text(PIPELINE)
    return run(capsys, tmp_path / "to_lake.sql", tmp_path / checkpoint, **variables)


def _orders(topic_factory: Callable[..., str], produce: Callable[[str, Sequence[Any]], None]) -> str:
    topic = topic_factory()
    produce(topic, [(None, json.dumps(o).encode(), None, None, None) for o in ORDERS])
    return topic


def test_a_group_by_lands_as_flinks_final_table_merged_by_primary_key(
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Callable[[str, Sequence[Any]], None],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    topic = _orders(topic_factory, produce)
    variables = {
        "topic": topic, "brokers": kafka_bootstrap, "path": str(tmp_path / "totals"),
        "columns": "customer STRING, orders BIGINT, total DECIMAL(12, 2), PRIMARY KEY (customer) NOT ENFORCED",
        "query": "SELECT customer, COUNT(*), SUM(amount) FROM orders GROUP BY customer",
    }  # fmt: skip

    first = _run(capsys, tmp_path, variables)
    produce(topic, [(None, json.dumps({"id": 5, "customer": "bob", "amount": 2}).encode(), None, None, None)])
    second = _run(capsys, tmp_path, variables)  # the same checkpoint: only the new record, merged into bob's row

    assert first.code == 0, first.err
    assert second.code == 0, second.err
    assert rows_of(tmp_path / "totals", "customer") == [
        {"customer": "ann", "orders": 2, "total": Decimal("11.75")},
        {"customer": "bob", "orders": 2, "total": Decimal("5.00")},
        {"customer": "cid", "orders": 1, "total": None},
    ]


UPSERT_PIPELINE = """
CREATE TABLE prices (sku STRING, price INT, PRIMARY KEY (sku) NOT ENFORCED) WITH (
  'connector' = 'upsert-kafka', 'topic' = '{{ var("topic") }}', 'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.bounded.mode' = 'latest-offset', 'key.format' = 'raw', 'value.format' = 'json'
);
CREATE TABLE latest (sku STRING, price INT, PRIMARY KEY (sku) NOT ENFORCED) WITH (
  'connector' = 'delta', 'table-path' = '{{ var("path") }}'
);
INSERT INTO latest SELECT sku, price FROM prices;
"""


def test_deletes_of_a_changelog_delete_their_key(
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Callable[[str, Sequence[Any]], None],
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
    variables = {"topic": topic, "brokers": kafka_bootstrap, "path": str(tmp_path / "latest")}

    result = run(capsys, tmp_path / "latest.sql", tmp_path / "cp", **variables)

    assert result.code == 0, result.err
    assert rows_of(tmp_path / "latest", "sku") == [{"sku": "a", "price": 3}, {"sku": "c", "price": 4}]


def test_partitioned_appends_behind_a_quality_gate_are_written_once_when_a_batch_is_replayed(
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Callable[[str, Sequence[Any]], None],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A crash after the Delta commit but before Spark's commit log: the restarted query runs the batch again (its
    commit file is gone), and the table keeps one copy of each row, in the DDL's partitions."""
    from deltalake import DeltaTable

    topic = _orders(topic_factory, produce)
    path = tmp_path / "order_log"
    variables = {
        "topic": topic, "brokers": kafka_bootstrap, "path": str(path), "partitioned": "PARTITIONED BY (customer)",
        "columns": "id BIGINT, customer STRING, amount DECIMAL(10, 2), `at` TIMESTAMP(3), "
                   "CONSTRAINT priced EXPECT (amount IS NOT NULL) ON VIOLATION DROP ROW",
        "query": "SELECT id, customer, amount, `at` FROM orders",
    }  # fmt: skip
    assert _run(capsys, tmp_path, variables).code == 0
    rows = rows_of(path, "id")
    assert rows == [
        {"id": 1, "customer": "ann", "amount": Decimal("10.50"), "at": datetime(2024, 5, 6, 7, 8, 9, 123000)},
        {"id": 2, "customer": "bob", "amount": Decimal("3.00"), "at": datetime(2024, 5, 6, 7, 8, 10)},
        {"id": 3, "customer": "ann", "amount": Decimal("1.25"), "at": datetime(2024, 5, 6, 7, 8, 11)},
    ]  # 4 has no amount: dropped by the gate
    assert DeltaTable(str(path)).metadata().partition_columns == ["customer"]
    assert sorted(p.name for p in path.glob("customer=*")) == ["customer=ann", "customer=bob"]

    commits = sorted((tmp_path / "cp").glob("*/*/commits/0"))
    assert len(commits) == 1, list((tmp_path / "cp").rglob("*"))
    commits[0].unlink()  # as if the runner died right after the Delta commit
    commits[0].with_name(".0.crc").unlink(missing_ok=True)
    replay = _run(capsys, tmp_path, variables)

    assert replay.code == 0, replay.err
    assert rows_of(path, "id") == rows
    assert commits[0].exists()  # the batch did run again, and was found committed


def test_a_table_unlike_the_ddl_is_refused_at_start_naming_its_path_and_columns(
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Callable[[str, Sequence[Any]], None],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import pyarrow as pa
    from deltalake import write_deltalake

    path = tmp_path / "other"
    write_deltalake(str(path), pa.table({"id": [1], "note": ["kept"]}))
    topic = _orders(topic_factory, produce)
    variables = {
        "topic": topic, "brokers": kafka_bootstrap, "path": str(path),
        "columns": "id BIGINT, customer STRING", "query": "SELECT id, customer FROM orders",
    }  # fmt: skip

    result = _run(capsys, tmp_path, variables)

    assert result.code != 0
    assert f"the table at {path} has the columns id, note, but the DDL declares id, customer" in result.err
    assert "to_lake.sql:7:" in result.err, result.err  # the 'table-path' option's line
    assert rows_of(path, "id") == [{"id": 1, "note": "kept"}]


CRASH_PIPELINE = """
SET 'execution.checkpointing.interval' = '1 s';
CREATE TABLE events (id BIGINT, payload STRING) WITH (
  'connector' = 'kafka', 'topic' = '{{ var("topic") }}', 'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'properties.group.id' = 'delta-crash', 'scan.startup.mode' = 'earliest-offset',
{% if var("bounded", "false") == "true" %}  'scan.bounded.mode' = 'latest-offset',
{% endif %}  'format' = 'json'
);
CREATE TABLE events_log (id BIGINT, payload STRING) WITH ('connector' = 'delta', 'table-path' = '{{ var("path") }}');
INSERT INTO events_log SELECT id, payload FROM events;
"""
def test_appends_hold_every_record_once_after_kill_9_at_any_moment(
    kafka_bootstrap: str, topic_factory: Callable[..., str], tmp_path: Path
) -> None:
    """`kafka-sql run` (every process of it) killed with SIGKILL while batches are planned, written and committed,
    restarted from its checkpoint each time, then a bounded run catches up: the table holds each record once."""

    topic = topic_factory(partitions=3)
    (tmp_path / "crash.sql").write_text(CRASH_PIPELINE)
    path = tmp_path / "events_log"
    variables = {"brokers": kafka_bootstrap, "topic": topic, "path": str(path)}

    produced = kill_at_each_moment_then_catch_up(
        tmp_path / "crash.sql", tmp_path / "checkpoints", variables, Feed(kafka_bootstrap, topic)
    )

    ids = [row["id"] for row in rows_of(path, "id")]
    assert ids == list(range(produced))  # none lost, none twice
