"""Same results as Flink: each case in cases/ runs on kafka-sql against the same input, and every sink must hold
exactly what real Apache Flink wrote (cases/<name>.flink.json, recorded by `make conformance-expected`).

A case Flink refused or failed must fail on kafka-sql too: refused by `run` before it starts, or failing while
it runs (never a result where Flink has none). A case marked `-- refused:` is one kafka-sql cannot run with
Flink's result: `validate` must refuse it with those words (never a different result).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import nexmark_cases as nexmark
import pytest
import table
from harness import Case, case_names, differences, refused_while_planning

from connector.entrypoints import cli

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# Nexmark's queries join the cases where its sources are at hand (../shared/nexmark, or NEXMARK_DIR)
CASES = case_names() + (nexmark.NAMES if nexmark.available() else [])


def test_nexmark_sources_are_at_hand() -> None:
    if not nexmark.available():
        pytest.skip(f"Nexmark's queries are not at {nexmark.QUERIES} (set NEXMARK_DIR): its cases cannot be built")


def test_every_case_has_flink_output() -> None:
    missing = [name for name in CASES if not Case.load(name).expected_path.exists()]
    assert not missing, f"run `make conformance-expected` for: {', '.join(missing)}"


def test_conformance_table_is_current() -> None:
    assert table.render() in table.DOCUMENT.read_text(), (
        "docs/conformance.md's table is stale: tests/conformance/table.py --document"
    )


@pytest.mark.parametrize("name", CASES)
def test_same_output_as_flink(
    name: str,
    kafka_bootstrap: str,
    spark: SparkSession,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    request: pytest.FixtureRequest,
) -> None:
    case = Case.load(name)
    expected: dict[str, Any] = json.loads(case.expected_path.read_text())
    database = request.getfixturevalue("postgres_server") if case.tables else None
    registry = request.getfixturevalue("schema_registry") if case.uses_registry else None
    variables = case.prepare(kafka_bootstrap, database, registry)
    pipeline = tmp_path / f"{name}.sql"
    pipeline.write_text(case.sql)
    args = [f"{key}={value}" for key, value in variables.items()]
    if case.refused:
        code = cli.main(["validate", str(pipeline), *(a for arg in args for a in ("--var", arg))])
        captured = capsys.readouterr()
        assert code != 0 and case.refused in captured.out + captured.err, captured.out + captured.err
        return
    partitions = spark.conf.get("spark.sql.shuffle.partitions")
    try:
        code = cli.main(
            ["run", str(pipeline), "--checkpoint-dir", str(tmp_path / "checkpoints")]
            + [a for arg in args for a in ("--var", arg)]
        )
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", partitions or "2")
    captured = capsys.readouterr()
    if "error" in expected:
        assert code != 0, f"Flink failed this case ({expected['error']}); kafka-sql ran it"
        if refused_while_planning(expected["error"]):  # Flink refused the statement before it ran: so must validate
            refused = cli.main(["validate", str(pipeline), *(a for arg in args for a in ("--var", arg))])
            assert refused != 0, f"Flink refused this case while planning ({expected['error']}); validate passed it"
        return
    assert code == 0, captured.out + captured.err

    actual = case.outputs(kafka_bootstrap, variables, database)
    assert actual == expected["sinks"], differences(actual, expected["sinks"])
