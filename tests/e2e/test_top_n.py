"""Top-N (`ROW_NUMBER() OVER (PARTITION BY ... ORDER BY ...)` bounded above 1) of a stream of inserts: the ranks
kept across runs in the checkpoint, and what Flink refuses refused by `validate`."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from support.commands import run
from support.topics import read_topic

from connector.sql.frontend import compile_file, plan_diagnostics

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PIPELINE = """
CREATE TABLE scores (player STRING, game STRING, points INT) WITH (
  'connector' = 'kafka', 'topic' = '{{ var("scores") }}', 'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', 'format' = 'json'
);
CREATE TABLE best ({{ var("columns") }}) WITH ({{ var("sink") }});
INSERT INTO best SELECT {{ var("selected") }} FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY game ORDER BY points DESC) AS place FROM {{ var("source") }}
) WHERE place <= 2;
"""
UPSERT = (
    "'connector' = 'upsert-kafka', 'topic' = '{{ var(\"best\") }}', 'properties.bootstrap.servers' = "
    "'{{ var(\"brokers\") }}', 'key.format' = 'json', 'value.format' = 'json'"
)
DEFAULTS = {
    "columns": "game STRING, place BIGINT, player STRING, PRIMARY KEY (game, place) NOT ENFORCED",
    "sink": UPSERT, "selected": "game, place, player", "source": "scores",
    "scores": "scores", "best": "best", "brokers": "localhost:9092",
}  # fmt: skip


def _write(tmp_path: Path, **variables: str) -> tuple[Path, dict[str, str]]:
    path = tmp_path / "best.sql"
    text = PIPELINE.replace("{{ var(\"sink\") }}", {**DEFAULTS, **variables}["sink"])
    path.write_text(text)
    return path, {**DEFAULTS, **variables}


def _errors(tmp_path: Path, **variables: str) -> list[str]:
    path, values = _write(tmp_path, **variables)
    compiled = compile_file(path, values)
    found = [*compiled.errors, *(d for d in plan_diagnostics(compiled) if d.severity == "error")]
    return [f"{d.code}: {d.message}" for d in found]


def test_ranks_change_across_runs_as_later_rows_overtake_earlier_ones(
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Callable[[str, Sequence[Any]], None],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    scores, best = topic_factory(), topic_factory()
    path, variables = _write(tmp_path, scores=scores, best=best, brokers=kafka_bootstrap)

    def score(player: str, game: str, points: int) -> tuple[Any, ...]:
        return (None, json.dumps({"player": player, "game": game, "points": points}).encode(), None, None, None)

    produce(scores, [score("ann", "chess", 5), score("bob", "chess", 3), score("cy", "go", 1)])
    assert run(capsys, path, tmp_path / "cp", **variables).code == 0
    produce(scores, [score("dan", "chess", 4), score("eve", "chess", 9), score("fay", "go", 0)])
    assert run(capsys, path, tmp_path / "cp", **variables).code == 0

    table: dict[tuple[str, int], str] = {}
    for record in read_topic(kafka_bootstrap, best):
        table[(record["game"], record["place"])] = record["player"]
    # dan (4) took place 2 from bob (3) in the second run, then eve (9) took place 1, pushing ann (5) to place 2.
    assert table == {("chess", 1): "eve", ("chess", 2): "ann", ("go", 1): "cy", ("go", 2): "fay"}


AGGREGATED = "(SELECT game, player, SUM(points) AS points FROM scores GROUP BY game, player)"


def test_ranks_over_a_group_by_follow_its_totals_across_runs(
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Callable[[str, Sequence[Any]], None],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    scores, best = topic_factory(), topic_factory()
    path, variables = _write(tmp_path, scores=scores, best=best, brokers=kafka_bootstrap, source=AGGREGATED)

    def score(player: str, game: str, points: int) -> tuple[Any, ...]:
        return (None, json.dumps({"player": player, "game": game, "points": points}).encode(), None, None, None)

    produce(scores, [score("ann", "chess", 5), score("bob", "chess", 3), score("cy", "go", 1)])
    assert run(capsys, path, tmp_path / "cp", **variables).code == 0
    produce(scores, [score("bob", "chess", 4), score("dan", "chess", 1), score("fay", "go", 2)])
    assert run(capsys, path, tmp_path / "cp", **variables).code == 0

    table: dict[tuple[str, int], str] = {}
    for record in read_topic(kafka_bootstrap, best):
        table[(record["game"], record["place"])] = record["player"]
    # bob's total (3, then 7 in the second run, from the checkpointed sums) overtook ann's 5; dan's 1 stays out.
    assert table == {("chess", 1): "bob", ("chess", 2): "ann", ("go", 1): "fay", ("go", 2): "cy"}


def test_validate_refuses_what_flink_refuses_of_a_top_n(tmp_path: Path) -> None:
    (append,) = _errors(tmp_path, sink="'connector' = 'kafka', 'topic' = 't', 'properties.bootstrap.servers' = 'x', "
                        "'format' = 'json'", columns="game STRING, place BIGINT, player STRING")  # fmt: skip
    assert append.startswith("insert-changelog:") and "doesn't support consuming update changes" in append
    (no_rank,) = _errors(tmp_path, selected="game, CAST(NULL AS BIGINT), player")
    assert no_rank.startswith("upsert-key:") and "upsert key: none" in no_rank
    joined = (
        "(SELECT s.game, s.player, s.points FROM scores s JOIN "
        "(SELECT game, MAX(points) AS best FROM scores GROUP BY game) b ON s.game = b.game)"
    )
    (over_aggregate,) = _errors(tmp_path, source=joined)
    assert "Top-N over an aggregate is supported with the GROUP BY as the ranked subquery's FROM" in over_aggregate
    having = "(SELECT game, player, SUM(points) AS points FROM scores GROUP BY game, player HAVING COUNT(*) > 1)"
    (filtered,) = _errors(tmp_path, source=having)
    assert "needs the GROUP BY to select its keys and aggregates as they are" in filtered
    by_player = "(SELECT player, SUM(points) AS points, MAX(game) AS game FROM scores GROUP BY player)"
    (partitioned,) = _errors(tmp_path, source=by_player)  # PARTITION BY game, not a key of the GROUP BY
    assert "PARTITIONED BY keys of the GROUP BY" in partitioned
    assert _errors(tmp_path) == []
    assert _errors(tmp_path, source=AGGREGATED) == []


def test_validate_takes_a_deduplication_that_updates_its_key_as_updating(tmp_path: Path) -> None:
    path = tmp_path / "last.sql"
    path.write_text(
        "CREATE TABLE s (id INT, v STRING, pt AS PROCTIME()) WITH ('connector' = 'datagen');\n"
        "CREATE TABLE k (id INT, v STRING) WITH ('connector' = 'kafka', 'topic' = 't', "
        "'properties.bootstrap.servers' = 'x', 'format' = 'json');\n"
        "INSERT INTO k SELECT id, v FROM (SELECT id, v, ROW_NUMBER() OVER (PARTITION BY id ORDER BY pt {order}) AS rn "
        "FROM s) WHERE rn = 1;\n"
    )
    text = path.read_text()
    path.write_text(text.format(order="DESC"))
    (last,) = [d.message for d in compile_file(path).errors]
    assert "doesn't support consuming update changes" in last
    path.write_text(text.format(order="ASC"))  # the first row per key by arrival only appends
    assert compile_file(path).errors == []


def test_explain_shows_the_top_n_view(tmp_path: Path) -> None:
    from connector.planning.explain import explain, render_text

    path, values = _write(tmp_path)
    compiled = compile_file(path, values)
    assert compiled.pipeline is not None
    text = render_text(explain(compiled.pipeline, "best"))
    assert "Top-N view __dedup_1 (2 first rows per game by points DESC, numbered place): SELECT * FROM scores" in text
    assert "output mode: append" in text


def test_without_the_rank_a_row_leaving_the_top_n_is_deleted(
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Callable[[str, Sequence[Any]], None],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    scores = topic_factory()
    path, variables = _write(
        tmp_path, sink="'connector' = 'print'", columns="game STRING, player STRING", selected="game, player",
        scores=scores, brokers=kafka_bootstrap,
    )  # fmt: skip
    rows = [("ann", 5), ("bob", 3), ("eve", 9)]
    produce(scores, [(None, json.dumps({"player": p, "game": "chess", "points": n}).encode(), None, None, None)
                     for p, n in rows])  # fmt: skip
    first = run(capsys, path, tmp_path / "cp", **variables)
    assert first.code == 0, first.err
    assert [line for line in first.out.splitlines() if "chess" in line] == [  # each record's changes, as Flink's
        "+I[chess, ann]", "+I[chess, bob]", "-D[chess, bob]", "+I[chess, eve]",
    ]  # fmt: skip
    produce(scores, [(None, json.dumps({"player": "dan", "game": "chess", "points": 7}).encode(), None, None, None)])
    second = run(capsys, path, tmp_path / "cp", **variables)
    assert sorted(line for line in second.out.splitlines() if "chess" in line) == ["+I[chess, dan]", "-D[chess, ann]"]


def test_a_blackhole_sink_takes_the_changes_of_a_top_n(
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Callable[[str, Sequence[Any]], None],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    scores = topic_factory()
    path, variables = _write(
        tmp_path, sink="'connector' = 'blackhole'", columns="game STRING, player STRING", selected="game, player",
        scores=scores, brokers=kafka_bootstrap,
    )  # fmt: skip
    rows = [("ann", 5), ("bob", 3), ("eve", 9)]  # the Top-N's rows carry __deleted, which Flink's blackhole takes
    produce(scores, [(None, json.dumps({"player": p, "game": "chess", "points": n}).encode(), None, None, None)
                     for p, n in rows])  # fmt: skip
    result = run(capsys, path, tmp_path / "cp", **variables)
    assert result.code == 0, result.err
    assert "3 record(s) read" in result.err


TOP_N_TO_PRINT = """
CREATE TABLE src (category STRING, item STRING, amount INT, pt AS PROCTIME()) WITH (
  'connector' = 'kafka', 'topic' = '{{ var("topic") }}', 'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', 'format' = 'json'
);
CREATE TABLE top_rows (category STRING, item STRING, amount INT) WITH (
  'connector' = 'print', 'print-identifier' = 'rows'
);
CREATE TABLE top_ranks (category STRING, rn BIGINT, item STRING, amount INT) WITH (
  'connector' = 'print', 'print-identifier' = 'ranks'
);
CREATE TABLE last_rows (category STRING, item STRING) WITH ('connector' = 'print', 'print-identifier' = 'last');
EXECUTE STATEMENT SET BEGIN
INSERT INTO top_rows SELECT category, item, amount FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY category ORDER BY amount DESC) AS rn FROM src
) WHERE rn <= 2;
INSERT INTO top_ranks SELECT category, rn, item, amount FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY category ORDER BY amount DESC) AS rn FROM src
) WHERE rn <= 2;
INSERT INTO last_rows SELECT category, item FROM (
  SELECT category, item, ROW_NUMBER() OVER (PARTITION BY category ORDER BY pt DESC) AS rn FROM src
) WHERE rn = 1;
END;
"""


def test_a_top_n_into_print_shows_each_record_s_changes_as_flink_prints_them(
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Callable[[str, Sequence[Any]], None],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Without the rank a row entering the N is +I and the row it pushes out -D; with the rank each rank whose row
    changes is -U (old row) and +U (new row), a rank filled for the first time +I; a key's new last row -U, +U. These
    are the lines Flink 2.3 printed for these records (category x; parallelism 1)."""

    topic = topic_factory()
    rows = [("a", 1), ("b", 5), ("d", 3), ("e", 9), ("f", 5), ("i", 2)]
    produce(topic, [(None, json.dumps({"category": "x", "item": i, "amount": n}).encode(), None, None, None)
                    for i, n in rows])  # fmt: skip
    (tmp_path / "top.sql").write_text(TOP_N_TO_PRINT)

    result = run(capsys, tmp_path / "top.sql", tmp_path / "cp", brokers=kafka_bootstrap, topic=topic)

    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert [line for line in lines if line.startswith("rows> ")] == [
        "rows> +I[x, a, 1]", "rows> +I[x, b, 5]", "rows> -D[x, a, 1]", "rows> +I[x, d, 3]", "rows> -D[x, d, 3]",
        "rows> +I[x, e, 9]",
    ]  # fmt: skip
    assert [line for line in lines if line.startswith("ranks> ")] == [
        "ranks> +I[x, 1, a, 1]", "ranks> -U[x, 1, a, 1]", "ranks> +U[x, 1, b, 5]", "ranks> +I[x, 2, a, 1]",
        "ranks> -U[x, 2, a, 1]", "ranks> +U[x, 2, d, 3]", "ranks> -U[x, 1, b, 5]", "ranks> +U[x, 1, e, 9]",
        "ranks> -U[x, 2, d, 3]", "ranks> +U[x, 2, b, 5]",
    ]  # fmt: skip
    assert [line for line in lines if line.startswith("last> ")] == [
        "last> +I[x, a]", "last> -U[x, a]", "last> +U[x, b]", "last> -U[x, b]", "last> +U[x, d]", "last> -U[x, d]",
        "last> +U[x, e]", "last> -U[x, e]", "last> +U[x, f]", "last> -U[x, f]", "last> +U[x, i]",
    ]  # fmt: skip
