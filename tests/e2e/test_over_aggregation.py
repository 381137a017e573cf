"""OVER aggregations (`agg(x) OVER (PARTITION BY ... ORDER BY time ...)`): by processing time, frames carried across
runs in the checkpoint; what Flink refuses refused by `validate` at the statement; the view shown by `explain`.
Event-time results are compared with real Flink's in the conformance suite (cases/over_*)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from support.commands import run

from connector.sql.frontend import compile_file, plan_diagnostics

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PIPELINE = """
CREATE TABLE clicks (
  user_id STRING, n INT, ts TIMESTAMP(3), pt AS PROCTIME(), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH (
  'connector' = 'kafka', 'topic' = '{{ var("clicks") }}', 'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', 'format' = 'json'
);
CREATE TABLE totals (user_id STRING, n INT, cnt BIGINT, total INT) WITH ('connector' = 'print');
{{ var("query") }};
"""
RUNNING = """INSERT INTO totals SELECT user_id, n,
  COUNT(*) OVER (PARTITION BY user_id ORDER BY pt ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW),
  SUM(n) OVER (PARTITION BY user_id ORDER BY pt ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
FROM clicks"""


def _errors(tmp_path: Path, query: str) -> list[str]:
    path = tmp_path / "over.sql"
    path.write_text(PIPELINE)
    compiled = compile_file(path, {"clicks": "c", "brokers": "localhost:9092", "query": f"INSERT INTO totals {query}"})
    found = [*compiled.errors, *(d for d in plan_diagnostics(compiled) if d.severity == "error")]
    return [f"{d.line}: {d.code}: {d.message}" for d in found]


def test_processing_time_frames_continue_across_runs_through_a_view(
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Callable[[str, Sequence[Any]], None],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    clicks = topic_factory()
    path = tmp_path / "over.sql"
    path.write_text(PIPELINE)
    # Through a view: each INSERT reads a view with an OVER window as a subquery (its operator exists per query).
    through_view = (
        RUNNING.replace("INSERT INTO totals", "CREATE VIEW running_totals AS")
        + ";\nINSERT INTO totals SELECT * FROM running_totals"
    )
    variables = {"clicks": clicks, "brokers": kafka_bootstrap, "query": through_view}

    def click(user: str, n: int) -> tuple[Any, ...]:
        return (None, json.dumps({"user_id": user, "n": n, "ts": "2024-01-01 10:00:00"}).encode(), None, None, None)

    produce(clicks, [click("ann", 1), click("ann", 2), click("bob", 5)])
    first = run(capsys, path, tmp_path / "cp", **variables)
    assert first.code == 0, first.err
    assert sorted(line for line in first.out.splitlines() if line.startswith("+I")) == [
        "+I[ann, 1, 1, 1]",
        "+I[ann, 2, 2, 3]",
        "+I[bob, 5, 1, 5]",
    ]
    produce(clicks, [click("ann", 10), click("bob", 7)])
    second = run(capsys, path, tmp_path / "cp", **variables)
    assert second.code == 0, second.err
    # The running count and sum go on from the first run's state in the checkpoint.
    assert sorted(line for line in second.out.splitlines() if line.startswith("+I")) == [
        "+I[ann, 10, 3, 13]",
        "+I[bob, 7, 2, 12]",
    ]


@pytest.mark.parametrize(
    ("query", "words"),
    [
        (
            "SELECT user_id, n, COUNT(*) OVER (PARTITION BY user_id ORDER BY pt), SUM(n) OVER (ORDER BY pt) "
            "FROM clicks",
            "must use the same window",
        ),
        ("SELECT user_id, n, COUNT(*) OVER (ORDER BY n), 0 FROM clicks", "ordered by one time attribute ascending"),
        ("SELECT user_id, n, COUNT(*) OVER (ORDER BY ts DESC), 0 FROM clicks", "ordered by one time attribute"),
        (
            "SELECT user_id, n, COUNT(*) OVER (ORDER BY ts ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING), 0 FROM clicks",
            "must end at CURRENT ROW",
        ),
        (
            "SELECT user_id, n, COUNT(*) OVER (ORDER BY ts RANGE BETWEEN 3 PRECEDING AND CURRENT ROW), 0 FROM clicks",
            "at an interval PRECEDING",
        ),
        ("SELECT user_id, n, LAG(n) OVER (ORDER BY ts), 0 FROM clicks", "COUNT, SUM, AVG, MIN and MAX are"),
        ("SELECT user_id, n, SUM(DISTINCT n) OVER (ORDER BY ts), 0 FROM clicks", "(DISTINCT)"),
        ("SELECT user_id, n, COUNT(*) OVER w, 0 FROM clicks WINDOW v AS (ORDER BY ts)", "names no window"),
        (
            "SELECT user_id, n, COUNT(*) OVER (PARTITION BY user_id ORDER BY pt), 0 "
            "FROM (SELECT user_id, SUM(n) AS n, MAX(pt) AS pt FROM clicks GROUP BY user_id)",
            "OverAggregate doesn't support consuming update changes",
        ),
        (
            "SELECT user_id, n, rn, 0 FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY c DESC) AS rn "
            "FROM (SELECT user_id, n, COUNT(*) OVER (PARTITION BY user_id ORDER BY pt) AS c FROM clicks)) "
            "WHERE rn <= 2",
            "needs 2 stateful operators (a Top-N, an OVER aggregation); Spark Structured Streaming runs one per query",
        ),
    ],
)
def test_validate_refuses_what_flink_refuses_of_an_over_window(tmp_path: Path, query: str, words: str) -> None:
    errors = _errors(tmp_path, query)
    assert errors and all(e.startswith("9: ") for e in errors), errors  # the INSERT's line
    assert any(words in e for e in errors), errors


def test_validate_accepts_flinks_over_windows(tmp_path: Path) -> None:
    assert _errors(tmp_path, RUNNING.removeprefix("INSERT INTO totals ")) == []
    named = (
        "SELECT user_id, n, COUNT(n) OVER w, MAX(n) OVER w FROM clicks WHERE n > 0 "
        "WINDOW w AS (PARTITION BY user_id ORDER BY ts RANGE BETWEEN INTERVAL '1' MINUTE PRECEDING AND CURRENT ROW)"
    )
    assert _errors(tmp_path, named) == []


def test_explain_shows_the_over_view(tmp_path: Path) -> None:
    from connector.planning.explain import explain, render_text

    path = tmp_path / "over.sql"
    path.write_text(PIPELINE)
    compiled = compile_file(path, {"clicks": "c", "brokers": "localhost:9092", "query": RUNNING})
    assert compiled.pipeline is not None
    text = render_text(explain(compiled.pipeline, "over"))
    assert (
        "OVER aggregation view __over_1 (COUNT(*) AS __over_1_0, SUM(__over_a1) AS __over_1_1 per __over_k0, "
        "ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW, as rows arrive)"
    ) in text
    assert "output mode: append" in text
