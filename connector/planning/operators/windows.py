"""Flink window aggregations rewritten as Spark time windows.

* Window TVFs (`FROM TABLE(TUMBLE|HOP|CUMULATE|SESSION(...))`) become derived tables that keep every input
  column and add `window_start`, `window_end` and `window_time`. A hidden struct column `__w` (a Spark time
  window) rides along, and a `GROUP BY window_start, window_end` also groups by `__w`: Spark's streaming
  aggregation needs exactly one grouping key that carries the watermark, and it closes a group when the
  watermark passes that window's end, as Flink fires a window.

  - TUMBLE(size[, offset])         -> window(ts, size, size, offset mod size)
  - HOP(slide, size[, offset])     -> window(ts, size, slide, offset mod slide)   (Spark: size first)
  - SESSION(gap) [PARTITION BY k]  -> session_window(ts, gap), grouped by the partition keys
  - CUMULATE(step, size[, offset]) -> no Spark builtin. Each row is assigned its tumbling window of `size`,
    then exploded into the cumulative windows [start, start + k*step) that contain it; a per-row
    `session_window(ts, end - ts)` gives each of those rows a time window ending exactly at the cumulative
    end, so rows of one cumulative window merge into one session and Spark emits it when the watermark
    passes its end (as Flink does), instead of waiting for the whole tumbling window.

  `window_time` is Spark's `window_time(window)`: window_end - 1 microsecond (Flink: - 1 millisecond). It
  stays a time attribute (it keeps the watermark), so cascading window aggregations work; written to a
  TIMESTAMP(3) column it is the same value Flink writes.
* Legacy group windows (`GROUP BY TUMBLE(ts, size)` with TUMBLE_START/_END/_ROWTIME) become
  `GROUP BY window(ts, ...)` / `session_window(ts, gap)` and `window.start` / `window.end`; *_ROWTIME is
  `window.end - 1 microsecond` there and is not a time attribute.

Both rewrite one SELECT in place; `watermarks` maps a table name to its watermarked column (lower case).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from decimal import Decimal

from sqlglot import exp

from connector.sql.dialect.expressions import WindowTVF
from connector.sql.rewrite.intervals import (
    MICROS,
    ONE_MICROSECOND,
    decimal_text,
    duration_literal,
    duration_text,
    interval_micros,
)
from connector.sql.rewrite.nodes import (
    TranspileError,
    call_args,
    call_name,
    col,
    flink_sql,
    fn,
    own_nodes,
    star_select,
    struct_field,
)

_WINDOW_COLUMNS = ("window_start", "window_end", "window_time")
HIDDEN_WINDOW = "__w"  # the Spark window struct of a window TVF
_TUMBLE_WINDOW = "__t"  # CUMULATE: the tumbling window of `size` a row falls in
_CUMULATE_END = "__cum_end"  # CUMULATE: one cumulative window end per exploded row
_ALL_ROWS = "__all"  # SESSION without PARTITION BY: Spark streams session windows only next to another key


# -- window TVFs -------------------------------------------------------------------------------------


def rewrite_window_tvfs(select: exp.Select, watermarks: Mapping[str, str]) -> None:
    """Replaces each `TABLE(TUMBLE|HOP|CUMULATE|SESSION(...))` in the FROM and JOINs of `select`."""
    sources = [select.args.get("from_"), *(select.args.get("joins") or [])]
    for source in sources:
        if source is not None and isinstance(source.this, WindowTVF):
            _window_tvf(select, source.this, watermarks)


def _window_tvf(select: exp.Select, tvf: WindowTVF, watermarks: Mapping[str, str]) -> None:
    """The TVF becomes a derived table; `select` hides `__w` from its stars and groups by it."""
    kind = str(tvf.args["kind"]).upper()
    alias = tvf.alias or None
    _check_time_column(tvf.this, tvf.args["timecol"], kind, watermarks)
    derived = _tvf_relation(tvf, kind)
    derived.set("alias", tvf.args.get("alias"))
    if tvf.args.get("joins"):
        derived.set("joins", tvf.args["joins"])
    tvf.replace(derived)
    hidden = col(HIDDEN_WINDOW, alias)
    for projection in select.expressions:
        star = projection.this if isinstance(projection, exp.Column) else projection
        if isinstance(star, exp.Star) and (star is projection or (alias and projection.table == alias)):
            star.set("except_", [*(star.args.get("except_") or []), col(HIDDEN_WINDOW)])
    if kind == "SESSION":
        _session_grouping(select, tvf, alias, hidden)
        return
    group = select.args.get("group")
    grouped = {_window_column(e, alias) for e in group.expressions} if group else set()
    if group and grouped & {"window_start", "window_end"} and "window_time" not in grouped:
        group.append("expressions", hidden)


def _tvf_relation(tvf: WindowTVF, kind: str) -> exp.Subquery:
    """The rows of the TVF's input with `__w` and, except for SESSION, the three window columns added."""
    source = tvf.this
    ts = exp.Column(this=tvf.args["timecol"].this.copy())
    if kind == "SESSION":
        gap = _required(tvf, "gap")
        session = exp.alias_(fn("session_window", ts, duration_literal(gap)), HIDDEN_WINDOW)
        if tvf.args.get("partition_by"):
            return star_select(source, session).subquery()
        return star_select(source, session, exp.alias_(exp.true(), _ALL_ROWS)).subquery()
    size = _required(tvf, "size")
    slide = _required(tvf, "slide") if kind == "HOP" else size
    window_args: list[exp.Expr] = [ts, duration_literal(size), duration_literal(slide)]
    offset = tvf.args.get("offset")
    shift = interval_micros(offset) % interval_micros(slide) if offset is not None else 0
    if shift:
        window_args.append(exp.Literal.string(duration_text(shift)))
    start: exp.Expr
    end: exp.Expr
    if kind in ("TUMBLE", "HOP"):
        assigned = star_select(source, exp.alias_(fn("window", *window_args), HIDDEN_WINDOW))
        hidden = col(HIDDEN_WINDOW)
        start, end = struct_field(hidden, "start"), struct_field(hidden, "end")
        exclude: tuple[str, ...] = ()
    else:
        assigned = _cumulate_windows(tvf, source, ts, window_args)
        start, end = struct_field(col(_TUMBLE_WINDOW), "start"), col(_CUMULATE_END)
        exclude = (_TUMBLE_WINDOW, _CUMULATE_END)
    exposed = star_select(
        assigned.subquery(),
        exp.alias_(start, "window_start"),
        exp.alias_(end, "window_end"),
        exp.alias_(fn("window_time", col(HIDDEN_WINDOW)), "window_time"),
        exclude=exclude,
    )
    return exposed.subquery()


