"""Script parsing: statements with their positions, statement sets kept whole, and syntax errors reported
at the line and column of the offending token."""

from __future__ import annotations

import time

import pytest
from sqlglot import exp

from connector.diagnostics import Diagnostic, PipelineError
from connector.sql.dialect.expressions import StatementSet
from connector.sql.dialect.script import ParsedStatement, node_position, parse_script
from connector.sql.dialect.statements import setting_of, table_option_hints

SCRIPT = """-- Orders pipeline
SET 'execution.checkpointing.interval' = '10s';
SET pipeline.name = orders job;

CREATE TABLE orders (
  id BIGINT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH (
  'connector' = 'kafka',
  'topic' = 'orders'
);

  INSERT INTO sink
  SELECT id FROM orders /*+ OPTIONS('scan.startup.mode' = 'earliest-offset') */ WHERE id > 10;

BEGIN STATEMENT SET;
INSERT INTO a SELECT * FROM orders;
INSERT INTO b SELECT * FROM orders;
END;

EXECUTE STATEMENT SET
BEGIN
  INSERT INTO a SELECT * FROM orders;
  INSERT INTO b SELECT * FROM orders;
END;
"""


def error_of(sql: str) -> list[Diagnostic]:
    with pytest.raises(PipelineError) as info:
        parse_script(sql, "pipeline.sql")
    return info.value.diagnostics


def test_statements_know_where_they_start() -> None:
    statements = parse_script(SCRIPT, "pipeline.sql")
    assert [(s.line, s.column, type(s.expression).__name__) for s in statements] == [
        (2, 1, "Set"),
        (3, 1, "Set"),
        (5, 1, "Create"),
        (14, 3, "Insert"),
        (17, 1, "StatementSet"),
        (22, 1, "StatementSet"),
    ]
    assert statements[0].text == "SET 'execution.checkpointing.interval' = '10s'"
    assert statements[2].text.startswith("CREATE TABLE orders (\n") and statements[2].text.endswith("\n)")
    assert statements[4].text.endswith("INSERT INTO b SELECT * FROM orders;\nEND")
    assert setting_of(statements[1].expression) == ("pipeline.name", "orders job")


def test_both_statement_set_forms_give_the_same_tree() -> None:
    statements = parse_script(SCRIPT)
    legacy, modern = statements[4].expression, statements[5].expression
    assert isinstance(legacy, StatementSet)
    assert legacy == modern
    assert [insert.this.name for insert in legacy.expressions] == ["a", "b"]


def test_a_case_expression_does_not_close_a_statement_set() -> None:
    (statement,) = parse_script(
        "BEGIN STATEMENT SET;\n"
        "INSERT INTO a SELECT CASE WHEN x > 1 THEN 'big' ELSE 'small' END;\n"
        "INSERT INTO b SELECT x FROM t;\n"
        "END;"
    )
    assert isinstance(statement.expression, StatementSet)
    assert len(statement.expression.expressions) == 2


def test_generated_script_parses_back_to_the_same_statements() -> None:
    statements = parse_script(SCRIPT)
    generated = ";\n".join(s.expression.sql(dialect="flink", pretty=True) for s in statements)
    assert [s.expression for s in parse_script(generated)] == [s.expression for s in statements]


def test_empty_and_comment_only_scripts_have_no_statements() -> None:
    assert parse_script("") == []
    assert parse_script("-- nothing\n/* at all */\n;;\n") == []


def test_node_position_points_at_the_first_token_of_a_node() -> None:
    statements = parse_script(SCRIPT)
    create = statements[2].expression
    options = [p for p in create.args["properties"].expressions if type(p) is exp.Property]
    assert node_position(options[1], SCRIPT) == (11, 3)
    assert node_position(options[1].args["value"], SCRIPT) == (11, 13)
    watermark = create.find(exp.WatermarkColumnConstraint)
    assert watermark is not None
    assert node_position(watermark.expression, SCRIPT) == (8, 23)

    insert = statements[3].expression
    where = insert.find(exp.Where)
    assert where is not None
    assert node_position(where.this, SCRIPT) == (15, 87)
    table = insert.expression.args["from_"].this
    assert table_option_hints(table) == {"scan.startup.mode": "earliest-offset"}
    (hint,) = table.args["hints"]
    assert node_position(hint.expressions[0].expression, SCRIPT) == (15, 59)

    assert node_position(exp.Literal.string("synthetic"), SCRIPT) is None


def test_position_of_a_missing_parenthesis() -> None:
    (diagnostic,) = error_of("SELECT *\nFROM t\nWHERE (a = 1\n  AND b = 2;")
    assert (diagnostic.file, diagnostic.line, diagnostic.column) == ("pipeline.sql", 4, 12)
    assert diagnostic.severity == "error" and diagnostic.code == "syntax"
    assert diagnostic.message == "Unexpected end of statement, expected )"


