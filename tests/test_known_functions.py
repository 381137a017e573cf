"""A call of a function kafka-sql cannot run is a `validate` error at the call, as in Flink, not a Spark failure at
run time; the list of Spark's built-in functions it checks against is Spark's own."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from connector.sql.frontend import compile_file
from connector.sql.known_functions import SPARK_FUNCTIONS_FILE, listed

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PIPELINE = """CREATE TABLE src (id INT, name STRING, ts AS {computed}) WITH ('connector' = 'datagen');
CREATE TABLE output (id INT, name STRING) WITH ('connector' = 'print');
{declared}CREATE VIEW v AS SELECT id, {in_view} AS name FROM src;
INSERT INTO output SELECT id, {in_insert} FROM v;
"""
GOOD = {"computed": "PROCTIME()", "declared": "", "in_view": "UPPER(name)", "in_insert": "CONCAT_WS('-', name)"}


def _errors(tmp_path: Path, **parts: str) -> list[str]:
    path = tmp_path / "p.sql"
    path.write_text(PIPELINE.format(**{**GOOD, **parts}))
    return [f"{d.line}:{d.column} {d.code}: {d.message}" for d in compile_file(path).errors]


def test_an_unknown_function_is_an_error_at_its_call_with_a_suggestion(tmp_path: Path) -> None:
    assert _errors(tmp_path) == []
    (in_insert,) = _errors(tmp_path, in_insert="UPPPER(name)")
    assert in_insert.startswith("4:31 unknown-function: No match found for function 'UPPPER'")
    assert "Did you mean 'upper'?" in in_insert
    (in_view,) = _errors(tmp_path, in_view="NO_SUCH_FN(name)")
    assert in_view.startswith("3:29 unknown-function: No match found for function 'NO_SUCH_FN'")
    (computed,) = _errors(tmp_path, computed="MY_CLOCK()")
    assert computed.startswith("1:46 unknown-function: No match found for function 'MY_CLOCK'")


def test_flink_functions_the_transpiler_maps_and_declared_python_functions_are_known(tmp_path: Path) -> None:
    (tmp_path / "shout.py").write_text("def shout(text: str) -> str:\n    return text.upper()\n")
    declared = "CREATE FUNCTION shout AS 'shout.shout' LANGUAGE PYTHON;\n"
    assert _errors(tmp_path, declared=declared, in_view="SHOUT(name)", in_insert="SPLIT_INDEX(name, '-', 0)") == []


def test_the_list_of_spark_functions_is_the_pinned_sparks(spark: SparkSession) -> None:
    # `python -m connector.sql.known_functions` rewrites the file after a Spark upgrade.
    assert SPARK_FUNCTIONS_FILE.read_text().split() == listed(spark)
