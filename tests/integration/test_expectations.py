"""Declaring data-quality expectations: the EXPECT constraint in the Flink dialect, suite files, the clear errors
`kafka-sql validate` gives for bad definitions, and verdicts equal to those of plain great-expectations run on
the same Spark DataFrame."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import sqlglot
from sqlglot.errors import ParseError

from connector.catalog.loader import load_text
from connector.diagnostics import PipelineError
from connector.entrypoints.cli import main
from connector.quality import expectations
from connector.quality.gate import QualityGate
from connector.quality.rules import COLUMN_VALUE_TYPES, INLINE_TYPE, Rule
from connector.quality.suite import gx_context as ephemeral_context
from connector.sql.dialect.expressions import ExpectConstraint

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

# ---------------------------------------------------------------------------------------------------------
# Syntax
# ---------------------------------------------------------------------------------------------------------

EXPECTING = """CREATE TABLE t (
  id BIGINT CONSTRAINT id_positive EXPECT (id > 0) ON VIOLATION FAIL UPDATE,
  amount DOUBLE,
  country STRING,
  CONSTRAINT amount_known EXPECT (amount IS NOT NULL),
  CONSTRAINT amount_range EXPECT (amount BETWEEN 0 AND 1000) ON VIOLATION DROP ROW,
  CONSTRAINT eu EXPECT (country IN ('DE', 'FR') OR REGEXP(country, '^E')) ON VIOLATION QUARANTINE,
  CONSTRAINT pk PRIMARY KEY (id) NOT ENFORCED
) WITH ('connector' = 'print')"""


def test_expect_constraints_parse_and_generate_back() -> None:
    tree = sqlglot.parse_one(EXPECTING, read="flink")
    generated = tree.sql(dialect="flink")
    assert sqlglot.parse_one(generated, read="flink") == tree
    assert sqlglot.parse_one(tree.sql(dialect="flink", pretty=True), read="flink") == tree
    found = [(c.name, c.args.get("on_violation")) for c in tree.find_all(ExpectConstraint) if c.this is not None]
    assert found == [("amount_known", None), ("amount_range", "DROP ROW"), ("eu", "QUARANTINE")]
    assert "CONSTRAINT amount_range EXPECT (amount BETWEEN 0 AND 1000) ON VIOLATION DROP ROW" in generated
    assert "id BIGINT CONSTRAINT id_positive EXPECT (id > 0) ON VIOLATION FAIL UPDATE" in generated


def test_a_column_named_expect_is_still_a_column() -> None:
    table = load_text("CREATE TABLE t (expect INT, x INT) WITH ('connector' = 'print');", "t.sql").pipeline.table("t")
    assert table is not None
    assert [c.name for c in table.columns] == ["expect", "x"]


@pytest.mark.parametrize(
    ("element", "message"),
    [
        ("EXPECT (id > 0)", "An expectation needs a name: CONSTRAINT <name> EXPECT (<predicate>)"),
        ("CONSTRAINT c EXPECT (id > 0) ON VIOLATION DROP", "Expected FAIL UPDATE, DROP ROW or QUARANTINE"),
        ("CONSTRAINT c EXPECT id > 0", "Expected PRIMARY KEY (...) or EXPECT (<predicate>)"),
        ("CONSTRAINT c CHECK (id > 0)", "Expected PRIMARY KEY (...) or EXPECT (<predicate>)"),
    ],
)
def test_malformed_expect_constraints_are_syntax_errors(element: str, message: str) -> None:
    with pytest.raises(ParseError, match=message.replace("(", r"\(").replace(")", r"\)")):
        sqlglot.parse_one(f"CREATE TABLE t (id INT, {element}) WITH ('connector' = 'print')", read="flink")


def test_loader_records_expectations_in_order_with_their_action() -> None:
    table = load_text(EXPECTING + ";", "t.sql").pipeline.table("t")
    assert table is not None
    assert [(e.name, e.on_violation, e.position.line) for e in table.expectations] == [
        ("id_positive", "FAIL UPDATE", 2),
        ("amount_known", None, 5),
        ("amount_range", "DROP ROW", 6),
        ("eu", "QUARANTINE", 7),
    ]
    assert table.primary_key == ["id"]


def test_like_inherits_expectations_with_constraints() -> None:
    sql = (
        "CREATE TABLE a (id INT, CONSTRAINT positive EXPECT (id > 0)) WITH ('connector' = 'print');\n"
        "CREATE TABLE b (CONSTRAINT small EXPECT (id < 10)) LIKE a;\n"
        "CREATE TABLE c WITH ('connector' = 'blackhole') LIKE a (EXCLUDING CONSTRAINTS);\n"
    )
    pipeline = load_text(sql, "t.sql").pipeline
    assert [e.name for e in pipeline.tables["b"].expectations] == ["positive", "small"]
    assert pipeline.tables["c"].expectations == []


def test_duplicate_and_unnamed_column_expectations_are_errors() -> None:
    with pytest.raises(PipelineError) as error:
        load_text(
            "CREATE TABLE t (id INT EXPECT (id > 0), CONSTRAINT c EXPECT (id > 1), CONSTRAINT C EXPECT (id > 2)) "
            "WITH ('connector' = 'print');",
            "t.sql",
        )
    messages = [d.message for d in error.value.diagnostics]
    assert "An expectation needs a name: CONSTRAINT <name> EXPECT (<predicate>)." in messages
    assert "Expectation 'C' is declared twice in 't'." in messages


# ---------------------------------------------------------------------------------------------------------
# kafka-sql validate
# ---------------------------------------------------------------------------------------------------------

SOURCE = """CREATE TABLE orders (id BIGINT, amount DOUBLE, country STRING) WITH (
  'connector' = 'kafka', 'topic' = 'orders', 'properties.bootstrap.servers' = 'localhost:9092',
  'scan.startup.mode' = 'earliest-offset', 'format' = 'json');