def test_position_of_an_unknown_type() -> None:
    (diagnostic,) = error_of("CREATE TABLE t (\n  a INT,\n  b VARCHAR(10),\n  c STRNG\n) WITH ('k' = 'v');")
    assert (diagnostic.line, diagnostic.column) == (4, 5)
    assert "'STRNG'" in diagnostic.message


def test_position_of_a_bad_option() -> None:
    (diagnostic,) = error_of("CREATE TABLE t (a INT)\nWITH (\n  'connector' = 'kafka',\n  topic = 'x'\n);")
    assert (diagnostic.line, diagnostic.column) == (4, 3)
    assert diagnostic.message == "Unexpected 'topic', expected a quoted option key, e.g. 'connector'"


def test_position_of_a_misspelt_statement_keyword() -> None:
    (diagnostic,) = error_of("SET 'a' = 'b';\n\n   INSRT INTO t SELECT 1;")
    assert (diagnostic.line, diagnostic.column) == (3, 4)
    assert "Did you mean 'INSERT'?" in diagnostic.message


def test_every_broken_statement_is_reported() -> None:
    diagnostics = error_of("SELECT 1 FROM;\nSELECT 2;\nCREATE TABLE t (a INT) WITH ('k' = );\n")
    assert [(d.line, d.column) for d in diagnostics] == [(1, 14), (3, 36)]
    assert diagnostics[1].message == "Unexpected ')', expected a quoted option value, e.g. 'kafka'"


def test_position_inside_a_statement_set() -> None:
    (diagnostic,) = error_of("EXECUTE STATEMENT SET\nBEGIN\n  INSERT INTO a SELECT 1;\n  SELECT 2;\nEND;")
    assert (diagnostic.line, diagnostic.column) == (4, 3)
    assert diagnostic.message == "Unexpected 'SELECT', expected INSERT or END in a statement set"


def test_unclosed_statement_set() -> None:
    (diagnostic,) = error_of("BEGIN STATEMENT SET;\nINSERT INTO a SELECT 1;\n")
    assert (diagnostic.line, diagnostic.column) == (2, 23)
    assert diagnostic.message == "Unexpected end of statement, expected END to close the statement set"


def test_unterminated_string_is_a_syntax_diagnostic() -> None:
    (diagnostic,) = error_of("SET 'a' = 'b';\nSELECT 'oops\nFROM t;")
    assert (diagnostic.line, diagnostic.column, diagnostic.code) == (2, 8, "syntax")
    assert diagnostic.message == "Unterminated string literal: missing closing '"


def test_unterminated_identifier_is_a_syntax_diagnostic() -> None:
    (diagnostic,) = error_of("SELECT `a FROM t")
    assert (diagnostic.line, diagnostic.column) == (1, 8)
    assert "missing closing `" in diagnostic.message


def test_two_hundred_statements_parse_quickly() -> None:
    statement = (
        "INSERT INTO sink SELECT window_start, id, COUNT(*) FROM TABLE(TUMBLE(TABLE orders, "
        "DESCRIPTOR(ts), INTERVAL '1' MINUTE)) WHERE id > 1 GROUP BY window_start, window_end, id;\n"
    )
    script = SCRIPT + statement * 194
    started = time.perf_counter()
    statements = parse_script(script)
    elapsed = time.perf_counter() - started
    assert len(statements) == 200
    assert all(isinstance(s, ParsedStatement) for s in statements)
    assert elapsed < 1.0


def test_unterminated_comment_is_a_syntax_diagnostic() -> None:
    (diagnostic,) = error_of("SELECT 1;\nSELECT 2 /* never closed\n;")
    assert (diagnostic.line, diagnostic.column) == (2, 10)
    assert diagnostic.message == "Unterminated comment: missing closing */"


def test_double_quotes_get_a_hint() -> None:
    (diagnostic,) = error_of('SELECT "name" FROM t')
    assert (diagnostic.line, diagnostic.column) == (1, 8)
    assert "quotes strings with '...' and identifiers with `...`" in diagnostic.message


def test_position_of_an_incomplete_watermark() -> None:
    (diagnostic,) = error_of("CREATE TABLE t (\n  ts TIMESTAMP(3),\n  WATERMARK FOR ts\n) WITH ('k' = 'v')")
    assert (diagnostic.line, diagnostic.column) == (4, 1)
    assert diagnostic.message == "Unexpected ')', expected AS followed by the watermark expression"


def test_window_function_position_is_its_name() -> None:
    sql = "SELECT *\nFROM TABLE(\n  HOP(TABLE t, DESCRIPTOR(ts), INTERVAL '1' SECOND, INTERVAL '1' MINUTE))"
    (statement,) = parse_script(sql)
    tvf = statement.expression.args["from_"].this
    assert node_position(tvf, sql) == (3, 3)
