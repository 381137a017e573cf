"""The data-quality rules of a table: its `CONSTRAINT ... EXPECT` clauses and its great-expectations suite file.

A table written by a pipeline declares expectations in two ways, and both become one list of `Rule`s:

* inline, Databricks' syntax: `CONSTRAINT name EXPECT (predicate) [ON VIOLATION FAIL UPDATE | DROP ROW |
  QUARANTINE]`. A row violates the rule when the predicate is FALSE (NULL passes, as with SQL CHECK
  constraints and great-expectations' column expectations, which skip NULLs). Without ON VIOLATION the row is
  kept and the violation recorded. In great-expectations it is an `UnexpectedRowsExpectation` whose query
  selects the rows where the predicate is false.
* a great-expectations suite JSON file, `'quality.suite' = 'path.json'`, whose failures do what
  `'quality.on-failure'` says (fail | drop | quarantine). `SUPPORTED_TYPES` lists the expectation types.

Each rule knows its great-expectations configuration (for suites and validation results) and how to be
checked on a Spark DataFrame: a per-row violation expression (`violation`) and the aggregates its verdict
needs (`aggregates`), so `connector.quality.gate` checks every rule of a micro-batch in one pass and gets the
verdicts great-expectations would give (`outcome`).

Row-level rules (inline ones, and column-value expectations without `mostly`) decide per row: each violating
row is kept, dropped, quarantined, or fails the batch. Batch-level rules (row count, uniqueness, column type,
min / max / mean, and any expectation with `mostly` below 1) decide for the batch: when one fails, its action
applies to the whole batch.

great-expectations is imported only here and only when a suite is read or built (the import takes seconds).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from connector.connectors import declarations as factories
from connector.diagnostics import Diagnostic, PipelineError, Position, did_you_mean
from connector.sql.catalog import Pipeline, Table
from connector.sql.transpile import TranspileError, transpile

if TYPE_CHECKING:
    from pyspark.sql import Column
    from pyspark.sql.types import StructType

Locate = Callable[[exp.Expr, Position], Position]


class Action(Enum):
    """What a violated rule does: keep the row (record only), drop it, quarantine it, or fail the batch."""

    KEEP = "keep"
    DROP = "drop"
    QUARANTINE = "quarantine"
    FAIL = "fail"


INLINE_ACTIONS: dict[str | None, Action] = {
    None: Action.KEEP,
    "DROP ROW": Action.DROP,
    "QUARANTINE": Action.QUARANTINE,
    "FAIL UPDATE": Action.FAIL,
}
SUITE_ACTIONS = {"fail": Action.FAIL, "drop": Action.DROP, "quarantine": Action.QUARANTINE}

INLINE_TYPE = "unexpected_rows_expectation"
NOT_NULL = "expect_column_values_to_not_be_null"
BETWEEN = "expect_column_values_to_be_between"
IN_SET = "expect_column_values_to_be_in_set"
NOT_IN_SET = "expect_column_values_to_not_be_in_set"
MATCH_REGEX = "expect_column_values_to_match_regex"
NOT_MATCH_REGEX = "expect_column_values_to_not_match_regex"
UNIQUE = "expect_column_values_to_be_unique"
OF_TYPE = "expect_column_values_to_be_of_type"
ROW_COUNT_BETWEEN = "expect_table_row_count_to_be_between"
ROW_COUNT_EQUAL = "expect_table_row_count_to_equal"
MIN_BETWEEN = "expect_column_min_to_be_between"
MAX_BETWEEN = "expect_column_max_to_be_between"
MEAN_BETWEEN = "expect_column_mean_to_be_between"

# Column-value expectations: a violation per row; NOT_NULL counts over all rows, the others over non-NULL ones.
COLUMN_VALUE_TYPES = (NOT_NULL, BETWEEN, IN_SET, NOT_IN_SET, MATCH_REGEX, NOT_MATCH_REGEX)
AGGREGATE_TYPES = (MIN_BETWEEN, MAX_BETWEEN, MEAN_BETWEEN)
SUPPORTED_TYPES = (*COLUMN_VALUE_TYPES, UNIQUE, OF_TYPE, ROW_COUNT_BETWEEN, ROW_COUNT_EQUAL, *AGGREGATE_TYPES)
_TABLE_TYPES = (ROW_COUNT_BETWEEN, ROW_COUNT_EQUAL)
_UNSUPPORTED_KWARGS = ("row_condition", "condition_parser")

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
SAMPLE_SIZE = 20  # great-expectations' partial_unexpected_count
RESERVED_NAMES = "'rows' and names starting with '__' are reserved for the gate's own figures."


def reserved_name(name: str) -> bool:
    """Names the gate's figures use (progress metrics hold the rules' figures under their names)."""
    return name.lower() == "rows" or name.startswith("__")


@dataclass(frozen=True)
class Outcome:
    """One rule's verdict on one batch, with what great-expectations reports for it."""

    success: bool
    element_count: int
    unexpected_count: int | None = None  # rows violating it (column-value, unique, inline)
    nonnull_count: int | None = None
    observed: Any = None  # aggregates, row count, column type

    def gx_result(self, rule: Rule, partial: Sequence[Any] = ()) -> dict[str, Any]:
        """The `result` dict great-expectations gives for this rule (its SUMMARY format)."""
        if rule.type == INLINE_TYPE:
            return {"observed_value": self.unexpected_count}
        if self.unexpected_count is None:
            return {"observed_value": json_value(self.observed)}
        total, unexpected = self.element_count, self.unexpected_count
        result: dict[str, Any] = {
            "element_count": total,
            "unexpected_count": unexpected,
            "unexpected_percent": None,
            "partial_unexpected_list": [json_value(v) for v in partial[:SAMPLE_SIZE]],
        }
        if total > 0:
            percent_total = unexpected / total * 100
            if self.nonnull_count is None:  # NOT_NULL: over every row
                result["unexpected_percent"] = percent_total
            else:
                missing = total - self.nonnull_count
                nonmissing = unexpected / self.nonnull_count * 100 if self.nonnull_count else None
                result.update(
                    unexpected_percent=nonmissing,
                    missing_count=missing,
                    missing_percent=missing / total * 100,
                    unexpected_percent_total=percent_total,
                    unexpected_percent_nonmissing=nonmissing,
                )
        return result


