"""Deeply nested expressions: up to 100 levels validate and explain, deeper ones are an error at the token that goes
too deep, and long flat chains (generated `a = 1 OR a = 2 OR ...`) have no limit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from support.commands import run

from connector.entrypoints.cli import main

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

TABLES = (
    "CREATE TABLE src (a INT, t STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '1');\n"
    "CREATE TABLE output (x INT) WITH ('connector' = 'blackhole');\n"
)
PREFIX = "INSERT INTO output SELECT "

NESTED = {
    "parentheses": lambda n: "(" * n + "a" + ")" * n,
    "COALESCE": lambda n: "COALESCE(" * n + "a" + ", 0)" * n,
    "function calls": lambda n: "ABS(" * n + "a" + ")" * n,
    "CASE": lambda n: "CASE WHEN a > 0 THEN " * n + "a" + " ELSE 0 END" * n,
    "CAST": lambda n: "CAST(" * n + "t" + " AS INT)" * n,
    "ARRAY": lambda n: "CARDINALITY(" + "ARRAY[" * (n - 1) + "a" + "]" * (n - 1) + ")",
}
CHAINS = {
    "OR": lambda n: "CASE WHEN " + " OR ".join(f"a = {i}" for i in range(n)) + " THEN 1 ELSE 0 END",
    "AND": lambda n: "CASE WHEN " + " AND ".join(f"a <> {i}" for i in range(n)) + " THEN 1 ELSE 0 END",
    "+": lambda n: " + ".join(["a"] * n),
}


def check(tmp_path: Path, capsys: pytest.CaptureFixture[str], expression: str) -> tuple[int, list[dict[str, object]]]:
    """Validate and explain `INSERT INTO output SELECT <expression> FROM src`; the exit code (the same for both) and
    the diagnostics."""
    path = tmp_path / "nested.sql"
    path.write_text(TABLES + PREFIX + expression + " FROM src;\n", encoding="utf-8")
    capsys.readouterr()
    code = main(["validate", str(path), "--format", "json"])
    diagnostics = json.loads(capsys.readouterr().out)["diagnostics"]
    explained = main(["explain", str(path), "--format", "json"])
    document = json.loads(capsys.readouterr().out)
    assert explained == code
    if code == 0:
        assert document["queries"][0]["spark_sql"].startswith("SELECT ")
    return code, diagnostics


@pytest.mark.parametrize("kind", NESTED)
def test_a_hundred_levels_work(kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert check(tmp_path, capsys, NESTED[kind](100)) == (0, [])


@pytest.mark.parametrize("depth", [101, 1000])
@pytest.mark.parametrize("kind", NESTED)
def test_deeper_is_an_error_at_the_level_too_deep(
    kind: str, depth: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expression = NESTED[kind](depth)
    code, [error] = check(tmp_path, capsys, expression)

    assert code == 1
    opened = 0
    for column, char in enumerate(expression):  # where the 101st (, [ or CASE opens
        opened += char in "([" or expression.startswith("CASE", column)
        if opened == 101:
            break
    assert (error["line"], error["column"]) == (3, len(PREFIX) + column + 1)
    assert (error["severity"], error["code"]) == ("error", "nesting")
    assert str(error["message"]).startswith("Expression nested deeper than 100 levels")


def test_nesting_no_bracket_counts_is_an_error_at_the_statement(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, [error] = check(tmp_path, capsys, "CASE WHEN " + "NOT " * 3000 + "a > 1 THEN 1 ELSE 0 END")

    assert code == 1
    assert (error["line"], error["column"], error["code"]) == (3, 1, "nesting")


@pytest.mark.parametrize("kind", CHAINS)
def test_long_flat_chains_work(kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert check(tmp_path, capsys, CHAINS[kind](1000)) == (0, [])


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["COALESCE", "parentheses", "CASE"])
def test_a_hundred_levels_run_on_spark(
    kind: str, spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Spark's analyzer resolves about a level per iteration (a BIGINT column makes it coerce `0` at each one);
    its default of 100 iterations would fail the query."""

    path = tmp_path / "nested.sql"
    path.write_text(
        "CREATE TABLE src (a BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '3',\n"
        "  'fields.a.kind' = 'sequence', 'fields.a.start' = '1', 'fields.a.end' = '3');\n"
        "CREATE TABLE output (x BIGINT) WITH ('connector' = 'print');\n"
        f"{PREFIX}{NESTED[kind](100)} FROM src;\n",
        encoding="utf-8",
    )
    result = run(capsys, path, tmp_path / "cp")
    assert result.code == 0, result.err
    assert sorted(line for line in result.out.splitlines() if line.startswith("+I")) == ["+I[1]", "+I[2]", "+I[3]"]
