"""A call of a function kafka-sql cannot run is a `validate` error at the call, as in Flink, not a Spark failure at
run time; the list of Spark's built-in functions it checks against is Spark's own."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from connector.sql.dialect.flink_functions import FLINK_FUNCTIONS_FILE, flink_functions
from connector.sql.frontend import compile_file
from connector.sql.validate.calls import FLINK_INSTEAD, SPARK_FUNCTIONS_FILE, listed, spark_functions

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PIPELINE = """CREATE TABLE src (id INT, name STRING, ts AS {computed}) WITH ('connector' = 'datagen');
CREATE TABLE output (id INT, name STRING) WITH ('connector' = 'print');
{declared}CREATE VIEW v AS SELECT id, {in_view} AS name FROM src;
INSERT INTO output SELECT id, {in_insert} FROM v;
"""
GOOD = {"computed": "PROCTIME()", "declared": "", "in_view": "UPPER(name)", "in_insert": "CONCAT_WS('-', name)"}


def _errors(tmp_path: Path, **parts: str) -> list[str]:
    return [d for d in _diagnostics(tmp_path, **parts) if " warning " not in d]


def _diagnostics(tmp_path: Path, **parts: str) -> list[str]:
    path = tmp_path / "p.sql"
    path.write_text(PIPELINE.format(**{**GOOD, **parts}))
    return [f"{d.line}:{d.column} {d.severity} {d.code}: {d.message}" for d in compile_file(path).diagnostics]


def test_an_unknown_function_is_an_error_at_its_call_with_a_suggestion(tmp_path: Path) -> None:
    assert _errors(tmp_path) == []
    (in_insert,) = _errors(tmp_path, in_insert="UPPPER(name)")
    assert in_insert.startswith("4:31 error unknown-function: No match found for function 'UPPPER'")
    assert "Did you mean 'upper'?" in in_insert
    (in_view,) = _errors(tmp_path, in_view="NO_SUCH_FN(name)")
    assert in_view.startswith("3:29 error unknown-function: No match found for function 'NO_SUCH_FN'")
    (flinks,) = _errors(tmp_path, in_insert="HASH_CODE(name)")  # Flink's (Java's String.hashCode), not run here
    assert flinks.startswith("4:31 error unknown-function: Flink's function 'HASH_CODE' is not supported by kafka-sql")
    (typeof,) = _errors(tmp_path, in_insert="TYPEOF(name)")  # Spark's names Spark's types
    assert typeof.startswith("4:31 error unknown-function: Flink's function 'TYPEOF' is not supported by kafka-sql: ")
    (computed,) = _errors(tmp_path, computed="MY_CLOCK()")
    assert computed.startswith("1:46 error unknown-function: No match found for function 'MY_CLOCK'")


def test_flink_functions_the_transpiler_maps_and_declared_python_functions_are_known(tmp_path: Path) -> None:
    (tmp_path / "shout.py").write_text("def shout(text: str) -> str:\n    return text.upper()\n")
    declared = "CREATE FUNCTION shout AS 'shout.shout' LANGUAGE PYTHON;\n"
    assert _errors(tmp_path, declared=declared, in_view="SHOUT(name)", in_insert="SPLIT_INDEX(name, '-', 0)") == []


def test_the_list_of_spark_functions_is_the_pinned_sparks(spark: SparkSession) -> None:
    # `python -m connector.sql.validate.calls` rewrites the file after a Spark upgrade.
    assert SPARK_FUNCTIONS_FILE.read_text().split() == listed(spark)


def test_a_spark_function_flink_lacks_is_a_warning_at_its_call_naming_flinks_function(tmp_path: Path) -> None:
    """Flink 2.3 refuses NVL, LEN and DATEDIFF ("No match found for function signature"); kafka-sql still runs them
    with Spark's functions, as before the check, and says so. sqlglot's typed nodes for them (NVL -> COALESCE) would
    hide the name, so the dialect leaves such calls plain."""
    found = _diagnostics(tmp_path, in_view="NVL(name, 'x')", in_insert="CAST(LEN(name) AS STRING)")
    where = [d.split(": ", 1)[0] for d in found]
    assert where == ["3:29 warning spark-only-function", "4:36 warning spark-only-function"]
    assert "'NVL' is no function of Flink SQL" in found[0] and "Flink's COALESCE does this instead." in found[0]
    assert "Spark's len. Flink's CHAR_LENGTH does this instead." in found[1]
    # a Python function of that name is the pipeline's own, which Flink runs too
    (tmp_path / "own.py").write_text("def nvl(text: str, other: str) -> str:\n    return text or other\n")
    declared = "CREATE FUNCTION nvl AS 'own.nvl' LANGUAGE PYTHON;\n"
    assert _diagnostics(tmp_path, declared=declared, in_view="NVL(name, 'x')") == []


def test_a_spark_function_named_by_a_reserved_word_is_warned_about_too(tmp_path: Path) -> None:
    """CORR, DATE_TRUNC and OCTET_LENGTH are words Flink's grammar reserves, so the dialect builds sqlglot's typed
    nodes for them; Flink 2.3 still refuses the calls ("No match found for function signature"). CEILING and TRANSLATE
    are reserved words Flink's grammar reads as calls of its own functions (`make flink-functions` finds them)."""
    found = _diagnostics(tmp_path, in_view="CAST(OCTET_LENGTH(name) AS STRING)", in_insert="DATE_TRUNC('DAY', name)")
    where = [d.split(": ", 1)[0] for d in found]
    assert where == ["3:34 warning spark-only-function", "4:31 warning spark-only-function"]
    assert "'OCTET_LENGTH' is no function of Flink SQL" in found[0] and "Spark's date_trunc." in found[1]
    assert {"CEILING", "TRANSLATE"} <= flink_functions()
    assert _diagnostics(tmp_path, in_view="CAST(CEILING(id) AS STRING)", in_insert="TRANSLATE(name, 'a', 'b')") == []