def json_value(value: Any) -> Any:
    """A Spark value as JSON can hold it (dates as ISO text, decimals and the like as text)."""
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


@dataclass(frozen=True)
class Rule:
    """One expectation of a table, ready to be checked on Spark and reported as great-expectations would.

    `type` and `kwargs` are the great-expectations configuration (`unexpected_rows_expectation` for inline
    rules, whose `predicate_sql` is the Spark SQL predicate). `origin` is 'constraint' or the suite file.
    """

    name: str
    type: str
    kwargs: Mapping[str, Any]
    action: Action
    position: Position
    origin: str
    predicate_sql: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)

    @property
    def column(self) -> str | None:
        value = self.kwargs.get("column")
        return str(value) if value is not None else None

    @property
    def mostly(self) -> float:
        return float(self.kwargs.get("mostly", 1.0))

    @property
    def row_level(self) -> bool:
        """Decides per row (else for the whole batch)."""
        return self.type == INLINE_TYPE or (self.type in COLUMN_VALUE_TYPES and self.mostly >= 1.0)

    @property
    def has_violations(self) -> bool:
        """Has a per-row violation expression (`violation`)."""
        return self.type == INLINE_TYPE or self.type in COLUMN_VALUE_TYPES

    def describe(self) -> str:
        """The rule as a person reads it in reports and `explain`."""
        if self.type == INLINE_TYPE:
            return f"EXPECT ({self.predicate_sql})"
        arguments = ", ".join(f"{k}={v!r}" for k, v in self.kwargs.items())
        return f"{self.type}({arguments}) from {self.origin}"

    def violation(self) -> Column:
        """A non-NULL boolean per row: the row violates this rule (great-expectations' unexpected rows)."""
        from pyspark.sql import functions as F

        if self.type == INLINE_TYPE:
            assert self.predicate_sql is not None
            return ~F.coalesce(F.expr(self.predicate_sql).cast("boolean"), F.lit(True))
        column = F.col(_quoted(self.column or ""))
        if self.type == NOT_NULL:
            return column.isNull()
        return column.isNotNull() & ~F.coalesce(self._expected(column), F.lit(True))

    def _expected(self, column: Column) -> Column:
        """great-expectations' Spark condition for an expected non-NULL value."""
        from pyspark.sql import functions as F

        kw = self.kwargs
        if self.type == BETWEEN:
            low, high = kw.get("min_value"), kw.get("max_value")
            above, below = F.lit(True), F.lit(True)
            if low is not None:
                above = column > F.lit(low) if kw.get("strict_min") else column >= F.lit(low)
            if high is not None:
                below = column < F.lit(high) if kw.get("strict_max") else column <= F.lit(high)
            return above & below
        if self.type in (IN_SET, NOT_IN_SET):
            inside = column.isin(list(kw.get("value_set") or []))
            return inside if self.type == IN_SET else ~inside
        matched = column.rlike(str(kw["regex"]))
        return matched if self.type == MATCH_REGEX else ~matched

    @property
    def counts_nonnull(self) -> bool:
        """Its verdict needs the column's non-NULL count (`nonnull_count`, shared by the column's rules)."""
        return self.type == UNIQUE or (self.type in COLUMN_VALUE_TYPES and self.type != NOT_NULL)

    def aggregate(self) -> Column | None:
        """The min / max / mean `outcome` needs, named after the rule (counts come separately)."""
        from pyspark.sql import functions as F

        functions = {MIN_BETWEEN: F.min, MAX_BETWEEN: F.max, MEAN_BETWEEN: F.mean}
        if self.type not in functions:
            return None
        return functions[self.type](F.col(_quoted(self.column or ""))).alias(self.name)

    def outcome(self, rows: int, values: Mapping[str, Any], schema: StructType) -> Outcome:
        """The verdict from the batch's row count and figures: under the rule's name its violation count or
        `aggregate`, under `nonnull_count(column)` the column's non-NULL count; with great-expectations' rules
        (vacuous truth, `mostly`, strict bounds)."""
        kw = self.kwargs
        if self.type == INLINE_TYPE:
            unexpected = int(values[self.name] or 0)
            return Outcome(unexpected == 0, rows, unexpected)
        if self.type == NOT_NULL:
            unexpected = int(values[self.name] or 0)
            success = rows == 0 or (rows - unexpected) / rows >= self.mostly
            return Outcome(success, rows, unexpected)
        if self.type in COLUMN_VALUE_TYPES or self.type == UNIQUE:
            unexpected = int(values[self.name] or 0)
            nonnull = int(values[nonnull_count(self.column or "")] or 0)
            success = rows == 0 or nonnull == 0 or (nonnull - unexpected) / nonnull >= self.mostly
            return Outcome(success, rows, unexpected, nonnull)
        if self.type == OF_TYPE:
            from pyspark.sql import types as T

            actual = schema[self.column or ""].dataType
            expected = getattr(T, str(kw["type_"]))
            return Outcome(isinstance(actual, expected), rows, observed=type(actual).__name__)
        if self.type == ROW_COUNT_EQUAL:
            return Outcome(rows == kw["value"], rows, observed=rows)
        observed = rows if self.type == ROW_COUNT_BETWEEN else values[self.name]
        return Outcome(_between(observed, kw), rows, observed=observed)

    def configuration(self) -> dict[str, Any]:
        """The great-expectations expectation configuration: type, kwargs, meta (name and action)."""
        kwargs = dict(self.kwargs)
        if self.type == INLINE_TYPE:
            kwargs = {"unexpected_rows_query": f"SELECT * FROM {{batch}} WHERE NOT ({self.predicate_sql})"}
        meta = {**self.meta, "name": self.name, "action": self.action.value}
        return {"type": self.type, "kwargs": kwargs, "meta": meta}


