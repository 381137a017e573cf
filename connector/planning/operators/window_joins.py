"""Flink's window join on Spark: `... FROM (SELECT * FROM TABLE(TUMBLE(TABLE a, ...))) L [LEFT|RIGHT|FULL] JOIN
(SELECT * FROM TABLE(TUMBLE(TABLE b, ...))) R ON ... AND L.window_start = R.window_start AND L.window_end =
R.window_end`.

Flink joins the rows of the same window of both sides when the window closes; an outer join pads the rows left
without a match then, so it appends. Spark streams an outer join when its condition lets the watermark end a row's
wait, and the equality of the two sides' event-time windows is such a condition: both sides select their Spark
window (`__w`, which keeps the watermark) and the ON clause compares them too. An inner join gets the same
condition, which lets Spark drop the rows of closed windows from its state. TUMBLE and HOP windows; an outer join
of CUMULATE windows stays refused.
"""

from __future__ import annotations

from sqlglot import exp

from connector.planning.operators.windowed_rows import carry_window, windowed_rows
from connector.planning.operators.windows import HIDDEN_WINDOW
from connector.sql.dialect.expressions import WindowTVF
from connector.sql.rewrite.nodes import col


def rewrite_window_joins(select: exp.Select) -> None:
    """Add the window equality to each window join of `select` (its FROM and one JOIN, both windowed rows)."""
    from_ = select.args.get("from_")
    if from_ is None or any(isinstance(p.unalias(), exp.Star) or _is_star(p) for p in select.selects):
        return  # a star would select the hidden windows
    left = from_.this
    for join in select.args.get("joins") or []:
        on = join.args.get("on")
        right = join.this
        names = (_windowed_alias(left), _windowed_alias(right))
        if on is None or None in names or not _joins_windows(on, names[0] or "", names[1] or ""):
            continue
        carry_window(left)
        carry_window(right)
        same_window = exp.EQ(this=col(HIDDEN_WINDOW, names[0]), expression=col(HIDDEN_WINDOW, names[1]))
        join.set("on", exp.and_(on, same_window))


def is_window_join(on: exp.Expr) -> bool:
    """Whether `on` compares two sides' windows (`rewrite_window_joins` made it a window join)."""
    return any(
        isinstance(eq.this, exp.Column)
        and isinstance(eq.expression, exp.Column)
        and eq.this.name == HIDDEN_WINDOW
        and eq.expression.name == HIDDEN_WINDOW
        for eq in on.find_all(exp.EQ)
    )


def _is_star(projection: exp.Expr) -> bool:
    return isinstance(projection, exp.Column) and isinstance(projection.this, exp.Star)


def _windowed_alias(item: exp.Expr) -> str | None:
    """The alias of a join side that holds a TUMBLE or HOP TVF's rows (`windowed_rows`)."""
    tvf = windowed_rows(item)
    return item.alias or None if tvf is not None and _fixed_windows(tvf) else None


def _fixed_windows(tvf: WindowTVF) -> bool:
    """TUMBLE and HOP rows carry their window as `__w`; a CUMULATE row's `__w` is its own
    (`connector.planning.operators.windows`)."""
    return str(tvf.args.get("kind")).upper() in ("TUMBLE", "HOP")


def _joins_windows(on: exp.Expr, left: str, right: str) -> bool:
    """Whether `on` equates the sides' window_start and window_end, as Flink's window join requires."""
    pairs = set()
    for eq in on.find_all(exp.EQ):
        a, b = eq.this, eq.expression
        if isinstance(a, exp.Column) and isinstance(b, exp.Column) and a.name.lower() == b.name.lower():
            pairs.add((a.name.lower(), frozenset((a.table.lower(), b.table.lower()))))
    sides = frozenset((left.lower(), right.lower()))
    return {("window_start", sides), ("window_end", sides)} <= pairs
