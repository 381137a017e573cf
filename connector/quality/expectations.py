"""A table's data-quality expectations: its `CONSTRAINT ... EXPECT` clauses and its suite file as one list of
rules, and the problems `kafka-sql validate` reports in them and in the table's gate options.

A table written by a pipeline declares expectations in two ways, and both become `Rule`s
(`connector.quality.rules`):

* inline, Databricks' syntax: `CONSTRAINT name EXPECT (predicate) [ON VIOLATION FAIL UPDATE | DROP ROW |
  QUARANTINE]`. A row violates the rule when the predicate is FALSE (NULL passes, as with SQL CHECK
  constraints and great-expectations' column expectations, which skip NULLs). Without ON VIOLATION the row is
  kept and the violation recorded. In great-expectations it is an `UnexpectedRowsExpectation` whose query
  selects the rows where the predicate is false.
* a great-expectations suite JSON file, `'quality.suite' = 'path.json'` (`connector.quality.suite`), whose
  failures do what `'quality.on-failure'` says (fail | drop | quarantine).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from sqlglot import exp

from connector.catalog.model import Pipeline, Table
from connector.connectors import registry
from connector.diagnostics import Diagnostic, PipelineError, Position, did_you_mean
from connector.planning.transpile import transpile
from connector.quality.options import QualityOptions
from connector.quality.rules import INLINE_TYPE, OF_TYPE, RESERVED_NAMES, Action, Rule, reserved_name
from connector.quality.suite import load_suite_file
from connector.sql.rewrite.nodes import TranspileError

Locate = Callable[[exp.Expr, Position], Position]

INLINE_ACTIONS: dict[str | None, Action] = {
    None: Action.KEEP,
    "DROP ROW": Action.DROP,
    "QUARANTINE": Action.QUARANTINE,
    "FAIL UPDATE": Action.FAIL,
}
SUITE_ACTIONS = {"fail": Action.FAIL, "drop": Action.DROP, "quarantine": Action.QUARANTINE}

# What a quarantine record holds besides the gated table's columns; a quarantine table picks columns by name.
FAILED_EXPECTATIONS = "failed_expectations"  # ARRAY<STRING> (or STRING: comma-separated)
QUARANTINE_FIELDS: dict[str, str] = {
    FAILED_EXPECTATIONS: "ARRAY<STRING>",
    "source_topic": "STRING",
    "source_partition": "INT",
    "source_offset": "BIGINT",
    "batch_id": "BIGINT",
    "gated_table": "STRING",
}
MALFORMED_RECORD = "malformed_record"  # the failed expectation of a quarantined malformed source record
MALFORMED_QUARANTINE_FIELDS: dict[str, str] = {"raw_key": "BYTES", "raw_value": "BYTES"}


# ---------------------------------------------------------------------------------------------------------
# Declarations -> rules
# ---------------------------------------------------------------------------------------------------------


def has_quality(table: Table) -> bool:
    """Whether the table declares anything for the data-quality gate."""
    return bool(table.expectations) or any(key.startswith("quality.") for key in table.options)


def quarantines_malformed(table: Table) -> bool:
    """Whether the gate of `table` quarantines the malformed records its queries' sources skip."""
    if QualityOptions.QUARANTINE_MALFORMED.key not in table.options:
        return False
    try:
        chosen: bool | None = registry.resolve(table).get(QualityOptions.QUARANTINE_MALFORMED)
    except (PipelineError, KeyError):  # option validation reports an invalid value or a table that is no sink
        return False
    return chosen is True


def rules_of(table: Table, pipeline_file: str | Path) -> list[Rule]:
    """Every rule of `table`, inline ones first; PipelineError when a declaration is wrong."""
    rules, diagnostics = _rules(table, Path(pipeline_file))
    errors = [d for d in diagnostics if d.severity == "error"]
    if errors:
        raise PipelineError(errors)
    return rules


