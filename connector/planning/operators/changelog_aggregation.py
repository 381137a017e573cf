"""A GROUP BY written as a changelog (debezium-json, canal-json, maxwell-json, ...) or printed: Flink's
GroupAggFunction.

Flink's group aggregate updates its result row by row: a group's first row inserts its result, each later row
that changes it retracts the old result (UPDATE_BEFORE) and adds the new one (UPDATE_AFTER), and a row that changes
nothing emits nothing. A changelog format writes each of these as a message (debezium: op d with `before`, op c
with `after`). Spark's streaming aggregation emits only each group's latest row per micro-batch, with no old row, so
such a query is cut in two, as for an OVER aggregation: a view computing the group keys and the aggregated
arguments (`__agg_<n>`), which the engine defines with a stateful operator
(`connector.runtime.operators.changelog_aggregation`)
that emits Flink's changes with `__deleted` marking the retractions, and the query itself, reading the view with
each aggregate replaced by its column, HAVING as a filter of the changes (an old row passes when its result did).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp

from connector.catalog.model import DELETED_COLUMN, UPDATE_AFTER_COLUMN, UPDATE_BEFORE_COLUMN
from connector.planning.operators.over import AGGREGATES, AggregateCall, groups_rows
from connector.sql.rewrite.nodes import TranspileError, flink_sql

RETRACTS = "__agg_retracts"  # the view query's column: the row retracts (a changelog's `__deleted`)


@dataclass
class ChangelogAggregation:
    """The changes of `aggregates` per group (`keys`, columns of `select`), read by the query as view `view`."""

    view: str
    select: exp.Select
    keys: list[str]
    aggregates: list[AggregateCall] = field(default_factory=list)
    sql: str = ""  # the select as Spark SQL, once transpiled
    # (view column, output name) of each projection that selects a key or an aggregate as it is, in order; `plain`:
    # every projection does, and there is no HAVING (a Top-N over the GROUP BY ranks these rows itself)
    outputs: list[tuple[str, str]] = field(default_factory=list)
    plain: bool = False
    # Over a changelog (its `__deleted` rows retract): a group left without rows is deleted.
    retracting: bool = False
    # For a sink keyed by the group (Flink's upsert of an update): each group's new row alone is upserted, and a group
    # HAVING no longer admits deleted; otherwise (a changelog format) the old row is retracted before the new one.
    keyed: bool = False
    # The changes carry their kinds (UPDATE_BEFORE_COLUMN, UPDATE_AFTER_COLUMN) beside `__deleted`: a print sink
    # shows a group's first row as +I, a changed result as -U and +U, an emptied group as -D, as Flink prints them.
    kinds: bool = False


def extract(
    select: exp.Select, number: int, retracting: bool = False, keyed: bool = False, kinds: bool = False
) -> ChangelogAggregation | None:
    """Cut the group aggregation out of `select`, which then reads view `__agg_<number>` and selects `__deleted`
    (and with `kinds` the update flags) too; None when `select` does not aggregate. `retracting`: `select` reads a
    changelog; `keyed`: its sink is keyed by the group (see `ChangelogAggregation`). Raises TranspileError for what
    the operator cannot compute."""
    group = select.args.get("group")
    if not groups_rows(select):
        return None
    for inner in select.find_all(exp.Select):
        if inner is not select and groups_rows(inner):
            raise TranspileError(
                "An aggregate over an aggregate cannot be written as a changelog: the inner one updates its rows, "
                "which the outer one would have to retract.",
                inner,
            )
    if select.args.get("distinct") or select.args.get("order") or select.args.get("limit"):
        raise TranspileError("A changelog GROUP BY with DISTINCT, ORDER BY or LIMIT is not supported.", select)
    view = f"__agg_{number}"
    keys = list(group.expressions) if group is not None else []
    helpers: list[exp.Expr] = []
    key_names = []
    for index, key in enumerate(keys):
        key_names.append(f"__agg_k{index}")
        helpers.append(exp.alias_(key.copy(), key_names[-1], quoted=True))
    found = ChangelogAggregation(view, exp.Select(), key_names, retracting=retracting, keyed=keyed, kinds=kinds)
    if retracting:
        helpers.append(exp.alias_(exp.column(DELETED_COLUMN), RETRACTS, quoted=True))
    having = select.args.get("having")
    parts = [*select.selects, *([having] if having is not None else [])]
    calls = [a for p in parts for a in p.find_all(exp.AggFunc) if a.find_ancestor(exp.Window) is None]
    for index, call in enumerate(calls):
        function = AGGREGATES.get(type(call))
        distinct = isinstance(call.this, exp.Distinct)
        operand = call.this.expressions[0] if distinct and len(call.this.expressions) == 1 else call.this
        if function is None or (distinct and len(call.this.expressions) != 1):
            raise TranspileError(
                f"{flink_sql(call)} cannot be written as a changelog here: COUNT, SUM, AVG, MIN and MAX of one "
                "argument (DISTINCT or not) can.",
                call,
            )
        argument = None
        if not isinstance(operand, exp.Star):
            argument = f"__agg_a{index}"
            helpers.append(exp.alias_(operand.copy(), argument, quoted=True))
        output = f"__agg_{number}_{index}"
        found.aggregates.append(AggregateCall(function, argument, output, distinct))
        call.replace(exp.column(output, quoted=True))
    by_text = {key.sql(): name for key, name in zip(keys, key_names, strict=True)}
    by_name = {k.name.lower(): n for k, n in zip(keys, key_names, strict=True) if isinstance(k, exp.Column)}
    for part in [*select.selects, *([having.this] if having is not None else [])]:
        _replace_keys(part, select, by_text, by_name)
    inner = exp.Select(expressions=helpers or [exp.alias_(exp.Literal.number(0), "__agg_none", quoted=True)])
    for clause in ("from_", "joins", "laterals", "where"):
        moved = select.args.get(clause)
        if moved is not None:
            select.set(clause, None)
            inner.set(clause, moved)
    found.select = inner
    for projection in select.selects:
        column = projection.unalias()
        if isinstance(column, exp.Column) and column.name.startswith("__agg_"):
            found.outputs.append((column.name, projection.alias_or_name))
    found.plain = having is None and len(found.outputs) == len(select.selects)
    select.set("group", None)
    select.set("having", None)
    deleted: exp.Expr = exp.column(DELETED_COLUMN)
    if having is not None and keyed:  # a group HAVING no longer admits is deleted from the keyed sink
        admitted = exp.Coalesce(this=exp.Paren(this=having.this), expressions=[exp.false()])
        deleted = exp.alias_(exp.Or(this=deleted, expression=exp.Not(this=admitted)), DELETED_COLUMN)
    elif having is not None:
        select.set("where", exp.Where(this=having.this))
    select.select(deleted, copy=False)
    if kinds:
        select.select(exp.column(UPDATE_BEFORE_COLUMN), exp.column(UPDATE_AFTER_COLUMN), copy=False)
    select.set("from_", exp.From(this=exp.Table(this=exp.to_identifier(view))))
    return found


def _replace_keys(node: exp.Expr, select: exp.Select, by_text: dict[str, str], by_name: dict[str, str]) -> None:
    """Replace each GROUP BY expression under `node` by the view's key column; any other column is an error."""
    name = by_text.get(node.sql())
    if name is None and isinstance(node, exp.Column) and not node.name.startswith("__agg_"):
        name = by_name.get(node.name.lower())
        if name is None:
            raise TranspileError(f"'{flink_sql(node)}' is neither grouped nor aggregated (Flink's rule).", node)
    if name is None:
        for child in list(node.iter_expressions()):
            _replace_keys(child, select, by_text, by_name)
        return
    replacement: exp.Expr = exp.column(name, quoted=True)
    if node.parent is select:  # a projection keeps its name
        replacement = exp.alias_(replacement, node.output_name or name, quoted=True)
    node.replace(replacement)
