"""Rows a window TVF assigned, read through subqueries and views that neither aggregate nor join them.

Flink keeps window_start, window_end and window_time attributes of the window through such projections and
filters: `CREATE VIEW w AS SELECT * FROM TABLE(TUMBLE(...))` and then `SELECT ... FROM w GROUP BY window_start,
window_end, k` is a window aggregation, which appends. Here the rows carry their Spark window (`__w`, which keeps
the watermark) up to the aggregation, which groups by it as it does directly over the TVF
(`connector.planning.operators.windows`).
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from connector.planning.operators.over import groups_rows
from connector.planning.operators.windows import HIDDEN_WINDOW
from connector.sql.dialect.expressions import WindowTVF
from connector.sql.rewrite.intervals import duration_literal
from connector.sql.rewrite.nodes import col, fn

ViewQuery = Callable[[str], exp.Expr | None]  # a view's query by name, None for anything else


def no_views(_: str) -> exp.Expr | None:
    """The `ViewQuery` where views are read as subqueries already (the transpiler's)."""
    return None


def windowed_rows(item: exp.Expr, view: ViewQuery = no_views) -> WindowTVF | None:
    """The window TVF whose rows `item` (a FROM item) holds: the TVF, or a subquery or view of its rows."""
    levels = _levels(item, view)
    return levels[1] if levels is not None else None


def _levels(item: exp.Expr, view: ViewQuery) -> tuple[list[exp.Select], WindowTVF] | None:
    """The SELECTs from `item` down to the TVF (outermost first), and the TVF."""
    selects: list[exp.Select] = []
    node: exp.Expr | None = item
    while node is not None:
        if isinstance(node, WindowTVF):
            return selects, node
        if isinstance(node, exp.Table) and isinstance(node.this, exp.Identifier):
            node = view(node.name)
            continue
        if isinstance(node, exp.Subquery):
            node = node.this
            continue
        if not isinstance(node, exp.Select) or groups_rows(node) or node.args.get("joins") or node.args.get("distinct"):
            return None
        selects.append(node)
        from_ = node.args.get("from_")
        node = from_.this if from_ is not None else None
    return None


def window_aggregate(source: exp.Expr, view: ViewQuery = no_views) -> exp.Select | None:
    """The SELECT grouping by window_start and window_end that `source` (a subquery or view) is, if it is one."""
    aggregate = view(source.name) if isinstance(source, exp.Table) else source
    aggregate = aggregate.this if isinstance(aggregate, exp.Subquery) else aggregate
    if not isinstance(aggregate, exp.Select) or aggregate.args.get("joins") or aggregate.args.get("from_") is None:
        return None
    group = aggregate.args.get("group")
    grouped = {e.name.lower() for e in group.expressions if isinstance(e, exp.Column)} if group else set()
    return aggregate if {"window_start", "window_end"} <= grouped else None


def window_names(aggregate: exp.Select) -> dict[str, str]:
    """The names a window aggregate's SELECT gives window_start and window_end (lower case): `window_start AS
    starttime` -> {'starttime': 'window_start'}."""
    names: dict[str, str] = {}
    for projection in aggregate.selects:
        value = projection.unalias()
        if isinstance(value, exp.Column) and value.name.lower() in ("window_start", "window_end"):
            names[projection.alias_or_name.lower()] = value.name.lower()
    return names


def propagated_window(select: exp.Select, view: ViewQuery = no_views) -> tuple[exp.Select, WindowTVF] | None:
    """The TUMBLE or HOP window aggregate (and its TVF) that `select` aggregates again per window, as Flink
    propagates a window:
    `select` groups by the columns its FROM (a subquery or view of that aggregate) selects as window_start and
    window_end, under any names (Nexmark q5's `GROUP BY CountBids.starttime, CountBids.endtime`)."""
    from_ = select.args.get("from_")
    group = select.args.get("group")
    if from_ is None or group is None or select.args.get("joins"):
        return None
    aggregate = window_aggregate(from_.this, view)
    inner = aggregate.args.get("from_") if aggregate is not None else None
    tvf = windowed_rows(inner.this, view) if inner is not None else None
    if aggregate is None or tvf is None or str(tvf.args.get("kind")).upper() not in ("TUMBLE", "HOP"):
        return None
    names = window_names(aggregate)
    grouped = {names.get(e.name.lower()) for e in group.expressions if isinstance(e, exp.Column)}
    return (aggregate, tvf) if {"window_start", "window_end"} <= grouped else None


def carry_window(item: exp.Expr) -> None:
    """Have each SELECT of the subquery `item` (windowed rows, `windowed_rows`) pass its rows' `__w` on."""
    levels = _levels(item, no_views)
    selects = levels[0] if levels is not None else []
    for index, level in enumerate(selects):
        # its star hides `__w` (`connector.planning.operators.windows`); a star above passes it
        innermost = index == len(selects) - 1
        if innermost or not any(isinstance(p, exp.Star) for p in level.selects):
            level.select(col(HIDDEN_WINDOW), copy=False)


def expose_windows(select: exp.Select) -> None:
    """`select` groups by window_start and window_end of a subquery of a TUMBLE, HOP or CUMULATE TVF's rows: the
    subquery passes `__w` on and `select` groups by it too."""
    from_ = select.args.get("from_")
    source = from_.this if from_ is not None else None
    group = select.args.get("group")
    if not isinstance(source, exp.Subquery) or group is None:
        return
    grouped = {e.name.lower() for e in group.expressions if isinstance(e, exp.Column)}
    tvf = windowed_rows(source)
    if tvf is None or not {"window_start", "window_end"} <= grouped or "window_time" in grouped:
        return
    if str(tvf.args.get("kind")).upper() == "SESSION":
        return
    carry_window(source)
    group.append("expressions", col(HIDDEN_WINDOW, source.alias or None))


def expose_aggregated_windows(select: exp.Select) -> None:
    """`select` aggregates a window aggregate per window again (`propagated_window`): the aggregate selects its
    Spark window `__w` (by which it groups, `connector.planning.operators.windows`) and `select` groups by a window of
    its time
    too, so that Spark appends both when the windows close."""
    found = propagated_window(select)
    from_ = select.args.get("from_")
    if found is None or from_ is None:
        return
    aggregate, tvf = found
    if any(p.alias_or_name == HIDDEN_WINDOW for p in aggregate.selects):
        # a window ranking of the aggregate groups by its window already (`connector.planning.operators.window_ranking`)
        return
    aggregate.select(col(HIDDEN_WINDOW), copy=False)
    # Spark's chained aggregation groups by a window over the first one's window_time: a tumbling window of the
    # TVF's slide holds exactly one of its windows' times (each window ends on a multiple of the slide)
    slide = tvf.args.get("slide") if str(tvf.args.get("kind")).upper() == "HOP" else tvf.args.get("size")
    assert slide is not None
    regroup = fn("window", fn("window_time", col(HIDDEN_WINDOW, from_.this.alias or None)), duration_literal(slide))
    select.args["group"].append("expressions", regroup)