def _rules(table: Table, pipeline_file: Path, locate: Locate | None = None) -> tuple[list[Rule], list[Diagnostic]]:
    diagnostics: list[Diagnostic] = []
    rules: list[Rule] = []
    written = [c.name for c in table.columns if c.persisted]
    for declared in table.expectations:
        if reserved_name(declared.name):
            message = f"Expectation '{declared.name}': {RESERVED_NAMES}"
            diagnostics.append(Diagnostic.at(declared.position, "expectation", message))
            continue
        problem, spark_sql = inline_predicate(declared.predicate, written)
        if problem is not None:
            message, node = problem
            where = locate(node, declared.position) if locate is not None else declared.position
            diagnostics.append(Diagnostic.at(where, "expectation", f"Expectation '{declared.name}': {message}"))
            continue
        rules.append(
            Rule(
                declared.name,
                INLINE_TYPE,
                {},
                INLINE_ACTIONS[declared.on_violation],
                declared.position,
                "constraint",
                spark_sql,
            )
        )
    suite_path = table.options.get(QualityOptions.SUITE.key)
    if suite_path is not None:
        resolved = registry.resolve(table).get(QualityOptions.ON_FAILURE)
        action = SUITE_ACTIONS[str(resolved or "fail")]
        where = table.option_position(QualityOptions.SUITE.key)
        taken = {r.name.lower() for r in rules}
        found, problems = load_suite_file(suite_path, pipeline_file, table, action, where, taken)
        rules += found
        diagnostics += problems
    return rules, diagnostics


def inline_predicate(
    predicate: exp.Expr, columns: Sequence[str]
) -> tuple[tuple[str, exp.Expr] | None, str | None]:
    """((problem, where), None) or (None, Spark SQL) for an EXPECT predicate over the written `columns`."""
    lowered = {c.lower() for c in columns}
    for column in predicate.find_all(exp.Column):
        if column.table:
            return (f"'{column.sql(dialect='flink')}': refer to the table's columns without a qualifier.", column), None
        if column.name.lower() not in lowered:
            message = (
                f"column '{column.name}' is not a written column of the table."
                + did_you_mean(column.name, columns)
                + f" Columns: {', '.join(columns)}."
            )
            return (message, column), None
    aggregate = predicate.find(exp.AggFunc)
    if aggregate is not None:
        message = (
            "an EXPECT predicate is checked on each row and cannot aggregate; use a suite expectation "
            "(row count, uniqueness, min / max / mean) for batch-level checks."
        )
        return (message, aggregate), None
    query = predicate.find(exp.Query)
    if query is not None:
        return ("an EXPECT predicate cannot hold a subquery.", query), None
    try:
        select = transpile(exp.select(exp.alias_(predicate.copy(), "__expect")).from_("__batch"), streaming=False)
    except TranspileError as error:
        return (error.message, error.node or predicate), None
    return None, select.selects[0].unalias().sql(dialect="spark")



# ---------------------------------------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------------------------------------


def check(pipeline: Pipeline, written: Mapping[str, Table], locate: Locate | None = None) -> list[Diagnostic]:
    """Problems of every table's expectations and gate options: expectation syntax, referenced columns,
    suite files, quarantine targets. `written` are the tables some INSERT writes (by lower-cased name);
    `locate` maps predicate nodes to file positions."""
    diagnostics: list[Diagnostic] = []
    for table in pipeline.tables.values():
        if not has_quality(table):
            continue
        rules, problems = _rules(table, Path(pipeline.file), locate)
        diagnostics += problems
        if table.name.lower() not in written:
            diagnostics.append(
                Diagnostic.at(
                    table.position,
                    "expectation",
                    f"Table '{table.name}' declares data-quality expectations, which are checked on the rows "
                    "written to it, but no INSERT writes it.",
                    severity="warning",
                )
            )
        diagnostics += _quarantine_problems(pipeline, table, rules, written)
        diagnostics += _type_warnings(table, rules)
    return diagnostics