def test_flinks_function_named_in_place_of_a_spark_one_is_flinks_and_the_spark_one_is_not() -> None:
    # flink_functions.txt is what Flink's validator resolves (`make flink-functions`)
    assert {"SPLIT", "IFNULL", "LISTAGG", "CHAR_LENGTH"} <= flink_functions()
    assert not {"NVL", "LEN", "LENGTH", "SIZE", "LOWERCASE"} & flink_functions()
    for spark_name, flink_name in FLINK_INSTEAD.items():
        assert spark_name not in flink_functions() and spark_name in spark_functions(), spark_name
        assert flink_name in flink_functions(), flink_name


def test_a_call_with_more_or_fewer_arguments_than_flinks_function_takes_is_an_error_at_the_call(tmp_path: Path) -> None:
    """Flink refuses SHA2(x) ("Invalid number of arguments to function 'SHA2'. Was expecting 2 arguments"); kafka-sql
    says so at the call, with the counts Flink's validator checks (flink_functions.txt), where Spark failed the run at
    start without a file position, or sqlglot's node said "the statement is incomplete"."""
    cases = {
        "SHA2(name)": "Flink's SHA2 takes 2 arguments, the call gives 1.",
        "UPPER(name, name)": "Flink's UPPER takes 1 argument, the call gives 2.",
        "DATE_FORMAT(name)": "Flink's DATE_FORMAT takes 2 arguments, the call gives 1.",
        "IF(id > 1, name)": "Flink's IF takes 3 arguments, the call gives 2.",
        "SUBSTRING(name)": "Flink's SUBSTRING takes 2 to 3 arguments, the call gives 1.",
        "CONCAT()": "Flink's CONCAT takes at least 1 argument, the call gives 0.",
        "INSTR(name)": "Flink's INSTR takes 2 to 4 arguments, the call gives 1.",  # a call the transpiler rewrites
    }
    for call, counts in cases.items():
        (found,) = _errors(tmp_path, in_insert=call)
        name = call.split("(")[0]
        assert found == f"4:31 error argument-count: Invalid number of arguments to function '{name}': {counts}", call
    (nested,) = _errors(tmp_path, in_view="UPPER(SHA2(name))")
    assert nested.startswith("3:35 error argument-count: Invalid number of arguments to function 'SHA2'")
    # a pipeline's own function of a built-in's name is called as it declares
    (tmp_path / "hashing.py").write_text("def sha2(text: str) -> str:\n    return text\n")
    declared = "CREATE FUNCTION sha2 AS 'hashing.sha2' LANGUAGE PYTHON;\n"
    assert _errors(tmp_path, declared=declared, in_view="SHA2(name)") == []


def test_calls_whose_grammar_flink_parses_into_other_operands_are_not_counted(tmp_path: Path) -> None:
    """TRIM(s) is TRIM(BOTH ' ' FROM s) to Flink's parser, JSON_QUERY(s, p) gets its ON EMPTY / ON ERROR operands:
    `make flink-functions` records no count for such functions, and every way of writing them stays valid."""
    written = (
        "TRIM(name)", "TRIM(BOTH 'x' FROM name)", "JSON_QUERY(name, '$.a')", "JSON_VALUE(name, '$.a')",
        "OVERLAY(name PLACING 'x' FROM 2)", "CAST(POSITION('a' IN name) AS STRING)", "SUBSTRING(name FROM 2 FOR 1)",
        "SUBSTRING(name, 2)", "CAST(EXTRACT(DAY FROM CURRENT_DATE) AS STRING)", "CAST(FLOOR(1.5) AS STRING)",
    )  # fmt: skip
    for call in written:
        assert _errors(tmp_path, in_insert=call) == [], call
    listed = FLINK_FUNCTIONS_FILE.read_text().splitlines()
    assert "TRIM" in listed and "JSON_QUERY" in listed and "SUBSTRING 2 3" in listed


def test_flinks_functions_written_without_parentheses_are_calls_not_columns(tmp_path: Path) -> None:
    """Flink 2.3 runs SELECT LOCALTIMESTAMP, LOCALTIME, PI FROM t (checked with PyFlink); sqlglot reads the bare
    words as column references, which `validate` took for columns the table lacks."""
    for written in ("CAST(LOCALTIMESTAMP AS STRING)", "CAST(ROUND(PI, 2) AS STRING)", "CAST(LOCALTIME AS STRING)"):
        assert _errors(tmp_path, in_insert=written) == [], written
    (unknown,) = _errors(tmp_path, in_insert="CAST(LOCALTIMESTAMPS AS STRING)")
    assert unknown.startswith("4:36 error unknown-column: Column 'LOCALTIMESTAMPS' not found")
