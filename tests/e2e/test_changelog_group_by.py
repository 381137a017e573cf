"""A GROUP BY of a stream of inserts written as a changelog format (debezium-json, canal-json, maxwell-json):
Flink's retraction of each changed result, the accumulators carried across runs in the checkpoint, and what cannot
be written so refused by `validate`. Flink's own output for the same input is compared in the conformance suite
(cases/changelog_group_by_sink)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from support.commands import run
from support.topics import read_topic

from connector.sql.frontend import compile_file

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PIPELINE = """
CREATE TABLE orders (user_id STRING, amount INT) WITH (
  'connector' = 'kafka', 'topic' = '{{ var("orders") }}', 'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', 'format' = 'json'
);
CREATE TABLE totals (user_id STRING, cnt BIGINT, total INT) WITH (
  'connector' = 'kafka', 'topic' = '{{ var("totals") }}', 'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'debezium-json'
);
INSERT INTO totals {{ var("query") }};
"""
TOTALS = "SELECT user_id, COUNT(*), SUM(amount) FROM orders GROUP BY user_id"


def _errors(tmp_path: Path, query: str) -> list[str]:
    path = tmp_path / "totals.sql"
    path.write_text(PIPELINE)
    compiled = compile_file(path, {"orders": "o", "totals": "t", "brokers": "localhost:9092", "query": query})
    return [f"{d.code}: {d.message}" for d in compiled.errors]


def test_results_retract_across_runs_from_the_checkpointed_accumulators(
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Callable[[str, Sequence[Any]], None],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    orders, totals = topic_factory(), topic_factory()
    path = tmp_path / "totals.sql"
    path.write_text(PIPELINE)
    variables = {"orders": orders, "totals": totals, "brokers": kafka_bootstrap, "query": TOTALS}

    def order(user: str, amount: int) -> tuple[Any, ...]:
        return (None, json.dumps({"user_id": user, "amount": amount}).encode(), None, None, None)

    produce(orders, [order("ann", 5), order("bob", 2), order("ann", 1)])
    assert run(capsys, path, tmp_path / "cp", **variables).code == 0
    produce(orders, [order("ann", 10)])
    assert run(capsys, path, tmp_path / "cp", **variables).code == 0

    changes = [(m["op"], m["before"] or m["after"]) for m in read_topic(kafka_bootstrap, totals)]
    ann = [(op, row["cnt"], row["total"]) for op, row in changes if row["user_id"] == "ann"]
    # Each record that changed ann's result retracted the one before, also the second run's (from the checkpoint).
    assert ann == [("c", 1, 5), ("d", 1, 5), ("c", 2, 6), ("d", 2, 6), ("c", 3, 16)]
    assert [(op, row["cnt"], row["total"]) for op, row in changes if row["user_id"] == "bob"] == [("c", 1, 2)]


def test_validate_accepts_a_group_by_of_inserts_and_explain_shows_its_view(tmp_path: Path) -> None:
    from connector.planning.explain import explain, render_text

    assert _errors(tmp_path, TOTALS) == []
    having = (
        "SELECT user_id, COUNT(*) * 2, MAX(amount) FROM orders WHERE amount > 0 GROUP BY user_id HAVING SUM(amount) > 3"
    )
    assert _errors(tmp_path, having) == []
    path = tmp_path / "totals.sql"
    compiled = compile_file(path, {"orders": "o", "totals": "t", "brokers": "localhost:9092", "query": TOTALS})
    assert compiled.pipeline is not None
    text = render_text(explain(compiled.pipeline, "totals"))
    assert (
        "changelog GROUP BY view __agg_1 (COUNT(*) AS __agg_1_0, SUM(__agg_a1) AS __agg_1_1 per __agg_k0, each change "
        "with its retraction)"
    ) in text
    assert "output mode: append" in text


@pytest.mark.parametrize(
    ("query", "words"),
    [
        (
            "SELECT user_id, COUNT(*), CAST(SUM(n) AS INT) FROM "
            "(SELECT user_id, COUNT(*) AS n FROM orders GROUP BY user_id) GROUP BY user_id",
            "An aggregate over an aggregate cannot be written as a changelog",
        ),
        (
            "SELECT user_id, COUNT(DISTINCT user_id, amount), 0 FROM orders GROUP BY user_id",
            "COUNT, SUM, AVG, MIN and MAX of one argument (DISTINCT or not) can",
        ),
        (
            "SELECT user_id, n, 0 FROM (SELECT user_id, COUNT(*) AS n FROM orders GROUP BY user_id)",
            "carry no old row here",
        ),
    ],
)
def test_validate_refuses_what_cannot_be_written_as_a_changelog(tmp_path: Path, query: str, words: str) -> None:
    errors = _errors(tmp_path, query)
    assert any(e.startswith("insert-changelog:") and words in e for e in errors), errors
