"""Flink's window Top-N and window deduplication on Spark.

`SELECT ... FROM (SELECT ..., ROW_NUMBER() OVER (PARTITION BY window_start, window_end, ... ORDER BY ...) AS rn
FROM <a window TVF's rows, or a window aggregate of them>) WHERE rn <= N`: Flink ranks each window's rows once the
watermark passes the window's end and emits its N first, once (an append-only result; `top_n.ranks_windows`).
Spark has no streaming ROW_NUMBER, but its window aggregation closes a window exactly then: the ranked subquery
becomes an aggregation over the same window, keyed by the PARTITION BY columns, collecting the window's rows,
sorted as the ORDER BY says (NULLs first ascending and last descending, as in Flink; ties in the order the rows
were collected, which is their arrival order within a micro-batch's partition), cut to N and exploded with their
rank. Spark keeps a window's rows in state until it closes, where Flink keeps its N first.
"""

from __future__ import annotations

from sqlglot import exp

from connector.planning.operators.top_n import rank_limit, ranks_windows
from connector.planning.operators.windowed_rows import window_aggregate
from connector.planning.operators.windows import HIDDEN_WINDOW
from connector.sql.rewrite.nodes import col, fn

_RANKED = "__ranked"
_POSITION = "__rank_pos"
_ROW = "__rank_row"


def rewrite_window_ranking(outer: exp.Select) -> bool:
    """Rewrite the window Top-N `outer` reads (its FROM's ranked subquery) in place; False when it reads none."""
    from_ = outer.args.get("from_")
    subquery = from_.this if from_ is not None else None
    if not isinstance(subquery, exp.Subquery) or not isinstance(subquery.this, exp.Select):
        return False
    inner = subquery.this
    ranked = [s for s in inner.selects if isinstance(s, exp.Alias) and isinstance(s.this, exp.Window)]
    if len(ranked) != 1 or not isinstance(ranked[0].this.this, exp.RowNumber):
        return False
    window = ranked[0].this
    where = outer.args.get("where")
    conditions = list(where.this.flatten()) if where is not None and isinstance(where.this, exp.And) else []
    conditions = conditions or ([where.this] if where is not None else [])
    # Flink filters the ranked rows with the other conditions: the outer WHERE stays as it is
    limit = next((n for c in conditions if (n := rank_limit(c, ranked[0].alias)) is not None), None)
    order = window.args.get("order")
    orderings = list(order.expressions) if isinstance(order, exp.Order) else []
    if limit is None or not orderings or not ranks_windows(inner, window):
        return False
    source = inner.args["from_"].this
    keys = [p.copy() for p in window.args["partition_by"]]
    aggregate = window_aggregate(source)
    if aggregate is not None:
        keys.append(_expose_window(aggregate))  # the window aggregate's window: what closes this one
    fields = [_without_window(p.copy()) for p in inner.selects if p is not ranked[0]]
    fields += [exp.alias_(o.this.copy(), f"__o{i}") for i, o in enumerate(orderings)]
    comparator = exp.Lambda(this=_compare(orderings), expressions=[exp.to_identifier("__l"), exp.to_identifier("__r")])
    sorted_rows = fn("array_sort", fn("collect_list", fn("struct", *fields)), comparator)
    top = fn("slice", sorted_rows, exp.Literal.number(1), exp.Literal.number(limit))
    collected = exp.Select(expressions=[exp.alias_(top, _RANKED)]).from_(source.pop(), copy=False)
    collected.set("where", inner.args.get("where"))
    collected.set("group", exp.Group(expressions=keys))
    rank = fn("bigint", exp.Add(this=col(_POSITION), expression=exp.Literal.number(1)))  # ROW_NUMBER's type
    hidden_orders = [col(f"__o{i}") for i in range(len(orderings))]
    row = exp.Column(this=exp.Star(except_=hidden_orders), table=exp.to_identifier(_ROW))
    exploded = exp.Select(expressions=[exp.alias_(rank, ranked[0].alias), row]).from_(
        collected.subquery("__ranking"), copy=False
    )
    positions = exp.TableAlias(
        this=exp.to_identifier("__ranks"), columns=[exp.to_identifier(_POSITION), exp.to_identifier(_ROW)]
    )
    exploded.append("laterals", exp.Lateral(this=fn("posexplode", col(_RANKED)), view=True, alias=positions))
    subquery.set("this", exploded)
    return True


def _expose_window(aggregate: exp.Select) -> exp.Column:
    """Have the window aggregate `aggregate` select its Spark window (`__w`), which keeps the watermark, for the
    ranking's aggregation to group by; its window_time when it groups by that (it keeps the watermark too)."""
    alias = aggregate.args["from_"].this.alias or None
    grouped = {e.name.lower() for e in aggregate.args["group"].expressions if isinstance(e, exp.Column)}
    window = col("window_time", alias) if "window_time" in grouped else col(HIDDEN_WINDOW, alias)
    aggregate.select(exp.alias_(window, HIDDEN_WINDOW), copy=False)
    return col(HIDDEN_WINDOW)


def _without_window(projection: exp.Expr) -> exp.Expr:
    """A `*` of the ranked rows without the hidden window column."""
    star = projection.this if isinstance(projection, exp.Column) else projection
    if isinstance(star, exp.Star):
        star.set("except_", [*(star.args.get("except_") or []), col(HIDDEN_WINDOW)])
    return projection


def _compare(orderings: list[exp.Ordered]) -> exp.Expr:
    """A comparator of two collected rows (`__l`, `__r`) by the ORDER BY: NULLs first ascending, last descending."""
    result: exp.Expr = exp.Literal.number(0)
    for index in reversed(range(len(orderings))):
        left, right = col(f"__o{index}", "__l"), col(f"__o{index}", "__r")
        before, after = (exp.Literal.number(-1), exp.Literal.number(1))
        if orderings[index].args.get("desc"):
            before, after = after, before
        result = exp.Case(
            ifs=[
                exp.If(this=exp.and_(left.is_(exp.null()), right.is_(exp.null())), true=result),
                exp.If(this=left.is_(exp.null()), true=before),
                exp.If(this=right.is_(exp.null()), true=after),
                exp.If(this=exp.LT(this=left, expression=right), true=before),
                exp.If(this=exp.GT(this=left, expression=right), true=after),
            ],
            default=result.copy(),
        )
    return result