def _cumulate_windows(tvf: WindowTVF, source: exp.Expr, ts: exp.Column, window_args: list[exp.Expr]) -> exp.Select:
    """One row per cumulative window containing the row, each with a session window ending at its end."""
    step = _required(tvf, "step")
    size_micros, step_micros = interval_micros(tvf.args["size"]), interval_micros(step)
    if step_micros <= 0 or size_micros % step_micros:
        raise TranspileError("CUMULATE needs a positive step that divides the window size.", tvf)
    step_seconds = decimal_text(Decimal(step_micros) / MICROS["SECOND"])
    step_interval = exp.Interval(this=exp.Literal.string(step_seconds), unit=exp.var("SECOND"))
    tumble = star_select(source, exp.alias_(fn("window", *window_args), _TUMBLE_WINDOW))
    t_start, t_end = struct_field(col(_TUMBLE_WINDOW), "start"), struct_field(col(_TUMBLE_WINDOW), "end")
    ends = fn("sequence", exp.Add(this=t_start, expression=step_interval), t_end, step_interval.copy())
    after_row = exp.Lambda(
        this=exp.GT(this=col("__end"), expression=ts.copy()), expressions=[exp.to_identifier("__end")]
    )
    exploded = star_select(
        tumble.subquery(), exp.alias_(exp.Explode(this=fn("filter", ends, after_row)), _CUMULATE_END)
    )
    micros_to_end = fn("timestampdiff", exp.var("MICROSECOND"), ts.copy(), col(_CUMULATE_END))
    gap = fn(
        "make_interval",
        *[exp.Literal.number(0)] * 6,
        exp.Div(this=micros_to_end, expression=exp.Literal.number(1_000_000)),
    )
    return star_select(exploded.subquery(), exp.alias_(fn("session_window", ts.copy(), gap), HIDDEN_WINDOW))


def _required(tvf: WindowTVF, arg: str) -> exp.Expr:
    value = tvf.args.get(arg)
    if value is None:
        raise TranspileError(f"{tvf.args['kind']} needs its {arg.upper()} argument.", tvf)
    return value


def _check_time_column(relation: exp.Expr, timecol: exp.Expr, what: str, watermarks: Mapping[str, str]) -> None:
    """A window over a named relation must use its watermarked column, as Flink needs a time attribute."""
    if not isinstance(relation, exp.Table):
        return
    rowtime = watermarks.get(relation.name.lower())
    if rowtime is not None and timecol.name.lower() != rowtime:
        raise TranspileError(
            f"{what} windows must use the watermarked time attribute of '{relation.name}' (`{rowtime}`), "
            f"not `{timecol.name}`: Spark closes windows only on a column with a watermark.",
            timecol,
        )


