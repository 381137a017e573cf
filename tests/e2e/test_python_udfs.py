"""Python functions declared as Flink SQL declares them (`CREATE FUNCTION ... LANGUAGE PYTHON`): called per row
in a real pipeline, typed by annotation or `@connector.udf`, table functions joined with LATERAL TABLE, and refused
with located errors when they cannot run."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from support.commands import run
from support.topics import read_topic

from connector.entrypoints import cli

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

MODULE = """
from collections.abc import Iterator
from decimal import Decimal

import connector


def twice(value: int) -> int:
    return None if value is None else 2 * value


@connector.udf(result_type="DECIMAL(10, 2)")
def with_tax(amount):
    return None if amount is None else amount * Decimal("1.2")


def shout(text: str | None) -> str | None:
    return None if text is None else text.upper() + "!"


def untyped(value):
    return value


def words(text: str | None) -> Iterator[tuple[str, int]]:
    for word in (text or "").split():
        yield word, len(word)


@connector.udtf(result_types="STRING")
def letters(text):
    yield from (text or "")[:2]


def untyped_rows(text) -> Iterator:
    yield text


def inverse(value: int) -> float:
    return 1 / value


def inverses(value: int) -> Iterator[float]:
    yield 1 / value
"""

PIPELINE = """
CREATE TEMPORARY FUNCTION twice AS 'pricing.twice' LANGUAGE PYTHON;
CREATE FUNCTION with_tax AS 'pricing.with_tax' LANGUAGE PYTHON;
CREATE TEMPORARY SYSTEM FUNCTION IF NOT EXISTS shout AS 'pricing.shout' LANGUAGE PYTHON;
CREATE TABLE orders (id BIGINT, name STRING, amount DECIMAL(10, 2)) WITH (
  'connector' = 'kafka', 'topic' = '{{ var("src") }}', 'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', 'format' = 'json'
);
CREATE TABLE priced (id BIGINT, doubled BIGINT, name STRING, gross DECIMAL(10, 2)) WITH (
  'connector' = 'kafka', 'topic' = '{{ var("dst") }}', 'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);
INSERT INTO priced SELECT id, twice(id), shout(name), with_tax(amount) FROM orders WHERE twice(id) > 2;
"""


@pytest.mark.slow
def test_python_functions_run_per_row_in_a_pipeline(
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Callable[[str, Sequence[Any]], None],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "pricing.py").write_text(MODULE)
    (tmp_path / "priced.sql").write_text(PIPELINE)
    src, dst = topic_factory(), topic_factory()
    orders = [{"id": 1, "name": "a", "amount": 10}, {"id": 2, "name": "b", "amount": 2.5}, {"id": 3}]
    produce(src, [(None, json.dumps(o).encode(), None, None, None) for o in orders])

    result = run(capsys, tmp_path / "priced.sql", tmp_path / "cp", brokers=kafka_bootstrap, src=src, dst=dst)

    assert result.code == 0, result.err
    assert read_topic(kafka_bootstrap, dst) == [
        {"id": 2, "doubled": 4, "name": "B!", "gross": 3.0},
        {"id": 3, "doubled": 6, "name": None, "gross": None},
    ]


TABLE_FUNCTIONS = """
CREATE FUNCTION words AS 'pricing.words' LANGUAGE PYTHON;
CREATE FUNCTION letters AS 'pricing.letters' LANGUAGE PYTHON;
CREATE TABLE notes (id BIGINT, text STRING) WITH (
  'connector' = 'kafka', 'topic' = '{{ var("src") }}', 'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', 'format' = 'json'
);
CREATE TABLE note_words (id BIGINT, word STRING, size BIGINT) WITH (
  'connector' = 'kafka', 'topic' = '{{ var("words") }}', 'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);
CREATE TABLE note_letters (id BIGINT, letter STRING) WITH (
  'connector' = 'kafka', 'topic' = '{{ var("letters") }}', 'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);
EXECUTE STATEMENT SET BEGIN
INSERT INTO note_words SELECT n.id, w.word, w.size FROM notes AS n, LATERAL TABLE(words(n.text)) AS w(word, size);
INSERT INTO note_letters SELECT n.id, l.f0 FROM notes AS n LEFT JOIN LATERAL TABLE(letters(n.text)) AS l ON TRUE;
END;
"""


@pytest.mark.slow
def test_table_functions_join_each_row_with_the_rows_they_yield(
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Callable[[str, Sequence[Any]], None],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Flink's LATERAL TABLE: a comma join drops a row its function yields nothing for; LEFT JOIN ... ON TRUE keeps
    it, padded with NULLs. Columns are named by the alias, or f0, f1, ... as in Flink."""

    (tmp_path / "pricing.py").write_text(MODULE)
    (tmp_path / "notes.sql").write_text(TABLE_FUNCTIONS)
    src, words, letters = topic_factory(), topic_factory(), topic_factory()
    notes = [{"id": 1, "text": "hi there"}, {"id": 2, "text": ""}, {"id": 3}]
    produce(src, [(None, json.dumps(n).encode(), None, None, None) for n in notes])

    result = run(
        capsys, tmp_path / "notes.sql", tmp_path / "cp", brokers=kafka_bootstrap, src=src, words=words, letters=letters
    )

    assert result.code == 0, result.err
    assert read_topic(kafka_bootstrap, words) == [
        {"id": 1, "word": "hi", "size": 2}, {"id": 1, "word": "there", "size": 5},
    ]  # fmt: skip
    assert read_topic(kafka_bootstrap, letters) == [
        {"id": 1, "letter": "h"}, {"id": 1, "letter": "i"}, {"id": 2, "letter": None}, {"id": 3, "letter": None},
    ]  # fmt: skip


FAILING = """
CREATE FUNCTION inverse AS 'pricing.inverse' LANGUAGE PYTHON;
CREATE TABLE t (k STRING, id BIGINT) WITH (
  'connector' = 'kafka', 'topic' = '{{ var("src") }}', 'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', 'format' = 'json'
);
CREATE TABLE o (k STRING, inv DOUBLE) WITH ('connector' = 'print');
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("function", "statements"),
    [
        ("inverse", "INSERT INTO o SELECT k, inverse(id) FROM t WHERE id < 10;"),
        ("inverse", "CREATE VIEW s AS SELECT k, SUM(inverse(id)) AS inv FROM t GROUP BY k;\n"
         "INSERT INTO o SELECT * FROM s;"),
        ("inverses", "CREATE FUNCTION inverses AS 'pricing.inverses' LANGUAGE PYTHON;\n"
         "INSERT INTO o SELECT t.k, i.v FROM t, LATERAL TABLE(inverses(t.id)) AS i(v);"),
    ],
    ids=["projection", "aggregate-in-view", "table-function"],
)
def test_a_failing_function_names_the_call_and_the_record_it_failed_on(
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Callable[[str, Sequence[Any]], None],
    function: str,
    statements: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "pricing.py").write_text(MODULE)
    (tmp_path / "inverse.sql").write_text(FAILING + statements)
    src = topic_factory(partitions=2)
    rows = [("a", 4, 0), ("b", 2, 1), ("b", 5, 1), ("b", 0, 1), ("a", 8, 0)]
    produce(src, [(None, json.dumps({"k": k, "id": i}).encode(), p, None, None) for k, i, p in rows])

    result = run(capsys, tmp_path / "inverse.sql", tmp_path / "cp", brokers=kafka_bootstrap, src=src)

    assert result.code != 0
    assert (
        f"Python function '{function}' failed on (0) for the record at topic '{src}', partition 1, offset 2: "
        "ZeroDivisionError: division by zero" in result.err
    )


@pytest.mark.parametrize(
    ("query", "located"),
    [
        ("SELECT *, f(id) FROM t WHERE f(id) > 1",
         "SELECT `t`.`id`, `t`.`name`, __F_AT_ROW(id, `t`.`__topic`, `t`.`__partition`, `t`.`__offset`) "
         "AS `F(id)` FROM `__dq_t` AS `t` WHERE __F_AT_ROW(id, `t`.`__topic`, `t`.`__partition`, `t`.`__offset`) > 1"),
        ("SELECT name, SUM(f(id)) AS s, f(name) AS g FROM t AS x GROUP BY name",
         "SELECT name, SUM(__F_AT_ROW(id, `x`.`__topic`, `x`.`__partition`, `x`.`__offset`)) AS s, F(name) AS g "
         "FROM `__dq_t` AS x GROUP BY name"),
        ("SELECT f(id) AS v, `t`.`__offset` FROM `__dq_t` AS `t`",  # a gated query's, already with its position
         "SELECT __F_AT_ROW(id, `t`.`__topic`, `t`.`__partition`, `t`.`__offset`) AS v, `t`.`__offset` "
         "FROM `__dq_t` AS `t`"),
        ("SELECT t.id, w.a FROM t, LATERAL f(t.id) AS w(a)",
         "SELECT t.id, w.a FROM `__dq_t` AS `t` CROSS JOIN LATERAL __F_AT_ROW(t.id, `t`.`__topic`, `t`.`__partition`, "
         "`t`.`__offset`) AS w(a)"),
        ("SELECT a.id, f(b.id) FROM t AS a JOIN t AS b ON a.id = b.id", None),
        ("SELECT f(x) FROM (SELECT id AS x FROM t)", None),
    ],
    ids=["projection", "aggregate-argument", "gated", "lateral", "join", "not-a-source"],
)
def test_function_calls_on_one_source_s_rows_get_the_row_s_position(query: str, located: str | None) -> None:
    from connector.quality.provenance import with_located_calls

    assert with_located_calls(query, {"t": ["id", "name"]}, {"f": "__f_at_row"}) == (located or query)


@pytest.mark.parametrize(
    ("query", "code", "message"),
    [
        ("SELECT n.id, w.f0 FROM notes AS n, LATERAL TABLE(twice(n.id)) AS w", "unknown-function",
         "LATERAL TABLE needs a table function: 'twice' is not one"),
        ("SELECT n.id, w.f0 FROM notes AS n, LATERAL TABLE(UPPER(n.text)) AS w", "unknown-function",
         "LATERAL TABLE needs a table function: 'UPPER' is not one"),
        ("SELECT n.id, w.f0 FROM notes AS n, LATERAL TABLE(split_words(n.text)) AS w", "unknown-function",
         "No match found for function 'split_words'"),
        ("SELECT n.id, w.a FROM notes AS n, LATERAL TABLE(words(n.text)) AS w(a)", "invalid-alias",
         "table function 'words' has 2 columns (f0, f1), whereas the alias list has 1"),
        ("SELECT n.id, w.f2 FROM notes AS n, LATERAL TABLE(words(n.text)) AS w", "unknown-column",
         "Column 'f2' not found in 'w'."),
        ("SELECT id, CAST(twice(text) AS STRING) FROM notes", "invalid-call",
         "Invalid function call: twice(STRING): argument 1 is STRING, but parameter 'value' of Python function "
         "'pricing.twice' takes BIGINT (its annotation). Add a CAST."),
        ("SELECT id, CAST(twice(id, 2) AS STRING) FROM notes", "invalid-call",
         "Invalid function call: twice(BIGINT, INT): Python function 'pricing.twice' takes 1 argument (value), the "
         "call gives 2."),
        ("SELECT n.id, w.f0 FROM notes AS n, LATERAL TABLE(words()) AS w", "invalid-call",
         "Python function 'pricing.words' takes 1 argument (text), the call gives 0."),
        ("SELECT id, twice(id) FROM notes", "insert-types",
         "the query gives BIGINT ('EXPR$1'), the sink expects STRING"),
    ],
    ids=["scalar-function", "built-in-function", "undeclared-function", "alias-degree", "default-names",
         "argument-type", "argument-count", "table-function-count",
         "result-type"],
)
def test_function_call_mistakes_are_reported_by_validate(
    query: str, code: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pricing.py").write_text(MODULE)
    path = tmp_path / "lateral.sql"
    path.write_text(
        "CREATE FUNCTION words AS 'pricing.words' LANGUAGE PYTHON;\n"
        "CREATE FUNCTION twice AS 'pricing.twice' LANGUAGE PYTHON;\n"
        "CREATE TABLE notes (id BIGINT, text STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '1');\n"
        "CREATE TABLE output (id BIGINT, x STRING) WITH ('connector' = 'print');\n"
        f"INSERT INTO output {query};\n"
    )

    assert cli.main(["validate", str(path), "--format", "json"]) == 1

    errors = [d for d in json.loads(capsys.readouterr().out)["diagnostics"] if d["severity"] == "error"]
    assert [d["code"] for d in errors] == [code], errors
    assert message in errors[0]["message"]


@pytest.mark.parametrize(
    ("declaration", "message"),
    [
        ("CREATE FUNCTION f AS 'nowhere.f' LANGUAGE PYTHON", "Python module 'nowhere' cannot be imported"),
        ("CREATE FUNCTION f AS 'pricing.missing' LANGUAGE PYTHON", "Python module 'pricing' has no function 'missing'"),
        ("CREATE FUNCTION f AS 'pricing.untyped' LANGUAGE PYTHON", "has no result type: annotate its return"),
        ("CREATE FUNCTION f AS 'pricing.untyped_rows' LANGUAGE PYTHON", "table function 'untyped_rows' has no column"),
        ("CREATE FUNCTION f AS 'com.acme.Upper'", "Function 'f' is written in Java: kafka-sql runs Python functions"),
        ("CREATE FUNCTION f AS 'com.acme.Upper' LANGUAGE SCALA", "Function 'f' is written in Scala"),
    ],
)
def test_functions_that_cannot_run_are_refused_where_declared(
    declaration: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pricing.py").write_text(MODULE)
    path = tmp_path / "bad.sql"
    path.write_text(f"-- a function\n{declaration};\n")

    code = cli.main(["validate", str(path), "--format", "json"])

    diagnostics = json.loads(capsys.readouterr().out)["diagnostics"]
    assert code == 1
    assert [(d["line"], d["column"]) for d in diagnostics] == [(2, 1)]
    assert message in diagnostics[0]["message"], diagnostics