"""


def validate(tmp_path: Path, capsys: pytest.CaptureFixture[str], sql: str, suite: Any = None) -> list[dict[str, Any]]:
    if suite is not None:
        (tmp_path / "suite.json").write_text(suite if isinstance(suite, str) else json.dumps(suite))
    (tmp_path / "p.sql").write_text(SOURCE + sql)
    capsys.readouterr()
    main(["validate", str(tmp_path / "p.sql"), "--format", "json"])
    found: list[dict[str, Any]] = json.loads(capsys.readouterr().out)["diagnostics"]
    return found


def errors(diagnostics: list[dict[str, Any]]) -> list[tuple[int, int, str, str]]:
    return [(d["line"], d["column"], d["code"], d["message"]) for d in diagnostics if d["severity"] == "error"]


def sink(constraints: str = "", options: str = "") -> str:
    return (
        f"CREATE TABLE clean (id BIGINT, amount DOUBLE, country STRING{constraints})\n"
        f"  WITH ('connector' = 'print'{options});\n"
        "INSERT INTO clean SELECT * FROM orders;\n"
    )


def test_a_valid_gate_validates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = {"name": "s", "expectations": [{"type": "expect_column_values_to_not_be_null", "kwargs": {"column": "id"}}]}
    sql = (
        sink(
            ", CONSTRAINT eu EXPECT (country IN ('DE', 'FR')) ON VIOLATION QUARANTINE",
            ", 'quality.suite' = 'suite.json', 'quality.on-failure' = 'drop', 'quality.quarantine.table' = 'dlq'",
        )
        + "CREATE TABLE dlq (id BIGINT, failed_expectations STRING, source_offset BIGINT) WITH ('connector' = 'print');"
    )
    assert validate(tmp_path, capsys, sql, suite) == []


def test_predicate_errors_point_at_the_offending_part(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sql = sink(
        ",\n  CONSTRAINT eu EXPECT (contry IN ('DE'))"
        ",\n  CONSTRAINT many EXPECT (COUNT(*) > 1)"
        ",\n  CONSTRAINT other EXPECT (orders.id > 1)"
    )
    assert errors(validate(tmp_path, capsys, sql)) == [
        (
            5,
            25,
            "expectation",
            "Expectation 'eu': column 'contry' is not a written column of the table. Did you mean 'country'? "
            "Columns: id, amount, country.",
        ),
        (
            6,
            27,
            "expectation",
            "Expectation 'many': an EXPECT predicate is checked on each row and cannot aggregate; use a suite "
            "expectation (row count, uniqueness, min / max / mean) for batch-level checks.",
        ),
        (
            7,
            28,
            "expectation",
            "Expectation 'other': 'orders.id': refer to the table's columns without a qualifier.",
        ),
    ]


@pytest.mark.parametrize(
    ("suite", "message"),
    [
        (None, "Suite file 'suite.json': no such file"),
        ("{oops", "Suite file 'suite.json': is not valid JSON"),
        (
            {"name": "s"},
            'Suite file \'suite.json\': expected a great-expectations suite: {"name": ..., "expectations": [...]}.',
        ),
        (
            {"expectations": [{"type": "expect_column_values_to_be_in_sett", "kwargs": {"column": "id"}}]},
            "Suite file 'suite.json', expectation 1: 'expect_column_values_to_be_in_sett' cannot be checked by the "
            "micro-batch gate. Did you mean 'expect_column_values_to_be_in_set'? Supported: ",
        ),
        (
            {"expectations": [{"type": "expect_column_values_to_not_be_null", "kwargs": {"column": "amont"}}]},
            "Suite file 'suite.json', expectation 1: column 'amont' is not a written column of the table. Did you "
            "mean 'amount'? Columns: id, amount, country.",
        ),
        (
            {
                "expectations": [
                    {
                        "type": "expect_column_values_to_be_between",
                        "kwargs": {"column": "id", "min_value": 5, "max_value": 1},
                    }
                ]
            },
            "Suite file 'suite.json', expectation 1: 'min_value' (5) is greater than 'max_value' (1).",
        ),
        (
            {
                "expectations": [
                    {"type": "expect_column_values_to_be_of_type", "kwargs": {"column": "id", "type_": "Long"}}
                ]
            },
            "Suite file 'suite.json', expectation 1: 'type_' must name a Spark type, e.g. LongType or StringType, "
            "not 'Long'. Did you mean 'LongType'?",
        ),
        (
            {
                "expectations": [
                    {
                        "type": "expect_column_values_to_not_be_null",
                        "kwargs": {"column": "id", "row_condition": "id > 1"},
                    }
                ]
            },
            "Suite file 'suite.json', expectation 1: 'row_condition' is not supported by the micro-batch gate",
        ),
        (
            {
                "expectations": [
                    {"type": "expect_column_values_to_not_be_null", "kwargs": {"column": "id", "mostly": 1.5}}
                ]
            },
            "Suite file 'suite.json', expectation 1: 'mostly': ensure this value is less than or equal to 1.0.",
        ),
        (
            {
                "expectations": [
                    {
                        "type": "expect_column_mean_to_be_between",
                        "kwargs": {"column": "id", "min_value": 0, "mostly": 0.5},
                    }
                ]
            },
            "Suite file 'suite.json', expectation 1: 'mostly' is not a parameter of this expectation.",
        ),
        (
            {"expectations": [{"type": "expect_column_values_to_be_in_set", "kwargs": {"column": "id"}}]},
            "Suite file 'suite.json', expectation 1: 'value_set': field required.",
        ),
    ],
)
def test_suite_file_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str], suite: Any, message: str) -> None:
    found = errors(validate(tmp_path, capsys, sink(options=", 'quality.suite' = 'suite.json'"), suite))
    assert len(found) == 1
    line, column, code, text = found[0]
    assert (line, column, code) == (5, 32, "expectation-suite")  # at the 'quality.suite' option
    assert text.startswith(message)


def test_quarantine_target_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    quarantining = ",\n  CONSTRAINT eu EXPECT (country IN ('DE')) ON VIOLATION QUARANTINE"
    assert errors(validate(tmp_path, capsys, sink(quarantining))) == [
        (
            5,
            14,
            "quarantine",
            "Expectation 'eu' of 'clean' quarantines rows, but the table sets no 'quality.quarantine.table': name "
            "a table of this pipeline (a Kafka dead-letter topic, files) to receive them.",
        )
    ]
    sql = (
        sink(quarantining, ", 'quality.quarantine.table' = 'dlqq'")
        + "CREATE TABLE dlq (id BIGINT) WITH ('connector' = 'print');"
    )
    assert errors(validate(tmp_path, capsys, sql))[0][3] == (
        "Quarantine table 'dlqq' of 'clean' is not defined. Did you mean 'dlq'? Tables: clean, dlq, orders."
    )
    sql = sink(quarantining, ", 'quality.quarantine.table' = 'dlq'") + (
        "CREATE TABLE dlq (id BIGINT, failed STRING) WITH ('connector' = 'print');"
    )
    assert errors(validate(tmp_path, capsys, sql)) == [
        (
            8,
            30,
            "quarantine",
            "Column 'failed' of quarantine table 'dlq' matches nothing a quarantined row of 'clean' holds. Available: "
            "id, amount, country, failed_expectations, source_topic, source_partition, source_offset, batch_id, "
            "gated_table.",
        )
    ]
    sql = sink(quarantining, ", 'quality.quarantine.table' = 'gen'") + (
        "CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen');"
    )
    assert errors(validate(tmp_path, capsys, sql))[0][3] == (
        "Quarantine table 'gen' cannot be written: connector 'datagen' is not a sink."
    )


def test_malformed_quarantine_needs_a_quarantine_table_and_offers_the_raw_fields(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    malformed = ", 'quality.quarantine.malformed' = 'true'"
    assert errors(validate(tmp_path, capsys, sink(options=malformed))) == [
        (5, 32, "quarantine", "'quality.quarantine.malformed' of 'clean' needs a 'quality.quarantine.table'.")
    ]
    target = "CREATE TABLE dlq (failed_expectations STRING, source_offset BIGINT, raw_value STRING, raw_key BYTES)"
    sql = sink(options=malformed + ", 'quality.quarantine.table' = 'dlq'") + target + " WITH ('connector' = 'print');"
    assert validate(tmp_path, capsys, sql) == []  # no "gets no rows" warning: malformed records go there
    sql = sink(options=", 'quality.quarantine.table' = 'dlq'") + target + " WITH ('connector' = 'print');"
    found = validate(tmp_path, capsys, sql)
    assert [d["message"].split(" matches")[0] for d in found if d["severity"] == "error"] == [
        "Column 'raw_value' of quarantine table 'dlq'",
        "Column 'raw_key' of quarantine table 'dlq'",
    ]


def test_quality_options_are_declared_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    found = errors(validate(tmp_path, capsys, sink(options=", 'quality.on-failure' = 'explode', 'quality.sute' = 'x'")))
    messages = [m for *_, m in found]
    assert any(m.startswith("Invalid value 'explode' for option 'quality.on-failure'") for m in messages), messages
    assert any(
        "Unsupported option 'quality.sute' for connector 'print'. Did you mean 'quality.suite'?" in m for m in messages
    )


def test_a_type_expectation_contradicting_the_declared_type_is_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = {
        "expectations": [
            {"type": "expect_column_values_to_be_of_type", "kwargs": {"column": "id", "type_": "StringType"}}
        ]
    }
    found = validate(tmp_path, capsys, sink(options=", 'quality.suite' = 'suite.json'"), suite)
    assert [(d["severity"], d["message"]) for d in found] == [
        (
            "warning",
            "Expectation 'expect_column_values_to_be_of_type(id)' always fails: column 'id' is BIGINT, written as "
            "LongType, not StringType.",
        )
    ]


# ---------------------------------------------------------------------------------------------------------
# Verdicts: the gate's one-pass evaluation against plain great-expectations on the same DataFrame
# ---------------------------------------------------------------------------------------------------------

SUITE: dict[str, Any] = {
    "name": "orders",
    "expectations": [
        {"type": "expect_column_values_to_not_be_null", "kwargs": {"column": "country"}},
        {"type": "expect_column_values_to_not_be_null", "kwargs": {"column": "country", "mostly": 0.8}},
        {
            "type": "expect_column_values_to_be_between",
            "kwargs": {"column": "amount", "min_value": 0, "max_value": 100},
        },
        {
            "type": "expect_column_values_to_be_between",
            "kwargs": {"column": "amount", "min_value": 0, "max_value": 100, "strict_min": True, "mostly": 0.7},
        },
        {"type": "expect_column_values_to_be_in_set", "kwargs": {"column": "country", "value_set": ["DE", "FR"]}},
        {"type": "expect_column_values_to_not_be_in_set", "kwargs": {"column": "country", "value_set": ["XX"]}},
        {
            "type": "expect_column_values_to_match_regex",
            "kwargs": {"column": "email", "regex": "^[a-z]+@[a-z]+\\.com$"},
        },
        {"type": "expect_column_values_to_not_match_regex", "kwargs": {"column": "email", "regex": "spam"}},
        {"type": "expect_column_values_to_be_unique", "kwargs": {"column": "id"}},
        {"type": "expect_column_values_to_be_unique", "kwargs": {"column": "id", "mostly": 0.5}},
        {"type": "expect_table_row_count_to_be_between", "kwargs": {"min_value": 1, "max_value": 9}},
        {"type": "expect_table_row_count_to_equal", "kwargs": {"value": 10}},
        {"type": "expect_column_values_to_be_of_type", "kwargs": {"column": "amount", "type_": "DoubleType"}},
        {"type": "expect_column_values_to_be_of_type", "kwargs": {"column": "id", "type_": "IntegerType"}},
        {"type": "expect_column_min_to_be_between", "kwargs": {"column": "amount", "min_value": 0}},
        {
            "type": "expect_column_max_to_be_between",
            "kwargs": {"column": "amount", "max_value": 1000, "strict_max": True},
        },
        {"type": "expect_column_mean_to_be_between", "kwargs": {"column": "amount", "min_value": 10, "max_value": 120}},
    ],
}
INLINE = (
    ", CONSTRAINT positive EXPECT (amount > 0) ON VIOLATION DROP ROW"
    ", CONSTRAINT eu EXPECT (country IN ('DE', 'FR') AND CHAR_LENGTH(email) < 20) ON VIOLATION QUARANTINE"
    ", CONSTRAINT dotcom EXPECT (email LIKE '%.com')"
)
ROWS = [
    (1, 10.0, "DE", "ann@mail.com"),
    (2, -5.0, "FR", "bob@mail.com"),
    (3, 100.0, None, "cy@mail.org"),
    (3, 0.0, "XX", "spam@spam.com"),
    (5, None, "DE", None),
    (6, 1000.0, "FR", "dave@mail.com"),
    (7, 55.5, "IT", "evelyn.long.name@mail.com"),
    (8, 20.0, None, "f@x.com"),
    (9, 30.0, "DE", "g@x.com"),
    (None, 40.0, "FR", "h@x.com"),
]


@pytest.fixture(scope="module")
def gx_context() -> Any:
    return ephemeral_context()


def gate_for(tmp_path: Path, extra: str = INLINE) -> QualityGate:
    (tmp_path / "suite.json").write_text(json.dumps(SUITE))
    sql = (
        f"CREATE TABLE t (id BIGINT, amount DOUBLE, country STRING, email STRING{extra}) "
        "WITH ('connector' = 'blackhole', 'quality.suite' = 'suite.json', 'quality.on-failure' = 'drop');"
    )
    (tmp_path / "p.sql").write_text(sql)
    table = load_text(sql, str(tmp_path / "p.sql")).pipeline.table("t")
    assert table is not None
    rules = expectations.rules_of(table, tmp_path / "p.sql")
    return QualityGate(table, rules, "q", str(tmp_path / "results"), str(tmp_path / "cp"))


def same_expectation(results: list[Any], rule: Rule) -> Any:
    """The great-expectations result of the expectation configured as `rule` (results come in their order)."""
    wanted = rule.configuration()
    found = [
        r
        for r in results
        if r.expectation_config.type == wanted["type"]
        and all(r.expectation_config.kwargs.get(k) == v for k, v in wanted["kwargs"].items())
        and len([k for k in r.expectation_config.kwargs if k != "batch_id"]) == len(wanted["kwargs"])
    ]
    assert len(found) == 1, rule.name
    return found[0]


def plain_gx(context: Any, frame: DataFrame, suite: Any, name: str) -> Any:
    """great-expectations' own validation of `frame` with its Spark engine, nothing of the gate involved."""
    batch = (
        context.data_sources.add_spark(name=f"spark_{name}", persist=False)
        .add_dataframe_asset(name=f"asset_{name}")
        .add_batch_definition_whole_dataframe("whole")
    )
    result_format = {"result_format": "COMPLETE", "unexpected_index_column_names": ["row"]}
    return batch.get_batch(batch_parameters={"dataframe": frame}).validate(suite, result_format=result_format)


