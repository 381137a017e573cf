"""`kafka-sql validate` and `explain` of every reference pipeline and example, against golden files; and the facts of
the explain document a user relies on: how each source starts, stops and commits, the trigger, the checkpoint.

Golden files are tests/unit/golden/<name>.txt, the text explain run from the repository root. After an intended change
of the output, regenerate them with `UPDATE_GOLDEN=1 pytest tests/unit/test_explain.py` and review the diff.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from support.commands import explain_json

from connector.entrypoints.cli import main

REPO = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parent / "golden"
PIPELINES = sorted(p.relative_to(REPO) for d in ("sql/reference", "sql/examples") for p in (REPO / d).glob("*.sql"))
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"


@pytest.fixture(autouse=True)
def _from_repo_root(monkeypatch: pytest.MonkeyPatch) -> None:
    # Explain names each INSERT's file as given on the command line: relative paths keep goldens portable.
    monkeypatch.chdir(REPO)


def source(document: dict[str, Any], query: int = 0, index: int = 0) -> dict[str, Any]:
    found: dict[str, Any] = document["queries"][query]["sources"][index]
    return found


def test_pipeline_names_are_unique() -> None:
    assert len({p.stem for p in PIPELINES}) == len(PIPELINES) > 30


def test_every_pipeline_validates(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["validate", *map(str, PIPELINES)])

    err = capsys.readouterr().err
    assert code == 0, err
    assert f"OK: {len(PIPELINES)} file(s) valid." in err


@pytest.mark.parametrize("path", PIPELINES, ids=[p.stem for p in PIPELINES])
def test_explain_matches_golden(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["explain", str(path)])

    captured = capsys.readouterr()
    assert code == 0, captured.err
    golden = GOLDEN / f"{path.stem}.txt"
    if UPDATE:
        golden.write_text(captured.out, encoding="utf-8")
    assert golden.exists(), f"no golden file {golden}: run UPDATE_GOLDEN=1 pytest {__file__}"
    assert captured.out == golden.read_text(encoding="utf-8")


def test_no_stale_golden_files() -> None:
    assert sorted(p.stem for p in GOLDEN.glob("*.txt")) == sorted(p.stem for p in PIPELINES)


# -- start, stop and commit of a Kafka source --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "start"),
    [
        ("startup_earliest_offset", "earliest offset of every partition"),
        ("startup_latest_offset", "latest offset of every partition at the first start"),
        (
            "startup_group_offsets",
            "committed offsets of group 'orders-etl'; partitions without one: earliest offset "
            "(properties.auto.offset.reset)",
        ),
        (
            "startup_timestamp",
            "first record at or after 1735689600000 (2025-01-01T00:00:00.000+00:00); partitions without one: "
            "latest offset",
        ),
        (
            "startup_specific_offsets",
            "partition 0: 42, partition 1: 300; other partitions: committed offset, else earliest (with a warning)",
        ),
    ],
)
def test_startup_mode_is_described(name: str, start: str, capsys: pytest.CaptureFixture[str]) -> None:
    document = explain_json(capsys, f"sql/reference/{name}.sql")

    orders = source(document)
    assert orders["start"] == start
    assert (orders["bounded"], orders["stop"]) == (False, "unbounded")
    assert document["queries"][0]["trigger"] == {"processingTime": "0 seconds"}
    assert orders["restore"].startswith("checkpointed offsets")


@pytest.mark.parametrize(
    ("name", "stop"),
    [
        ("bounded_latest_offset", "latest offsets when the query starts, then finish"),
        ("bounded_group_offsets", "committed offsets of group 'orders-etl' when the query starts, then finish"),
        ("bounded_timestamp", "records before 1735693200000 (2025-01-01T01:00:00.000+00:00), then finish"),
        (
            "bounded_specific_offsets",
            "partition 0: 100, partition 1: 200 (exclusive); other partitions are not read; then finish",
        ),
    ],
)
def test_bounded_mode_is_described_and_runs_available_now(
    name: str, stop: str, capsys: pytest.CaptureFixture[str]
) -> None:
    document = explain_json(capsys, f"sql/reference/{name}.sql")

    orders = source(document)
    assert (orders["bounded"], orders["stop"]) == (True, stop)
    assert orders["discovery"] == "off: partitions fixed at start"
    assert document["queries"][0]["trigger"] == {"availableNow": True}


def test_the_end_of_a_bounded_scan_fires_open_windows_unless_switched_off(capsys: pytest.CaptureFixture[str]) -> None:
    document = explain_json(capsys, "sql/reference/bounded_end_watermark.sql")

    fired, left_open = source(document, 0), source(document, 1)
    assert fired["stop"].endswith("; the watermark then moves to the end of time, firing every open window")
    assert left_open["stop"] == "latest offsets when the query starts, then finish"


def test_commit_mode_follows_the_group_id(capsys: pytest.CaptureFixture[str]) -> None:
    with_group = source(explain_json(capsys, "sql/reference/startup_group_offsets.sql"))
    without_group = source(explain_json(capsys, "sql/reference/startup_earliest_offset.sql"))

    assert with_group["commit"] == (
        "ON_CHECKPOINTS: after each completed micro-batch, to group 'orders-etl' (last processed + 1)"
    )
    assert without_group["commit"] == "DISABLED (no properties.group.id)"


def test_an_upsert_kafka_source_is_explained(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # upsert-kafka has no 'properties.auto.offset.reset': describing its start once failed with a KeyError.
    pipeline = tmp_path / "users.sql"
    pipeline.write_text(
        "CREATE TABLE users (user_id BIGINT, name STRING, PRIMARY KEY (user_id) NOT ENFORCED) WITH ("
        "'connector' = 'upsert-kafka', 'topic' = 'users', 'properties.bootstrap.servers' = '127.0.0.1:9092', "
        "'key.format' = 'json', 'value.format' = 'json');\n"
        "CREATE TABLE shown (user_id BIGINT, name STRING) WITH ('connector' = 'print');\n"
        "INSERT INTO shown SELECT user_id, name FROM users;\n"
    )

    users = source(explain_json(capsys, pipeline))

    assert users["start"] == "earliest offset of every partition"
    assert users["commit"] == "DISABLED (no properties.group.id)"


def test_only_one_query_commits_for_a_shared_group(capsys: pytest.CaptureFixture[str]) -> None:
    document = explain_json(capsys, "sql/examples/quickstart.sql")

    assert [source(document, q)["commit"].split(":")[0] for q in (0, 1)] == ["ON_CHECKPOINTS", "DISABLED"]
    assert any("[shared-group]" in w and "only 'quickstart.refunds' commits" in w for w in document["warnings"])


def test_options_hint_overrides_the_startup_mode(capsys: pytest.CaptureFixture[str]) -> None:
    orders = source(explain_json(capsys, "sql/reference/options_hint.sql"))

    assert orders["start"] == "earliest offset of every partition"
    assert orders["options"]["scan.startup.mode"] == "earliest-offset"


def test_topic_pattern_discovery(capsys: pytest.CaptureFixture[str]) -> None:
    orders = source(explain_json(capsys, "sql/reference/topic_pattern_discovery.sql"))

    assert orders["subscription"] == "topics matching /orders_.*/"
    assert orders["discovery"] == "every 10 s; new partitions and topics read from earliest"


# -- queries: names, checkpoints, triggers ---------------------------------------------------------------------


def test_settings_shape_the_queries(capsys: pytest.CaptureFixture[str]) -> None:
    document = explain_json(capsys, "sql/reference/settings_and_views.sql")

    [query] = document["queries"]
    assert document["pipeline"] == "orders-by-country"
    assert (query["query"], query["checkpoint"]) == ("orders-by-country.totals", "orders-by-country/totals")
    assert query["trigger"] == {"processingTime": "10000 milliseconds"}
    assert query["output_mode"] == "append"  # its GROUP BY into print: each change, by the changelog operator
    assert document["spark_conf"] == {"spark.sql.shuffle.partitions": "4"}
    assert [v["name"] for v in document["views"]] == ["positive_orders"]


def test_checkpoint_is_pipeline_name_and_sink_wherever_the_file_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Moving or renaming the file keeps the checkpoint (so a restart resumes) when pipeline.name is set."""
    moved = tmp_path / "elsewhere" / "renamed.sql"
    moved.parent.mkdir()
    shutil.copy(REPO / "sql/reference/settings_and_views.sql", moved)

    original = explain_json(capsys, "sql/reference/settings_and_views.sql")
    again = explain_json(capsys, moved)

    assert [q["checkpoint"] for q in again["queries"]] == [q["checkpoint"] for q in original["queries"]]


def test_checkpoint_defaults_to_the_file_name(capsys: pytest.CaptureFixture[str]) -> None:
    document = explain_json(capsys, "sql/reference/statement_set.sql")

    assert [(q["checkpoint"], q["statement_set"]) for q in document["queries"]] == [
        ("statement_set/big_orders", 1),
        ("statement_set/all_orders", 1),
    ]


def test_two_inserts_into_one_sink_get_their_own_checkpoints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "twice.sql"
    path.write_text(
        "SET 'pipeline.name' = 'twice';\n"
        "CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '10');\n"
        "CREATE TABLE output (id BIGINT) WITH ('connector' = 'print');\n"
        "INSERT INTO output SELECT id FROM gen;\nINSERT INTO output SELECT id + 1 FROM gen;\n",
        encoding="utf-8",
    )

    document = explain_json(capsys, path)

    assert [(q["query"], q["checkpoint"]) for q in document["queries"]] == [
        ("twice.output", "twice/output"),
        ("twice.output-2", "twice/output-2"),
    ]
    # datagen's rate source cannot run AvailableNow: the runner stops each query after its rows.
    assert all(q["row_limit"] == 10 for q in document["queries"])
