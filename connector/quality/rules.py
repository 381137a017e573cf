"""The rule model of the data-quality gate: one expectation of a table, checked on Spark as great-expectations
would check it.

Each rule knows its great-expectations configuration (for suites and validation results) and how to be
checked on a Spark DataFrame: a per-row violation expression (`violation`) and the aggregates its verdict
needs (`aggregate`), so `connector.quality.gate` checks every rule of a micro-batch in one pass and gets the
verdicts great-expectations would give (`outcome`).

Row-level rules (inline ones, and column-value expectations without `mostly`) decide per row: each violating
row is kept, dropped, quarantined, or fails the batch. Batch-level rules (row count, uniqueness, column type,
min / max / mean, and any expectation with `mostly` below 1) decide for the batch: when one fails, its action
applies to the whole batch.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from enum import Enum
from typing import TYPE_CHECKING, Any

from connector.diagnostics import Position

if TYPE_CHECKING:
    from pyspark.sql import Column
    from pyspark.sql.types import StructType


class Action(Enum):
    """What a violated rule does: keep the row (record only), drop it, quarantine it, or fail the batch."""

    KEEP = "keep"
    DROP = "drop"
    QUARANTINE = "quarantine"
    FAIL = "fail"


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