def nonnull_count(column: str) -> str:
    """Name of the aggregate counting `column`'s non-NULL values."""
    return f"__nonnull {column}"


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _between(observed: Any, kw: Mapping[str, Any]) -> bool:
    """great-expectations' `_validate_metric_value_between`: NULL fails; bounds may be strict; date bounds
    written as strings are parsed."""
    if observed is None or (isinstance(observed, float) and math.isnan(observed)):
        return False
    low, high = kw.get("min_value"), kw.get("max_value")
    if isinstance(observed, date):
        from dateutil.parser import parse

        def as_time(bound: Any) -> Any:
            if not isinstance(bound, str):
                return bound
            parsed = parse(bound)
            return parsed if isinstance(observed, datetime) else parsed.date()

        low, high = as_time(low), as_time(high)
    above = low is None or (observed > low if kw.get("strict_min") else observed >= low)
    below = high is None or (observed < high if kw.get("strict_max") else observed <= high)
    return bool(above and below)


# ---------------------------------------------------------------------------------------------------------
# Declarations -> rules
# ---------------------------------------------------------------------------------------------------------


def has_quality(table: Table) -> bool:
    """Whether the table declares anything for the data-quality gate."""
    return bool(table.expectations) or any(key.startswith("quality.") for key in table.options)


