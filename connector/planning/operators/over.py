"""Flink's OVER aggregation, `agg(x) OVER (PARTITION BY k ORDER BY time ROWS|RANGE BETWEEN ... AND CURRENT ROW)`.

Flink computes, for every row of an append-only stream, aggregates over the rows before it in its partition,
ordered by a time attribute: by event time once the watermark passes the row (late rows are dropped), or by
processing time as rows arrive. Spark Structured Streaming has no streaming window functions, so the transpiler
cuts the query in two, as for deduplication: a view computing what the OVER windows need (`__over_<n>`: every
column the query reads, the partition keys, the time and the aggregated arguments), which the engine defines with
a stateful operator (`connector.runtime.operators.over`) that appends the aggregates, and the query itself, reading the
view with each OVER call replaced by its aggregate's column.

As in Flink: all OVER calls of a SELECT share one window (WINDOW w AS (...) or written out); ORDER BY one time
attribute ascending; the frame ends at CURRENT ROW and starts UNBOUNDED, `n` rows (ROWS) or an interval (RANGE)
PRECEDING; without a frame, RANGE UNBOUNDED PRECEDING. COUNT, SUM, AVG, MIN and MAX.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from sqlglot import exp

from connector.sql.rewrite.intervals import interval_micros
from connector.sql.rewrite.nodes import TranspileError, flink_sql

AGGREGATES: dict[type[exp.Expr], str] = {
    exp.Count: "COUNT",
    exp.Sum: "SUM",
    exp.Avg: "AVG",
    exp.Min: "MIN",
    exp.Max: "MAX",
}
TIME = "__over_t"


@dataclass
class Frame:
    """The rows an aggregate of a row covers: the row and those before it in its partition."""

    rows: bool  # ROWS: counted rows; RANGE: rows within a time span (ties with the row included)
    preceding: int | None  # rows (ROWS) or milliseconds (RANGE) before the row; None: UNBOUNDED PRECEDING
    rowtime: bool  # ordered by event time (emitted once the watermark passes); else by processing time


@dataclass
class AggregateCall:
    """An aggregate a stateful operator computes (here and in `connector.planning.operators.changelog_aggregation`)."""

    function: str  # COUNT, SUM, AVG, MIN or MAX
    argument: str | None  # the view's column aggregated; None for COUNT(*)
    output: str  # the column of the result
    distinct: bool = False  # COUNT(DISTINCT x), ...: each value once (changelog GROUP BY only)


@dataclass
class OverAggregation:
    """The rows of `select` (read by the query as view `view`), each with `aggregates` over its `frame` in its
    partition (`keys`, columns of `select`), ordered by column `TIME`."""

    view: str
    select: exp.Select
    keys: list[str]
    frame: Frame
    aggregates: list[AggregateCall] = field(default_factory=list)
    sql: str = ""  # the select as Spark SQL, once transpiled


def has_over(select: exp.Select) -> bool:
    """Whether `select` itself (not a nested query) calls an aggregate OVER a window."""
    return any(
        isinstance(w.this, tuple(AGGREGATES)) and w.find_ancestor(exp.Select) is select
        for w in select.find_all(exp.Window)
    )


def is_grouping_aggregate(node: exp.Expr) -> bool:
    """Whether `node` holds an aggregate that groups rows (not one OVER a window, which keeps every row)."""
    return any(a.find_ancestor(exp.Window) is None for a in node.find_all(exp.AggFunc))


def groups_rows(select: exp.Select) -> bool:
    """Whether `select` aggregates its rows into groups: a GROUP BY, or a grouping aggregate (a global one)."""
    return select.args.get("group") is not None or any(is_grouping_aggregate(p) for p in select.selects)


def extract(
    select: exp.Select, rowtimes: Mapping[str, str], proctimes: Mapping[str, str], number: int
) -> OverAggregation | None:
    """Cut the OVER aggregation out of `select`, which then reads view `__over_<number>`; None when `select` has no
    aggregate OVER a window. `rowtimes` and `proctimes` map relation names (lower case) to their time attributes.
    Raises TranspileError for an OVER window Flink would refuse or this cannot run."""
    if not has_over(select):
        return None
    calls = [w for p in select.selects for w in p.find_all(exp.Window)]
    for window in select.find_all(exp.Window):
        named = window.arg_key == "windows"  # WINDOW w AS (...)
        if window.find_ancestor(exp.Select) is select and window not in calls and not named:
            raise TranspileError("An OVER aggregate is supported in the SELECT list only.", window)
    for clause in ("group", "having", "order", "limit", "distinct"):
        if select.args.get(clause):
            raise TranspileError(
                "An OVER aggregation with GROUP BY, HAVING, ORDER BY, LIMIT or DISTINCT in the same SELECT is not "
                "supported; aggregate in a subquery or view first.",
                select.args[clause],
            )
    specs = [_resolve(w, select) for w in calls]
    first = specs[0]
    for call, spec in zip(calls, specs, strict=True):
        if not isinstance(call.this, tuple(AGGREGATES)):
            raise TranspileError(
                f"{flink_sql(call.this)} OVER a window is not supported: COUNT, SUM, AVG, MIN and MAX are (ROW_NUMBER "
                "only in a Top-N or deduplication).",
                call,
            )
        if _window_text(spec) != _window_text(first):
            raise TranspileError(
                "All OVER aggregates of a SELECT must use the same window (Flink's rule for streaming queries).", call
            )
    frame, time = _frame(first, select, rowtimes, proctimes)
    view = f"__over_{number}"
    helpers: list[exp.Expr] = [exp.alias_(time.copy(), TIME, quoted=True)]
    keys = []
    for index, key in enumerate(first.args.get("partition_by") or []):
        keys.append(f"__over_k{index}")
        helpers.append(exp.alias_(key.copy(), keys[-1], quoted=True))
    outer_columns = [
        c
        for p in select.selects
        for c in p.find_all(exp.Column)
        if c.find_ancestor(exp.Window) is None and not isinstance(c.this, exp.Star)
    ]
    found = OverAggregation(view, exp.Select(), keys, frame)
    for index, call in enumerate(calls):
        aggregate = call.this
        if isinstance(aggregate.this, exp.Distinct):
            raise TranspileError(f"{flink_sql(aggregate)} OVER a window is not supported (DISTINCT).", aggregate)
        argument = None
        if not isinstance(aggregate.this, exp.Star):
            argument = f"__over_a{index}"
            helpers.append(exp.alias_(aggregate.this.copy(), argument, quoted=True))
        output = f"__over_{number}_{index}"
        found.aggregates.append(AggregateCall(AGGREGATES[type(aggregate)], argument, output))
        call.replace(exp.column(output, quoted=True))
    read: dict[str, str] = {}
    for column in outer_columns:
        name = read.setdefault(column.sql(), f"__over_c{len(read)}")
        if name not in [h.alias for h in helpers]:
            helpers.append(exp.alias_(column.copy(), name, quoted=True))
        replacement: exp.Expr = exp.column(name, quoted=True)
        if column.parent is select:  # a projection keeps its name
            replacement = exp.alias_(replacement, column.output_name, quoted=True)
        column.replace(replacement)
    inner = exp.Select(
        expressions=[p.copy() for p in select.selects if isinstance(p, exp.Star) or _is_table_star(p)] + helpers
    )
    for clause in ("from_", "joins", "laterals", "where"):
        moved = select.args.get(clause)
        if moved is not None:
            select.set(clause, None)
            inner.set(clause, moved)
    select.set("windows", None)
    found.select = inner
    hidden = [exp.to_identifier(h.alias, quoted=True) for h in helpers]
    projections = []
    for projection in select.selects:
        if isinstance(projection, exp.Star) or _is_table_star(projection):
            projection = exp.Star(except_=[exp.column(h) for h in hidden])
        projections.append(projection)
    select.set("expressions", projections)
    select.set("from_", exp.From(this=exp.Table(this=exp.to_identifier(view))))
    return found


def _is_table_star(node: exp.Expr) -> bool:
    return isinstance(node, exp.Column) and isinstance(node.this, exp.Star)


def _resolve(call: exp.Window, select: exp.Select) -> exp.Window:
    """The window of an OVER call: written out, or named (`OVER w`) by the SELECT's WINDOW clause."""
    if call.args.get("order") is not None or call.args.get("partition_by") or call.args.get("spec") is not None:
        return call
    name = call.args.get("alias")
    for named in select.args.get("windows") or []:
        if name is not None and named.this.name.lower() == name.name.lower():
            return named
    raise TranspileError(
        f"OVER {name.name if name is not None else '()'} names no window of this SELECT's WINDOW clause, and an "
        "OVER window needs ORDER BY a time attribute.",
        call,
    )