def _window_column(node: exp.Expr, alias: str | None) -> str | None:
    """Which of window_start/_end/_time `node` reads from the TVF aliased `alias`, if any."""
    if not isinstance(node, exp.Column) or node.name.lower() not in _WINDOW_COLUMNS:
        return None
    if node.table and (alias is None or node.table.lower() != alias.lower()):
        return None
    return node.name.lower()


def _session_grouping(select: exp.Select, tvf: WindowTVF, alias: str | None, hidden: exp.Column) -> None:
    """Spark merges sessions only inside the aggregation: group by the window, read its bounds there."""
    group = select.args.get("group")
    grouped = [_window_column(e, alias) for e in group.expressions] if group else []
    if group is None or not {"window_start", "window_end"} <= set(grouped):
        raise TranspileError(
            "SESSION windows can only be aggregated in Spark: add GROUP BY window_start, window_end "
            "(and the PARTITION BY keys).",
            tvf,
        )
    keys = [e for e, w in zip(group.expressions, grouped, strict=True) if w is None]
    partition = {c.name.lower() for c in tvf.args.get("partition_by") or []}
    if {k.name.lower() if isinstance(k, exp.Column) else k.sql() for k in keys} != partition:
        raise TranspileError(
            "A SESSION window aggregation must GROUP BY exactly its PARTITION BY keys besides "
            f"window_start and window_end (PARTITION BY {', '.join(sorted(partition)) or 'nothing'}): "
            "Spark builds one session per group.",
            group,
        )
    group.set("expressions", [*(keys or [col(_ALL_ROWS, alias)]), hidden])
    bounds: dict[str, Callable[[], exp.Expr]] = {
        "window_start": lambda: struct_field(hidden, "start"),
        "window_end": lambda: struct_field(hidden, "end"),
        "window_time": lambda: exp.Sub(this=struct_field(hidden, "end"), expression=ONE_MICROSECOND.copy()),
    }
    for column in own_nodes(select, exp.Column):
        name = _window_column(column, alias)
        if name is None or column.parent is group:
            continue
        replacement = bounds[name]()
        if column.parent is select and column.arg_key == "expressions":
            replacement = exp.alias_(replacement, column.name)
        column.replace(replacement)


# -- legacy group windows ----------------------------------------------------------------------------


def rewrite_group_windows(select: exp.Select, watermarks: Mapping[str, str]) -> None:
    """Replaces `GROUP BY TUMBLE|HOP|SESSION(ts, ...)` of `select` and its *_START/_END/_ROWTIME calls."""
    group = select.args.get("group")
    windows = [e for e in (group.expressions if group else []) if call_name(e) in ("TUMBLE", "HOP", "SESSION")]
    auxiliary = [
        node
        for node in own_nodes(select, exp.Func)
        if call_name(node).rsplit("_", 1)[0] in ("TUMBLE", "HOP", "SESSION")
        and call_name(node).rsplit("_", 1)[-1] in ("START", "END", "ROWTIME")
    ]
    if not windows:
        if auxiliary:
            raise TranspileError(
                f"{call_name(auxiliary[0])}() needs a matching GROUP BY {call_name(auxiliary[0]).split('_')[0]}(...).",
                auxiliary[0],
            )
        return
    if len(windows) > 1:
        raise TranspileError("Only one group window is allowed per GROUP BY.", windows[1])
    window = windows[0]
    kind = call_name(window)
    args = call_args(window)
    expected = {"TUMBLE": 2, "HOP": 3, "SESSION": 2}[kind]
    if len(args) != expected:
        raise TranspileError(f"Group window {kind} takes {expected} arguments here.", window)
    ts, durations = args[0], args[1:]
    relation = select.args["from_"].this if select.args.get("from_") else None
    if relation is not None and not select.args.get("joins"):
        _check_time_column(relation, ts, kind, watermarks)
    if kind == "TUMBLE":
        spark_window = fn("window", ts.copy(), duration_literal(durations[0]))
    elif kind == "HOP":
        spark_window = fn("window", ts.copy(), duration_literal(durations[1]), duration_literal(durations[0]))
    else:
        spark_window = fn("session_window", ts.copy(), duration_literal(durations[0]))
    struct = exp.column("session_window" if kind == "SESSION" else "window", quoted=True)
    signature = [flink_sql(a) for a in args]
    for node in auxiliary:
        name = call_name(node)
        if not name.startswith(kind + "_") or [flink_sql(a) for a in call_args(node)] != signature:
            raise TranspileError(f"{name}() must repeat the arguments of GROUP BY {flink_sql(window)}.", node)
        field = name.rsplit("_", 1)[-1]
        if field == "START":
            node.replace(struct_field(struct, "start"))
        elif field == "END":
            node.replace(struct_field(struct, "end"))
        else:
            node.replace(exp.Sub(this=struct_field(struct, "end"), expression=ONE_MICROSECOND.copy()))
    window.replace(spark_window)