def quarantines_malformed(table: Table) -> bool:
    """Whether the gate of `table` quarantines the malformed records its queries' sources skip."""
    if factories.QualityOptions.QUARANTINE_MALFORMED.key not in table.options:
        return False
    try:
        chosen: bool | None = factories.resolve(table).get(factories.QualityOptions.QUARANTINE_MALFORMED)
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
    suite_path = table.options.get(factories.QualityOptions.SUITE.key)
    if suite_path is not None:
        resolved = factories.resolve(table).get(factories.QualityOptions.ON_FAILURE)
        action = SUITE_ACTIONS[str(resolved or "fail")]
        where = table.option_position(factories.QualityOptions.SUITE.key)
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


def load_suite_file(
    path_text: str, pipeline_file: Path, table: Table, action: Action, where: Position, taken: set[str]
) -> tuple[list[Rule], list[Diagnostic]]:
    """The rules of a great-expectations suite JSON file (a path relative to the pipeline file)."""
    path = Path(path_text)
    if not path.is_absolute():
        path = pipeline_file.resolve().parent / path
    label = f"Suite file '{path_text}'"

    def problem(message: str) -> tuple[list[Rule], list[Diagnostic]]:
        return [], [Diagnostic.at(where, "expectation-suite", f"{label}: {message}")]

    try:
        document = json.loads(path.read_text())
    except FileNotFoundError:
        return problem(f"no such file ({path}).")
    except OSError as error:
        return problem(f"cannot be read: {error.strerror or error}.")
    except ValueError as error:
        return problem(f"is not valid JSON: {error}.")
    entries = document.get("expectations") if isinstance(document, dict) else None
    if not isinstance(entries, list):
        return problem('expected a great-expectations suite: {"name": ..., "expectations": [...]}.')
    rules: list[Rule] = []
    diagnostics: list[Diagnostic] = []
    written = [c.name for c in table.columns if c.persisted]
    for index, entry in enumerate(entries, start=1):
        found = _suite_rule(entry, index, written, action, where, path_text, taken)
        if isinstance(found, str):
            diagnostics.append(Diagnostic.at(where, "expectation-suite", f"{label}, expectation {index}: {found}"))
            continue
        rules.append(found)
        taken.add(found.name.lower())
    if not diagnostics:
        gx_problems = _gx_problems([r.configuration() for r in rules])
        diagnostics += [
            Diagnostic.at(where, "expectation-suite", f"{label}, expectation {i}: {message}")
            for i, message in gx_problems
        ]
    return rules, diagnostics


def _suite_rule(
    entry: Any, index: int, written: list[str], action: Action, where: Position, origin: str, taken: set[str]
) -> Rule | str:
    """One suite entry as a rule, or what is wrong with it."""
    if not isinstance(entry, dict):
        return "expected an object with 'type' and 'kwargs'."
    kind = entry.get("type", entry.get("expectation_type"))
    kwargs = entry.get("kwargs", {})
    meta = entry.get("meta") or {}
    if not isinstance(kind, str) or not isinstance(kwargs, dict) or not isinstance(meta, dict):
        return "expected an object with 'type' (a string), 'kwargs' and optional 'meta' (objects)."
    if kind not in SUPPORTED_TYPES:
        return (
            f"'{kind}' cannot be checked by the micro-batch gate.{did_you_mean(kind, SUPPORTED_TYPES)} "
            f"Supported: {', '.join(SUPPORTED_TYPES)}."
        )
    for key in _UNSUPPORTED_KWARGS:
        if key in kwargs:
            return f"'{key}' is not supported by the micro-batch gate; filter rows in the query instead."
    column = kwargs.get("column")
    if kind not in _TABLE_TYPES:
        if not isinstance(column, str):
            return f"'{kind}' needs a 'column'."
        if column not in written:
            return (
                f"column '{column}' is not a written column of the table.{did_you_mean(column, written)} "
                f"Columns: {', '.join(written)}."
            )
    if kind == OF_TYPE:
        message = _spark_type_problem(kwargs.get("type_"))
        if message:
            return message
    low, high = kwargs.get("min_value"), kwargs.get("max_value")
    if isinstance(low, int | float) and isinstance(high, int | float) and low > high:
        return f"'min_value' ({low}) is greater than 'max_value' ({high})."
    name = meta.get("name")
    if name is not None and not isinstance(name, str):
        return "'meta.name' must be a string."
    if name is not None and reserved_name(name):
        return f"'meta.name' '{name}': {RESERVED_NAMES}"
    if name is None:
        base = f"{kind}({column})" if column else kind
        name, count = base, 1
        while name.lower() in taken:
            count += 1
            name = f"{base}#{count}"
    elif name.lower() in taken:
        return f"the name '{name}' is already used by another expectation of the table."
    return Rule(name, kind, kwargs, action, where, origin, meta={k: v for k, v in meta.items() if k != "name"})