def _window_text(window: exp.Window) -> str:
    parts = [window.args.get(k) for k in ("partition_by", "order", "spec")]
    return " | ".join(
        "" if p is None else ",".join(x.sql() for x in p) if isinstance(p, list) else p.sql() for p in parts
    )


def _frame(
    window: exp.Window, select: exp.Select, rowtimes: Mapping[str, str], proctimes: Mapping[str, str]
) -> tuple[Frame, exp.Column]:
    order = window.args.get("order")
    orderings = order.expressions if isinstance(order, exp.Order) else []
    time = orderings[0].this if len(orderings) == 1 else None
    relations = {t.name.lower() for t in select.find_all(exp.Table)}
    relations |= {t.alias.lower() for t in select.find_all(exp.Table) if t.alias}
    named = time.name.lower() if isinstance(time, exp.Column) else ""
    rowtime = any(rowtimes.get(r) == named for r in relations)
    proctime = any(proctimes.get(r) == named for r in relations)
    if not isinstance(time, exp.Column) or not (rowtime or proctime) or orderings[0].args.get("desc"):
        raise TranspileError(
            "An OVER window must be ordered by one time attribute ascending (Flink's rule for streaming queries): "
            "the rowtime column of a table with a WATERMARK, or a PROCTIME() column.",
            order if order is not None else window,
        )
    spec = window.args.get("spec")
    if spec is None:  # ORDER BY alone: RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
        return Frame(False, None, rowtime), time
    end = spec.args.get("end")
    if (end not in (None, "CURRENT ROW")) or spec.args.get("start_side") != "PRECEDING":
        raise TranspileError(
            "An OVER window's frame must end at CURRENT ROW and start PRECEDING it (Flink supports no FOLLOWING).",
            spec,
        )
    rows = str(spec.args.get("kind")).upper() == "ROWS"
    start = spec.args.get("start")
    if start == "UNBOUNDED":
        return Frame(rows, None, rowtime), time
    if rows and isinstance(start, exp.Literal) and start.is_int:
        return Frame(True, int(start.name), rowtime), time
    if not rows and isinstance(start, exp.Interval):
        return Frame(False, interval_micros(start) // 1000, rowtime), time
    raise TranspileError(
        "An OVER window starts UNBOUNDED PRECEDING, at `n` PRECEDING rows (ROWS) or at an interval PRECEDING "
        "(RANGE INTERVAL '1' HOUR PRECEDING, as it is ordered by time).",
        spec,
    )
