"""Flink's deduplication, `ROW_NUMBER() OVER (PARTITION BY keys ORDER BY proctime) = 1`, on Spark.

Flink keeps the first row of each key in processing order and emits it once (an append-only result; state per
key, kept as long as Flink's state TTL, forever by default). Spark's `dropDuplicates(keys)` on a stream does
exactly that, but has no SQL form: the transpiler cuts the ranked subquery out of the query (`extract`), the
query reads it as a view, and the engine defines the view as the subquery's rows with `dropDuplicates(keys)`.

A rank bounded above 1, the last row per key (ORDER BY proctime DESC) and the first or last by another column
(event time) update the rows they keep: they run as a Top-N (`connector.planning.operators.top_n`), cut out the same
way.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from connector.catalog.model import DELETED_COLUMN
from connector.planning.operators.changelog_aggregation import ChangelogAggregation
from connector.planning.operators.top_n import TopN, top_n
from connector.sql.rewrite.nodes import TranspileError


@dataclass
class Deduplication:
    """The rows of `select`, the first per `keys` in processing order (with `top`, the top N per `keys`), read by
    the query as view `view`."""

    view: str
    select: exp.Select
    keys: list[str]
    sql: str = ""  # the select as Spark SQL, once transpiled
    top: TopN | None = None
    aggregation: ChangelogAggregation | None = None  # a Top-N over this GROUP BY: ranked by the same operator


def extract(outer: exp.Select, proctimes: dict[str, str], number: int) -> Deduplication | None:
    """Cut the deduplicating subquery out of `outer` (a SELECT ... FROM (ranked subquery) WHERE rn = 1), which
    then reads view `__dedup_<number>`; None when `outer` is no such query. Raises TranspileError for a ranking
    Flink runs that Spark cannot."""
    from_ = outer.args.get("from_")
    subquery = from_.this if from_ is not None else None
    if not isinstance(subquery, exp.Subquery) or not isinstance(subquery.this, exp.Select):
        return None
    inner = subquery.this
    ranked = [s for s in inner.selects if isinstance(s, exp.Alias) and isinstance(s.this, exp.Window)]
    if len(ranked) != 1 or not isinstance(ranked[0].this.this, exp.RowNumber):
        return None
    rank, window = ranked[0].alias, ranked[0].this
    first_only = _first_only(outer.args.get("where"), rank)
    order = window.args.get("order")
    orderings = order.expressions if isinstance(order, exp.Order) else []
    ordered = orderings[0].this if len(orderings) == 1 else None
    by_proctime = isinstance(ordered, exp.Column) and ordered.name.lower() in {p.lower() for p in proctimes.values()}
    if first_only is None or not by_proctime or orderings[0].args.get("desc"):
        # A Top-N, or the last row per key, or the first by event time: its operator updates the rows it kept.
        top = top_n(outer, inner, ranked[0], list(proctimes.values()))
        keys = _partition_keys(inner, window, "Top-N") if window.args.get("partition_by") else []  # a global one
        view = f"__dedup_{number}"
        ranked[0].pop()  # the view's operator numbers the rows
        outer.set("where", None)
        if not any(isinstance(s, exp.Star) for s in outer.selects):
            outer.select(exp.column(DELETED_COLUMN), copy=False)  # the rows it retracts, for the upsert sink
        subquery.replace(exp.Table(this=exp.to_identifier(view), alias=subquery.args.get("alias")))
        return Deduplication(view, inner, keys, top=top)
    keys = _partition_keys(inner, window, "Deduplication")
    view = f"__dedup_{number}"
    ranked[0].pop()
    for column in list(outer.find_all(exp.Column)):
        if column.name.lower() == rank.lower() and not column.table:
            column.replace(exp.Literal.number(1))
    outer.set("where", None if first_only is True else first_only)
    subquery.replace(exp.Table(this=exp.to_identifier(view), alias=subquery.args.get("alias")))
    return Deduplication(view, inner, keys)


def _partition_keys(inner: exp.Select, window: exp.Window, what: str) -> list[str]:
    partition = window.args.get("partition_by") or []
    outputs = {s.alias_or_name.lower() for s in inner.selects}
    star = any(isinstance(s, exp.Star) or (isinstance(s, exp.Column) and isinstance(s.this, exp.Star))  # t.*
               for s in inner.selects)
    if not partition or not all(
        isinstance(p, exp.Column) and (star or p.name.lower() in outputs) for p in partition
    ):
        raise TranspileError(f"{what} needs PARTITION BY columns the subquery also selects.", window)
    return [p.name for p in partition]


def extract_distinct(select: exp.Select, number: int) -> Deduplication | None:
    """`SELECT DISTINCT ...` of a stream: Flink emits each distinct row once, when first seen (an append-only
    result); Spark's streaming DISTINCT is an aggregation, which cannot append. `select` then reads view
    `__dedup_<number>`, its rows without DISTINCT, deduplicated on every column."""
    if not select.args.get("distinct") or select.args.get("group") or any(s.find(exp.AggFunc) for s in select.selects):
        return None
    inner = select.copy()
    inner.set("distinct", None)
    names: list[str] = []
    for index, projection in enumerate(inner.selects):
        name = projection.alias_or_name or f"_c{index}"
        if not isinstance(projection, (exp.Alias, exp.Column)) or isinstance(projection.this, exp.Star):
            projection.replace(exp.alias_(projection.copy(), name))
        names.append(name)
    if len({n.lower() for n in names}) != len(names) or "*" in names:
        return None
    view = f"__dedup_{number}"
    for key in [k for k in select.args if k not in ("expressions", "from_")]:
        select.set(key, None)
    select.set("expressions", [exp.column(n, quoted=True) for n in names])
    select.set("from_", exp.From(this=exp.Table(this=exp.to_identifier(view))))
    return Deduplication(view, inner, names)


def _first_only(where: exp.Where | None, rank: str) -> exp.Where | bool | None:
    """The WHERE left once `rank = 1` (or <= 1, < 2) is taken out (True: nothing left); None when the rank is not
    restricted to 1."""
    if where is None:
        return None
    conditions = list(where.this.flatten()) if isinstance(where.this, exp.And) else [where.this]
    kept = [c for c in conditions if not _is_first(c, rank)]
    if len(kept) == len(conditions):
        return None
    if not kept:
        return True
    return exp.Where(this=exp.and_(*kept))


def _is_first(condition: exp.Expr, rank: str) -> bool:
    if not isinstance(condition, (exp.EQ, exp.LTE, exp.LT)):
        return False
    column, bound = condition.this, condition.expression
    if not (isinstance(column, exp.Column) and column.name.lower() == rank.lower() and isinstance(bound, exp.Literal)):
        return False
    limit = {exp.EQ: "1", exp.LTE: "1", exp.LT: "2"}[type(condition)]
    return bound.name == limit