def test_gate_verdicts_equal_plain_great_expectations(spark: SparkSession, tmp_path: Path, gx_context: Any) -> None:
    import great_expectations as gx

    frame = spark.createDataFrame(ROWS, "id BIGINT, amount DOUBLE, country STRING, email STRING")
    gate = gate_for(tmp_path)
    _, outcomes = gate.evaluate(gate.prepare(frame))
    # The suite file as great-expectations reads it, plus the inline constraints as UnexpectedRowsExpectations.
    inline = [r for r in gate.rules if r.type == INLINE_TYPE]
    suite = gx.ExpectationSuite(
        name="plain",
        expectations=[
            *(
                gx.expectations.UnexpectedRowsExpectation(
                    unexpected_rows_query=f"SELECT * FROM {{batch}} WHERE NOT ({r.predicate_sql})"
                )
                for r in inline
            ),
            *SUITE["expectations"],
        ],
    )
    numbered = spark.createDataFrame(
        [(i, *row) for i, row in enumerate(ROWS)], "row INT, id BIGINT, amount DOUBLE, country STRING, email STRING"
    )
    result = plain_gx(gx_context, numbered, suite, "verdicts")
    assert len(result.results) == len(gate.rules) == len(outcomes) == 20
    for rule, outcome in zip(gate.rules, outcomes, strict=True):
        expected = same_expectation(result.results, rule)
        assert outcome.success == expected.success, rule.name
        gx_result = expected.result
        ours = outcome.gx_result(rule)
        for key in ("element_count", "unexpected_count", "unexpected_percent", "missing_count", "observed_value"):
            if key in gx_result:
                assert ours[key] == pytest.approx(gx_result[key]), (rule.name, key)
    # Spot checks that the data exercises both outcomes.
    verdicts = {r.name: o.success for r, o in zip(gate.rules, outcomes, strict=True)}
    assert verdicts["expect_column_values_to_not_be_null(country)"] is False
    assert verdicts["expect_column_values_to_not_be_null(country)#2"] is True
    assert verdicts["expect_column_values_to_be_unique(id)"] is False
    assert verdicts["expect_column_values_to_be_unique(id)#2"] is True
    assert verdicts["expect_column_values_to_be_of_type(id)"] is False
    assert verdicts["expect_column_mean_to_be_between(amount)"] is False
    assert verdicts["positive"] is False