def _spark_type_problem(type_name: Any) -> str | None:
    from pyspark.sql import types as T

    candidate = getattr(T, str(type_name), None) if isinstance(type_name, str) else None
    if isinstance(candidate, type) and issubclass(candidate, T.DataType) and candidate is not T.DataType:
        return None
    names = [n for n, v in vars(T).items() if isinstance(v, type) and issubclass(v, T.DataType) and n.endswith("Type")]
    return (
        f"'type_' must name a Spark type, e.g. LongType or StringType, not {type_name!r}."
        + did_you_mean(str(type_name), names)
    )


def _gx_problems(configurations: Sequence[Mapping[str, Any]]) -> list[tuple[int, str]]:
    """What great-expectations itself rejects in the configurations: (1-based index, message)."""
    problems = []
    for index, config in enumerate(configurations, start=1):
        try:
            gx_expectation(config)
        except Exception as error:  # pydantic and great-expectations configuration errors
            problems.append((index, _gx_message(error)))
    return problems


def _gx_message(error: Exception) -> str:
    errors = getattr(error, "errors", None)
    if callable(errors):
        parts: dict[str, str] = {}  # by field: the first message (later ones explain alternative types)
        for item in errors():
            where = ".".join(str(p) for p in item.get("loc", ()) if p != "__root__")
            message = str(item.get("msg", ""))
            if message == "extra fields not permitted":
                parts.setdefault(where, f"'{where}' is not a parameter of this expectation")
            else:
                parts.setdefault(where, f"'{where}': {message}" if where else message)
        return "; ".join(parts.values()) + "."
    return str(error).splitlines()[0]


# ---------------------------------------------------------------------------------------------------------
# great-expectations objects
# ---------------------------------------------------------------------------------------------------------


def gx_expectation(configuration: Mapping[str, Any]) -> Any:
    """A great-expectations Expectation from a configuration (type, kwargs, meta)."""
    from great_expectations.expectations.expectation_configuration import ExpectationConfiguration

    return ExpectationConfiguration(
        type=configuration["type"], kwargs=dict(configuration["kwargs"]), meta=dict(configuration.get("meta") or {})
    ).to_domain_obj()


def gx_suite(name: str, rules: Sequence[Rule]) -> Any:
    """The rules as a great-expectations ExpectationSuite."""
    import great_expectations as gx

    return gx.ExpectationSuite(name=name, expectations=[gx_expectation(r.configuration()) for r in rules])


def gx_context() -> Any:
    """An ephemeral great-expectations context: nothing written to disk, no progress bars, no analytics."""
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig

    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    return context


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
    key = factories.QualityOptions.QUARANTINE_TABLE.key
    name = table.options.get(key)
    quarantining = [r for r in rules if r.action is Action.QUARANTINE]
    malformed = quarantines_malformed(table)
    if name is None:
        if malformed:
            where = table.option_position(factories.QualityOptions.QUARANTINE_MALFORMED.key)
            message = f"'{factories.QualityOptions.QUARANTINE_MALFORMED.key}' of '{table.name}' needs a '{key}'."
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
    factory = factories.FACTORIES.get(target.connector or "")
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
    from pyspark.sql import types as T

    from connector.sql.types import spark_type

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