def _quarantine_problems(
    pipeline: Pipeline, table: Table, rules: Sequence[Rule], written: Mapping[str, Table]
) -> list[Diagnostic]:
    key = QualityOptions.QUARANTINE_TABLE.key
    name = table.options.get(key)
    quarantining = [r for r in rules if r.action is Action.QUARANTINE]
    malformed = quarantines_malformed(table)
    if name is None:
        if malformed:
            where = table.option_position(QualityOptions.QUARANTINE_MALFORMED.key)
            message = f"'{QualityOptions.QUARANTINE_MALFORMED.key}' of '{table.name}' needs a '{key}'."
            return [Diagnostic.at(where, "quarantine", message)]
        if not quarantining:
            return []
        where = quarantining[0].position
        return [
            Diagnostic.at(
                where,
                "quarantine",
                f"Expectation '{quarantining[0].name}' of '{table.name}' quarantines rows, but the table sets no "
                f"'{key}': name a table of this pipeline (a Kafka dead-letter topic, files) to receive them.",
            )
        ]
    where = table.option_position(key)
    target = pipeline.table(name)
    if target is None:
        known = [t.name for t in pipeline.tables.values()]
        return [
            Diagnostic.at(
                where,
                "quarantine",
                f"Quarantine table '{name}' of '{table.name}' is not defined.{did_you_mean(name, known)}"
                + (f" Tables: {', '.join(sorted(known))}." if known else ""),
            )
        ]
    factory = registry.factories().get(target.connector or "")
    if target.name.lower() == table.name.lower():
        return [Diagnostic.at(where, "quarantine", f"Table '{table.name}' cannot be its own quarantine table.")]
    if factory is None or not factory.sink:
        return [
            Diagnostic.at(
                where,
                "quarantine",
                f"Quarantine table '{target.name}' cannot be written: connector '{target.connector}' is not a sink.",
            )
        ]
    diagnostics: list[Diagnostic] = []
    if not quarantining and not malformed:
        diagnostics.append(
            Diagnostic.at(
                where,
                "quarantine",
                f"Nothing of '{table.name}' is quarantined ('quality.on-failure' is not 'quarantine' and no "
                f"expectation says ON VIOLATION QUARANTINE), so quarantine table '{target.name}' gets no rows.",
                severity="warning",
            )
        )
    if has_quality(target):
        diagnostics.append(
            Diagnostic.at(
                where,
                "quarantine",
                f"Quarantine table '{target.name}' cannot have expectations itself: quarantined rows are written "
                "as they are.",
            )
        )
    available = {c.name.lower(): c.name for c in table.columns if c.persisted}
    clashes = [f for f in QUARANTINE_FIELDS if f in available]
    if clashes:
        diagnostics.append(
            Diagnostic.at(
                where,
                "quarantine",
                f"Table '{table.name}' has columns named like quarantine record fields ({', '.join(clashes)}); "
                "rename them to quarantine its rows.",
            )
        )
    fields = [*available.values(), *QUARANTINE_FIELDS, *(MALFORMED_QUARANTINE_FIELDS if malformed else ())]
    for column in target.columns:
        if column.persisted and column.name.lower() not in {f.lower() for f in fields}:
            diagnostics.append(
                Diagnostic.at(
                    column.position,
                    "quarantine",
                    f"Column '{column.name}' of quarantine table '{target.name}' matches nothing a quarantined "
                    f"row of '{table.name}' holds.{did_you_mean(column.name, fields)} Available: "
                    f"{', '.join(fields)}.",
                )
            )
    return diagnostics


def _type_warnings(table: Table, rules: Sequence[Rule]) -> list[Diagnostic]:
    """A column-type expectation that contradicts the declared type always fails (rows are cast to it)."""
    if not any(rule.type == OF_TYPE for rule in rules):
        return []  # without one, validation needs no Spark
    from pyspark.sql import types as T  # the expectation names a pyspark type class (or a parent: NumericType)

    from connector.catalog.spark_types import spark_type

    found = []
    for rule in rules:
        if rule.type != OF_TYPE or rule.column is None:
            continue
        column = table.column(rule.column)
        if column is None or column.data_type is None:
            continue
        actual = spark_type(column.data_type)
        if not isinstance(actual, getattr(T, str(rule.kwargs["type_"]))):
            found.append(
                Diagnostic.at(
                    rule.position,
                    "expectation",
                    f"Expectation '{rule.name}' always fails: column '{column.name}' is {column.type_sql}, "
                    f"written as {type(actual).__name__}, not {rule.kwargs['type_']}.",
                    severity="warning",
                )
            )
    return found