def test_rows_flagged_are_the_rows_great_expectations_finds_unexpected(
    spark: SparkSession, tmp_path: Path, gx_context: Any
) -> None:
    import great_expectations as gx

    numbered = spark.createDataFrame(
        [(i, *row) for i, row in enumerate(ROWS)], "row INT, id BIGINT, amount DOUBLE, country STRING, email STRING"
    )
    gate = gate_for(tmp_path, extra=", row INT")
    flagged = gate.prepare(numbered.select("id", "amount", "country", "email", "row")).collect()
    column_rules = [(i, r) for i, r in enumerate(gate.rules) if r.type in COLUMN_VALUE_TYPES]
    suite = gx.ExpectationSuite(name="rows", expectations=[r.configuration() for _, r in column_rules])
    result = plain_gx(gx_context, numbered, suite, "rows")
    for index, rule in column_rules:
        expected = same_expectation(result.results, rule)
        ours = sorted(row["row"] for row in flagged if row[f"__dq_{index}"])
        theirs = sorted(item["row"] for item in expected.result["unexpected_index_list"])
        assert ours == theirs, rule.name


def test_an_empty_batch_is_vacuously_valid_except_for_aggregates(spark: SparkSession, tmp_path: Path) -> None:
    frame = spark.createDataFrame([], "id BIGINT, amount DOUBLE, country STRING, email STRING")
    gate = gate_for(tmp_path)
    _, outcomes = gate.evaluate(gate.prepare(frame))
    failed = sorted(r.name for r, o in zip(gate.rules, outcomes, strict=True) if not o.success)
    # great-expectations: NULL aggregates fail, a row count of 0 is outside [1, 9] and not 10, type checks hold.
    assert failed == [
        "expect_column_max_to_be_between(amount)",
        "expect_column_mean_to_be_between(amount)",
        "expect_column_min_to_be_between(amount)",
        "expect_column_values_to_be_of_type(id)",
        "expect_table_row_count_to_be_between",
        "expect_table_row_count_to_equal",
    ]
