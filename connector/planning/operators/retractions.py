"""Aggregates over a changelog, with Flink's retractions.

A changelog source gives each change as rows: an insert adds its row, a delete retracts it, an update retracts
its old row (UPDATE_BEFORE) and adds its new one; `__deleted` marks the rows that retract. CDC formats
(debezium-json, canal-json, maxwell-json) carry the old rows; for upsert-kafka, `connector.runtime.operators.normalize`
keeps
them. Flink's GroupAggregate takes a retracted row out of its group's accumulators; Spark's streaming
aggregation only adds. The aggregates Flink retracts with sums are rewritten as sums of signed values, which Spark
adds exactly (the sign is -1 for a retracting row, else 1):

* COUNT(*) -> SUM(sign); COUNT(x) -> SUM(sign, for a non-null x)
* SUM(x) -> SUM(sign * x); NULL when no non-null x is left (Flink's SumWithRetractAggFunction)
* AVG(x) -> SUM(sign * x) / COUNT(x); NULL when no non-null x is left (Flink's AvgAggFunction)

A group whose rows are all retracted is deleted (Flink's GroupAggFunction emits a DELETE when its record count
reaches 0), and so is a group that HAVING no longer admits (Flink retracts its row): the query's `__deleted`
output says so, and the upsert sinks write it as a delete of the group's key (a group HAVING never admitted gets
one too, which leaves the sink's table as Flink's). MIN and MAX need every value they saw (Flink keeps them in map
state): over a CDC format they run in a stateful operator that keeps them
(`connector.planning.operators.changelog_aggregation`);
`retraction_problem` refuses them elsewhere, and the other aggregates everywhere.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from connector.catalog.model import DELETED_COLUMN

RETRACTABLE = (exp.Count, exp.Sum, exp.Avg)


def aggregated_changelog(query: exp.Query, is_changelog: Callable[[str], bool]) -> exp.Select | None:
    """`query` when it aggregates one changelog table (`is_changelog` of its name) read directly, without a join:
    the shape `retract` rewrites. None for any other query."""
    if not isinstance(query, exp.Select) or query.args.get("joins") or query.args.get("laterals"):
        return None
    source = query.args.get("from_") or query.args.get("from")
    relation = source.this if isinstance(source, exp.From) else None
    aggregated = query.args.get("group") is not None or any(s.find(exp.AggFunc) for s in query.selects)
    if not aggregated or not isinstance(relation, exp.Table) or not is_changelog(relation.name):
        return None
    return query


def retraction_problem(select: exp.Select, kept_values: bool = False) -> str | None:
    """Why the aggregates of `select`, over a changelog, cannot be retracted here; None when they can.
    `kept_values`: MIN, MAX and DISTINCT aggregates too, by the operator that keeps the values they saw
    (`connector.runtime.operators.changelog_aggregation`)."""
    retractable = (*RETRACTABLE, exp.Min, exp.Max) if kept_values else RETRACTABLE
    for node in select.find_all(exp.AggFunc, exp.Filter, exp.Window, exp.Subquery):
        if isinstance(node, exp.Subquery):
            return "a subquery"
        if isinstance(node, exp.Window):
            return "an OVER window"
        if isinstance(node, exp.Filter):
            return "an aggregate with FILTER (WHERE ...)"
        name = node.sql_name() if isinstance(node, exp.Func) else node.key.upper()
        if not isinstance(node, retractable):
            return f"{name}, which keeps every value it saw to retract one (COUNT, SUM and AVG can)"
        if isinstance(node.this, exp.Distinct) and not kept_values:
            return f"{name}(DISTINCT ...), which keeps every value it saw to retract one"
    return None


def _sign() -> exp.Expr:
    return exp.Case().when(exp.column(DELETED_COLUMN), exp.Literal.number(-1)).else_(exp.Literal.number(1))


def _counted(value: exp.Expr | None) -> exp.Expr:
    """SUM of the signs of the rows where `value` is not NULL (all rows for COUNT(*))."""
    if value is None or isinstance(value, exp.Star):
        return exp.Sum(this=_sign())
    counted = exp.Case().when(exp.Is(this=value.copy(), expression=exp.Null()), exp.Literal.number(0))
    return exp.Sum(this=counted.else_(_sign()))


def _signed_sum(value: exp.Expr) -> exp.Expr:
    negated = exp.Neg(this=exp.Paren(this=value.copy()))
    return exp.Sum(this=exp.Case().when(exp.column(DELETED_COLUMN), negated).else_(value.copy()))


def _unless_empty(count: exp.Expr, value: exp.Expr) -> exp.Expr:
    return exp.Case().when(exp.EQ(this=count, expression=exp.Literal.number(0)), exp.Null()).else_(value)


def _retracting(aggregate: exp.AggFunc) -> exp.Expr:
    value = aggregate.this
    if isinstance(aggregate, exp.Count):
        return _counted(value)
    if isinstance(aggregate, exp.Sum):
        return _unless_empty(_counted(value), _signed_sum(value))
    quotient = exp.Div(this=_signed_sum(value), expression=_counted(value))
    return _unless_empty(_counted(value), quotient)


def retract(select: exp.Select) -> exp.Select:
    """`select` (checked by `retraction_problem`) rewritten in place to aggregate signed rows, with the
    `__deleted` output column: true when the group has no rows left or HAVING does not admit it."""
    for index, projected in enumerate(select.expressions):
        if not isinstance(projected, exp.Alias | exp.Column) and projected.find(exp.AggFunc):
            projected.replace(exp.alias_(projected.copy(), f"EXPR${index}", quoted=True))  # Flink's name for it
    for aggregate in list(select.find_all(exp.AggFunc)):
        if isinstance(aggregate, RETRACTABLE):
            aggregate.replace(_retracting(aggregate))
    deleted: exp.Expr = exp.EQ(this=exp.Sum(this=_sign()), expression=exp.Literal.number(0))
    having = select.args.get("having")
    if having is not None:
        admitted = exp.Coalesce(this=exp.Paren(this=having.this.copy()), expressions=[exp.false()])
        deleted = exp.Or(this=deleted, expression=exp.Not(this=admitted))
        select.set("having", None)
    return select.select(exp.alias_(deleted, DELETED_COLUMN), copy=False)
