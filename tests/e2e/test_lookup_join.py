"""Lookup joins (`FOR SYSTEM_TIME AS OF` a processing time) against a jdbc table on a real PostgreSQL server: rows
are looked up in the table as it is when their micro-batch runs, and what cannot run here is refused by `validate`
with the reason."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from support.commands import run
from support.topics import read_topic

from connector.dev import postgres
from connector.sql.frontend import compile_file

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.slow

PIPELINE = """
CREATE TABLE orders (id BIGINT, customer_id BIGINT, {{ var("time") }}) WITH (
  'connector' = 'kafka', 'topic' = '{{ var("orders") }}', 'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', 'format' = 'json'
);
CREATE TABLE customers (id BIGINT, tier INT, PRIMARY KEY (id) NOT ENFORCED) WITH (
  'connector' = '{{ var("connector") }}', 'url' = '{{ var("url") }}', 'table-name' = '{{ var("table") }}',
  'username' = 'kafka_sql', 'password' = '{{ var("password") }}'
);
CREATE TABLE enriched (id BIGINT, tier INT) WITH (
  'connector' = 'kafka', 'topic' = '{{ var("enriched") }}', 'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);
INSERT INTO enriched SELECT o.id, c.tier
FROM orders AS o {{ var("join") }} customers FOR SYSTEM_TIME AS OF o.{{ var("as_of") }} AS c ON o.customer_id = c.id;
"""
DEFAULTS = {
    "time": "proc_time AS PROCTIME()", "connector": "jdbc", "join": "LEFT JOIN", "as_of": "proc_time",
    "url": "jdbc:postgresql://127.0.0.1:5432/db", "password": "x", "table": "customers",
    "orders": "orders", "enriched": "enriched", "brokers": "localhost:9092",
}  # fmt: skip


def _write(tmp_path: Path, **variables: str) -> tuple[Path, dict[str, str]]:
    path = tmp_path / "enrich.sql"
    path.write_text(PIPELINE)
    return path, {**DEFAULTS, **variables}


def test_rows_are_looked_up_in_the_table_as_it_is_when_their_micro_batch_runs(
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Callable[[str, Sequence[Any]], None],
    postgres_server: postgres.PostgresInfo,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    table = f"customers_{uuid.uuid4().hex[:8]}"
    postgres.query(postgres_server, f"CREATE TABLE {table} (id BIGINT PRIMARY KEY, tier INT)")
    postgres.query(postgres_server, f"INSERT INTO {table} VALUES (1, 1), (2, 2)")
    orders, enriched = topic_factory(), topic_factory()
    path, variables = _write(
        tmp_path, url=postgres_server.jdbc_url, password=postgres_server.password, table=table, orders=orders,
        enriched=enriched, brokers=kafka_bootstrap,
    )  # fmt: skip

    def order(key: int, customer: int) -> tuple[Any, ...]:
        return (None, json.dumps({"id": key, "customer_id": customer}).encode(), None, None, None)

    produce(orders, [order(10, 1), order(11, 2), order(12, 3)])
    first = run(capsys, path, tmp_path / "cp", **variables)
    assert first.code == 0, first.out + first.err
    postgres.query(postgres_server, f"UPDATE {table} SET tier = 5 WHERE id = 1")
    postgres.query(postgres_server, f"INSERT INTO {table} VALUES (3, 3)")
    produce(orders, [order(13, 1), order(14, 3)])
    second = run(capsys, path, tmp_path / "cp", **variables)
    assert second.code == 0, second.out + second.err

    # The first run's rows keep what they found; the second run's see the table changed since.
    assert sorted(read_topic(kafka_bootstrap, enriched), key=lambda r: r["id"]) == [
        {"id": 10, "tier": 1}, {"id": 11, "tier": 2}, {"id": 12, "tier": None},
        {"id": 13, "tier": 5}, {"id": 14, "tier": 3},
    ]  # fmt: skip


def test_a_missing_table_fails_the_run_naming_it(
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    postgres_server: postgres.PostgresInfo,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path, variables = _write(
        tmp_path, url=postgres_server.jdbc_url, password=postgres_server.password, table="no_such_table",
        orders=topic_factory(), enriched=topic_factory(), brokers=kafka_bootstrap,
    )  # fmt: skip
    result = run(capsys, path, tmp_path / "cp", **variables)
    assert result.code != 0
    assert "Cannot read jdbc table 'no_such_table' of lookup table 'customers'" in result.err, result.err
    assert 'relation "no_such_table" does not exist' in result.err


@pytest.mark.parametrize(
    ("variables", "expected"),
    [
        ({"as_of": "ts", "time": "ts TIMESTAMP(3)"}, "an event-time temporal join (AS OF the stream's rowtime) is"),
        ({"join": "RIGHT JOIN"}, "a lookup join is a JOIN or LEFT JOIN ... ON"),
        ({"connector": "datagen"}, "connector 'datagen' cannot look rows up; connectors that can: jdbc"),
    ],
)
def test_validate_refuses_what_is_no_processing_time_lookup_of_a_jdbc_table(
    tmp_path: Path, variables: dict[str, str], expected: str
) -> None:
    path, values = _write(tmp_path, **variables)
    if values["connector"] == "datagen":  # a connector that is a source, without jdbc's options
        options = PIPELINE[PIPELINE.index("'url'") : PIPELINE.index(");\nCREATE TABLE enriched")]
        path.write_text(PIPELINE.replace(options, "'number-of-rows' = '1'\n"))
    messages = [d.message for d in compile_file(path, values).errors]
    assert any(expected in m for m in messages), messages


def test_validate_accepts_a_processing_time_lookup_of_a_jdbc_table_and_explain_says_how_it_is_read(
    tmp_path: Path,
) -> None:
    from connector.planning.explain import explain, render_text

    path, values = _write(tmp_path)
    compiled = compile_file(path, values)
    assert compiled.errors == [] and compiled.pipeline is not None
    text = render_text(explain(compiled.pipeline, "enrich"))
    assert "source: customers (jdbc) as view customers\n    lookup: customers, read again every micro-batch" in text
    assert "LEFT JOIN customers AS c ON o.customer_id = c.id" in text and "SYSTEM_TIME" not in text
