"""Flink SQL queries rewritten as Spark SQL for Structured Streaming.

The SELECT of every INSERT and view is a sqlglot tree in the `flink` dialect. `transpile` rewrites a copy of it
into a tree that, generated in sqlglot's `spark` dialect, computes the same rows in Spark. What needs more
than renaming:

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
* `CROSS JOIN UNNEST(arr) AS t(x)` -> `LATERAL VIEW explode(arr) t AS x`; with two or more column names
  the array is taken to hold rows -> `inline(arr)` (a MAP cannot be told apart without types: unnest
  `MAP_ENTRIES(m)` instead); `LEFT JOIN UNNEST(...) ON TRUE` -> `LATERAL VIEW OUTER`.
* Built-ins whose Spark namesake differs (see `_FUNCTIONS`), CASTs to Flink types (via `connector.sql.types`),
  plural interval units, 1-based array subscripts, and catalog-qualified table names (Spark sees the
  temporary view registered under the bare table name).

Anything Spark cannot compute the same way raises `TranspileError(message, node)`; `node` is the offending
node of the caller's tree (it keeps its position), so the validator can point at the line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from decimal import Decimal, InvalidOperation

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect

from connector.sql import types
from connector.sql.dialect import WindowTVF

WINDOW_COLUMNS = ("window_start", "window_end", "window_time")
_HIDDEN_WINDOW = "__w"  # the Spark window struct of a window TVF
_TUMBLE_WINDOW = "__t"  # CUMULATE: the tumbling window of `size` a row falls in
_CUMULATE_END = "__cum_end"  # CUMULATE: one cumulative window end per exploded row
_ALL_ROWS = "__all"  # SESSION without PARTITION BY: Spark streams session windows only next to another key
_MICROS = {
    "DAY": 86_400_000_000,
    "HOUR": 3_600_000_000,
    "MINUTE": 60_000_000,
    "SECOND": 1_000_000,
    "MILLISECOND": 1_000,
    "MICROSECOND": 1,
}
_MONTHS = {"YEAR": 12, "MONTH": 1}
_UNIT_ALIASES = {"WEEK": ("DAY", 7), "QUARTER": ("MONTH", 3)}
_ONE_MICROSECOND = exp.Interval(this=exp.Literal.string("0.000001"), unit=exp.var("SECOND"))


class TranspileError(Exception):
    """A Flink construct with no faithful Spark equivalent; `node` is where it is written."""

    def __init__(self, message: str, node: exp.Expr | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.node = node


def to_spark_sql(query: exp.Query, *, watermarks: Mapping[str, str] | None = None, streaming: bool = True) -> str:
    """Spark SQL text computing what the Flink `query` computes (see `transpile`)."""
    return transpile(query, watermarks=watermarks, streaming=streaming).sql(dialect="spark")


def transpile(query: exp.Query, *, watermarks: Mapping[str, str] | None = None, streaming: bool = True) -> exp.Query:
    """The Spark-dialect tree for a Flink query; `query` itself is not modified.

    `watermarks` maps a table or view name to its watermarked (rowtime) column, as registered for Spark;
    windows over a named relation must then use that column, as Flink requires a time attribute.
    `streaming` rejects what Spark Structured Streaming cannot run (OVER windows, DISTINCT aggregates other
    than COUNT) and rewrites COUNT(DISTINCT x), which Spark streams only as size(collect_set(x)).
    """
    rewriter = _Rewriter({k.lower(): v.lower() for k, v in (watermarks or {}).items()}, streaming)
    return rewriter.query(query)


def spark_duration(interval: exp.Expr) -> str:
    """A Flink day-time interval literal as a Spark duration string ('10 minutes'), e.g. for withWatermark."""
    return _duration_text(_interval_micros(interval))


def _duration_text(micros: int) -> str:
    if micros == 0:
        return "0 seconds"
    for unit in ("DAY", "HOUR", "MINUTE", "SECOND", "MILLISECOND"):
        size = _MICROS[unit]
        if micros % size == 0:
            count = micros // size
            return f"{count} {unit.lower()}{'' if count == 1 else 's'}"
    return f"{micros} microseconds"


def watermark_delay(strategy: exp.Expr, column: str) -> str:
    """The Spark `withWatermark` delay for a Flink `WATERMARK FOR column AS strategy`.

    Flink's strategies are `ts` (strictly ascending: delay 0) and `ts - INTERVAL ...` (bounded
    out-of-orderness); Spark keeps `max(ts) - delay` either way.
    """
    if isinstance(strategy, exp.Paren):
        return watermark_delay(strategy.this, column)
    if isinstance(strategy, exp.Column) and strategy.name.lower() == column.lower():
        return "0 seconds"
    if (
        isinstance(strategy, exp.Sub)
        and isinstance(strategy.this, exp.Column)
        and strategy.this.name.lower() == column.lower()
    ):
        return spark_duration(strategy.expression)
    raise TranspileError(
        f"Watermark strategy '{strategy.sql(dialect='flink')}' is not supported: use `{column}` or "
        f"`{column} - INTERVAL 'n' <unit>`.",
        strategy,
    )


# -- intervals -----------------------------------------------------------------------------------------


def _interval_parts(node: exp.Expr) -> tuple[str, int]:
    """('micros', n) for a day-time interval literal, ('months', n) for a year-month one."""
    sign = 1
    while isinstance(node, (exp.Neg, exp.Paren)):
        sign = -sign if isinstance(node, exp.Neg) else sign
        node = node.this
    if not isinstance(node, exp.Interval) or not isinstance(node.this, exp.Literal):
        raise TranspileError(f"Expected an interval literal such as INTERVAL '5' SECOND, got '{_flink(node)}'.", node)
    text = node.this.name.strip()
    if text.startswith("-"):
        sign, text = -sign, text[1:].strip()
    unit = node.args.get("unit")
    if isinstance(unit, exp.IntervalSpan):
        kind, value = _span_value(text, unit.this.name.upper(), unit.expression.name.upper(), node)
    else:
        name = _singular(unit.name if unit is not None else "")
        kind, value = _single_value(text, name, node)
    return kind, sign * value


def _interval_micros(node: exp.Expr) -> int:
    kind, value = _interval_parts(node)
    if kind != "micros":
        raise TranspileError(f"'{_flink(node)}' is a year-month interval; a duration (DAY..SECOND) is needed.", node)
    return value


def _singular(unit: str) -> str:
    unit = unit.upper()
    return unit[:-1] if unit.endswith("S") and unit[:-1] in {*_MICROS, *_MONTHS, *_UNIT_ALIASES} else unit


def _single_value(text: str, unit: str, node: exp.Expr) -> tuple[str, int]:
    if unit in _UNIT_ALIASES:
        unit, factor = _UNIT_ALIASES[unit]
        kind, value = _single_value(text, unit, node)
        return kind, value * factor
    try:
        number = Decimal(text)
    except InvalidOperation:
        raise TranspileError(f"Interval value '{text}' is not a number.", node) from None
    if unit in _MONTHS and number == number.to_integral_value():
        return "months", int(number) * _MONTHS[unit]
    if unit in _MICROS:
        micros = number * _MICROS[unit]
        if micros == micros.to_integral_value():
            return "micros", int(micros)
    raise TranspileError(f"Interval '{_flink(node)}' cannot be represented (unit {unit or 'missing'}).", node)


_SPAN_PATTERNS = {
    ("YEAR", "MONTH"): r"(?P<YEAR>\d+)-(?P<MONTH>\d+)",
    ("DAY", "HOUR"): r"(?P<DAY>\d+) (?P<HOUR>\d+)",
    ("DAY", "MINUTE"): r"(?P<DAY>\d+) (?P<HOUR>\d+):(?P<MINUTE>\d+)",
    ("DAY", "SECOND"): r"(?P<DAY>\d+) (?P<HOUR>\d+):(?P<MINUTE>\d+):(?P<SECOND>\d+(\.\d+)?)",
    ("HOUR", "MINUTE"): r"(?P<HOUR>\d+):(?P<MINUTE>\d+)",
    ("HOUR", "SECOND"): r"(?P<HOUR>\d+):(?P<MINUTE>\d+):(?P<SECOND>\d+(\.\d+)?)",
    ("MINUTE", "SECOND"): r"(?P<MINUTE>\d+):(?P<SECOND>\d+(\.\d+)?)",
}


def _span_value(text: str, start: str, end: str, node: exp.Expr) -> tuple[str, int]:
    pattern = _SPAN_PATTERNS.get((start, end))
    match = re.fullmatch(pattern, text) if pattern else None
    if match is None:
        raise TranspileError(f"Interval '{_flink(node)}' does not match INTERVAL ... {start} TO {end}.", node)
    fields = match.groupdict()
    if start == "YEAR":
        return "months", int(fields["YEAR"]) * 12 + int(fields["MONTH"])
    micros = sum(Decimal(value) * _MICROS[unit] for unit, value in fields.items() if value is not None)
    return "micros", int(micros)


def _spark_interval(node: exp.Interval) -> exp.Expr:
    """A Flink interval literal as a Spark ANSI interval literal (singular units; ms/us as fractional seconds)."""
    if isinstance(node.args.get("unit"), exp.IntervalSpan) or not isinstance(node.this, exp.Literal):
        return node
    kind, value = _interval_parts(node)
    unit = _singular(node.args["unit"].name) if node.args.get("unit") else ""
    if kind == "months":
        spark_unit = "YEAR" if unit == "YEAR" else "MONTH"
        amount = str(value // 12) if spark_unit == "YEAR" else str(value)
    elif unit in ("DAY", "HOUR", "MINUTE") and value % _MICROS[unit] == 0:
        spark_unit, amount = unit, str(value // _MICROS[unit])
    elif unit == "WEEK":
        spark_unit, amount = "DAY", str(value // _MICROS["DAY"])
    else:
        spark_unit, amount = "SECOND", _decimal_text(Decimal(value) / _MICROS["SECOND"])
    return exp.Interval(this=exp.Literal.string(amount), unit=exp.var(spark_unit))


def _decimal_text(value: Decimal) -> str:
    text = format(value, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _duration_literal(interval: exp.Expr) -> exp.Literal:
    """A window size, slide or gap: a positive duration."""
    if _interval_micros(interval) <= 0:
        raise TranspileError(f"Window durations must be positive, got '{_flink(interval)}'.", interval)
    return exp.Literal.string(spark_duration(interval))


# -- the rewriter ----------------------------------------------------------------------------------------


def _fn(name: str, *args: exp.Expr) -> exp.Anonymous:
    return exp.Anonymous(this=name, expressions=list(args))


def _col(name: str, table: str | None = None) -> exp.Column:
    return exp.column(name, table=table)


def _field(struct: exp.Expr, field: str) -> exp.Dot:
    return exp.Dot(this=struct.copy(), expression=exp.to_identifier(field))


def _flink(node: exp.Expr) -> str:
    return node.sql(dialect="flink")


def _name(node: exp.Expr) -> str:
    """The upper-case name a Flink function call is written with."""
    if isinstance(node, exp.Anonymous):
        return str(node.this).upper()
    return node.sql_name().upper() if isinstance(node, exp.Func) else ""


def _star_select(source: exp.Expr, *extra: exp.Expr, exclude: tuple[str, ...] = ()) -> exp.Select:
    star = exp.Star(except_=[_col(c) for c in exclude]) if exclude else exp.Star()
    return exp.Select(expressions=[star, *extra]).from_(source, copy=False)


def _bottom_up(tree: exp.Expr, fun: Callable[[exp.Expr], exp.Expr]) -> exp.Expr:
    """Apply `fun` to every node, children before parents, so a replacement is built from rewritten parts."""
    root = tree
    for node in reversed(list(tree.walk(bfs=False))):
        new = fun(node)
        if new is node:
            continue
        if node is root:
            root = new
        else:
            node.replace(new)
    return root


def _own_nodes(select: exp.Select, kind: type[exp.Expr]) -> Iterator[exp.Expr]:
    """Nodes of `kind` that belong to `select` itself, not to a nested query."""
    for node in list(select.find_all(kind)):
        if node.find_ancestor(exp.Select) is select:
            yield node


class _Rewriter:
    def __init__(self, watermarks: dict[str, str], streaming: bool) -> None:
        self.watermarks = watermarks
        self.streaming = streaming
        self.flink = Dialect.get_or_raise("flink")

    def query(self, query: exp.Query) -> exp.Query:
        self.reject_unsupported(query)
        tree = query.copy()
        for select in reversed(list(tree.find_all(exp.Select))):
            self.window_tvfs(select)
            self.legacy_windows(select)
            self.unnest(select)
        result = _bottom_up(tree, self.expression)
        assert isinstance(result, exp.Query)
        return result

    # -- constructs Spark cannot run ---------------------------------------------------------------------

    def reject_unsupported(self, query: exp.Query) -> None:
        for node in query.walk():
            if isinstance(node, exp.Anonymous) and _name(node) == "CURRENT_WATERMARK":
                raise TranspileError(
                    "CURRENT_WATERMARK() has no Spark equivalent: Spark exposes no per-row watermark; late rows "
                    "are dropped by the windowed aggregation itself.",
                    node,
                )
            if isinstance(node, exp.Anonymous) and _name(node) in (
                "TUMBLE_PROCTIME",
                "HOP_PROCTIME",
                "SESSION_PROCTIME",
            ):
                raise TranspileError(
                    f"{_name(node)}() (a processing-time attribute of a group window) has no Spark equivalent; "
                    "use current_timestamp() in a later query instead.",
                    node,
                )
            if isinstance(node, exp.Table) and node.args.get("version") is not None:
                raise TranspileError(
                    "FOR SYSTEM_TIME AS OF (temporal / lookup join) has no Spark Structured Streaming "
                    "equivalent; join with a static table instead (a stream-static join reads its latest "
                    "version every micro-batch).",
                    node,
                )
            if isinstance(node, exp.MatchRecognize):
                raise TranspileError("MATCH_RECOGNIZE is not supported by Spark SQL.", node)
            if self.streaming and isinstance(node, exp.Window):
                raise TranspileError(
                    "OVER windows (ROW_NUMBER/RANK/aggregates OVER, as in Flink Top-N, deduplication and over "
                    "aggregation) are not supported by Spark Structured Streaming; use a windowed GROUP BY "
                    "instead.",
                    node,
                )
            if (
                self.streaming
                and isinstance(node, exp.Distinct)
                and isinstance(node.parent, exp.AggFunc)
                and not isinstance(node.parent, exp.Count)
            ):
                raise TranspileError(
                    f"{node.parent.sql_name()}(DISTINCT ...) is not supported by Spark Structured Streaming; "
                    "only COUNT(DISTINCT ...) is rewritten (to size(collect_set(...))).",
                    node.parent,
                )

    # -- window TVFs -------------------------------------------------------------------------------------

    def window_tvfs(self, select: exp.Select) -> None:
        sources = [select.args.get("from_"), *(select.args.get("joins") or [])]
        for source in sources:
            if source is not None and isinstance(source.this, WindowTVF):
                self.window_tvf(select, source.this)

    def window_tvf(self, select: exp.Select, tvf: WindowTVF) -> None:
        kind = str(tvf.args["kind"]).upper()
        alias = tvf.alias or None
        self.check_time_column(tvf.this, tvf.args["timecol"], kind)
        derived = self.tvf_relation(tvf, kind)
        derived.set("alias", tvf.args.get("alias"))
        if tvf.args.get("joins"):
            derived.set("joins", tvf.args["joins"])
        tvf.replace(derived)
        hidden = _col(_HIDDEN_WINDOW, alias)
        for projection in select.expressions:
            star = projection.this if isinstance(projection, exp.Column) else projection
            if isinstance(star, exp.Star) and (star is projection or (alias and projection.table == alias)):
                star.set("except_", [*(star.args.get("except_") or []), _col(_HIDDEN_WINDOW)])
        if kind == "SESSION":
            self.session_grouping(select, tvf, alias, hidden)
            return
        group = select.args.get("group")
        grouped = {self.window_column(e, alias) for e in group.expressions} if group else set()
        if group and grouped & {"window_start", "window_end"} and "window_time" not in grouped:
            group.append("expressions", hidden)

    def tvf_relation(self, tvf: WindowTVF, kind: str) -> exp.Subquery:
        source = tvf.this
        ts = exp.Column(this=tvf.args["timecol"].this.copy())
        if kind == "SESSION":
            gap = self.required(tvf, "gap")
            session = exp.alias_(_fn("session_window", ts, _duration_literal(gap)), _HIDDEN_WINDOW)
            if tvf.args.get("partition_by"):
                return _star_select(source, session).subquery()
            return _star_select(source, session, exp.alias_(exp.true(), _ALL_ROWS)).subquery()
        size = self.required(tvf, "size")
        slide = self.required(tvf, "slide") if kind == "HOP" else size
        window_args: list[exp.Expr] = [ts, _duration_literal(size), _duration_literal(slide)]
        offset = tvf.args.get("offset")
        shift = _interval_micros(offset) % _interval_micros(slide) if offset is not None else 0
        if shift:
            window_args.append(exp.Literal.string(_duration_text(shift)))
        start: exp.Expr
        end: exp.Expr
        if kind in ("TUMBLE", "HOP"):
            assigned = _star_select(source, exp.alias_(_fn("window", *window_args), _HIDDEN_WINDOW))
            hidden = _col(_HIDDEN_WINDOW)
            start, end = _field(hidden, "start"), _field(hidden, "end")
            exclude: tuple[str, ...] = ()
        else:
            assigned = self.cumulate_windows(tvf, source, ts, window_args)
            start, end = _field(_col(_TUMBLE_WINDOW), "start"), _col(_CUMULATE_END)
            exclude = (_TUMBLE_WINDOW, _CUMULATE_END)
        exposed = _star_select(
            assigned.subquery(),
            exp.alias_(start, "window_start"),
            exp.alias_(end, "window_end"),
            exp.alias_(_fn("window_time", _col(_HIDDEN_WINDOW)), "window_time"),
            exclude=exclude,
        )
        return exposed.subquery()

    def cumulate_windows(
        self, tvf: WindowTVF, source: exp.Expr, ts: exp.Column, window_args: list[exp.Expr]
    ) -> exp.Select:
        step = self.required(tvf, "step")
        size_micros, step_micros = _interval_micros(tvf.args["size"]), _interval_micros(step)
        if step_micros <= 0 or size_micros % step_micros:
            raise TranspileError("CUMULATE needs a positive step that divides the window size.", tvf)
        step_seconds = _decimal_text(Decimal(step_micros) / _MICROS["SECOND"])
        step_interval = exp.Interval(this=exp.Literal.string(step_seconds), unit=exp.var("SECOND"))
        tumble = _star_select(source, exp.alias_(_fn("window", *window_args), _TUMBLE_WINDOW))
        t_start, t_end = _field(_col(_TUMBLE_WINDOW), "start"), _field(_col(_TUMBLE_WINDOW), "end")
        ends = _fn("sequence", exp.Add(this=t_start, expression=step_interval), t_end, step_interval.copy())
        after_row = exp.Lambda(
            this=exp.GT(this=_col("__end"), expression=ts.copy()), expressions=[exp.to_identifier("__end")]
        )
        exploded = _star_select(
            tumble.subquery(), exp.alias_(exp.Explode(this=_fn("filter", ends, after_row)), _CUMULATE_END)
        )
        micros_to_end = _fn("timestampdiff", exp.var("MICROSECOND"), ts.copy(), _col(_CUMULATE_END))
        gap = _fn(
            "make_interval",
            *[exp.Literal.number(0)] * 6,
            exp.Div(this=micros_to_end, expression=exp.Literal.number(1_000_000)),
        )
        return _star_select(exploded.subquery(), exp.alias_(_fn("session_window", ts.copy(), gap), _HIDDEN_WINDOW))

    def required(self, tvf: WindowTVF, arg: str) -> exp.Expr:
        value = tvf.args.get(arg)
        if value is None:
            raise TranspileError(f"{tvf.args['kind']} needs its {arg.upper()} argument.", tvf)
        return value

    def check_time_column(self, relation: exp.Expr, timecol: exp.Expr, what: str) -> None:
        if not isinstance(relation, exp.Table):
            return
        rowtime = self.watermarks.get(relation.name.lower())
        if rowtime is not None and timecol.name.lower() != rowtime:
            raise TranspileError(
                f"{what} windows must use the watermarked time attribute of '{relation.name}' (`{rowtime}`), "
                f"not `{timecol.name}`: Spark closes windows only on a column with a watermark.",
                timecol,
            )

    def window_column(self, node: exp.Expr, alias: str | None) -> str | None:
        if not isinstance(node, exp.Column) or node.name.lower() not in WINDOW_COLUMNS:
            return None
        if node.table and (alias is None or node.table.lower() != alias.lower()):
            return None
        return node.name.lower()

    def session_grouping(self, select: exp.Select, tvf: WindowTVF, alias: str | None, hidden: exp.Column) -> None:
        """Spark merges sessions only inside the aggregation: group by the window, read its bounds there."""
        group = select.args.get("group")
        grouped = [self.window_column(e, alias) for e in group.expressions] if group else []
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
        group.set("expressions", [*(keys or [_col(_ALL_ROWS, alias)]), hidden])
        bounds: dict[str, Callable[[], exp.Expr]] = {
            "window_start": lambda: _field(hidden, "start"),
            "window_end": lambda: _field(hidden, "end"),
            "window_time": lambda: exp.Sub(this=_field(hidden, "end"), expression=_ONE_MICROSECOND.copy()),
        }
        for column in _own_nodes(select, exp.Column):
            name = self.window_column(column, alias)
            if name is None or column.parent is group:
                continue
            replacement = bounds[name]()
            if column.parent is select and column.arg_key == "expressions":
                replacement = exp.alias_(replacement, column.name)
            column.replace(replacement)

    # -- legacy group windows ----------------------------------------------------------------------------

    def legacy_windows(self, select: exp.Select) -> None:
        group = select.args.get("group")
        windows = [e for e in (group.expressions if group else []) if _name(e) in ("TUMBLE", "HOP", "SESSION")]
        auxiliary = [
            node
            for node in _own_nodes(select, exp.Func)
            if _name(node).rsplit("_", 1)[0] in ("TUMBLE", "HOP", "SESSION")
            and _name(node).rsplit("_", 1)[-1] in ("START", "END", "ROWTIME")
        ]
        if not windows:
            if auxiliary:
                raise TranspileError(
                    f"{_name(auxiliary[0])}() needs a matching GROUP BY {_name(auxiliary[0]).split('_')[0]}(...).",
                    auxiliary[0],
                )
            return
        if len(windows) > 1:
            raise TranspileError("Only one group window is allowed per GROUP BY.", windows[1])
        window = windows[0]
        kind = _name(window)
        args = list(window.expressions) if isinstance(window, exp.Anonymous) else [window.this, *window.expressions]
        expected = {"TUMBLE": 2, "HOP": 3, "SESSION": 2}[kind]
        if len(args) != expected:
            raise TranspileError(f"Group window {kind} takes {expected} arguments here.", window)
        ts, durations = args[0], args[1:]
        relation = select.args["from_"].this if select.args.get("from_") else None
        if relation is not None and not select.args.get("joins"):
            self.check_time_column(relation, ts, kind)
        if kind == "TUMBLE":
            spark_window = _fn("window", ts.copy(), _duration_literal(durations[0]))
        elif kind == "HOP":
            spark_window = _fn("window", ts.copy(), _duration_literal(durations[1]), _duration_literal(durations[0]))
        else:
            spark_window = _fn("session_window", ts.copy(), _duration_literal(durations[0]))
        struct = exp.column("session_window" if kind == "SESSION" else "window", quoted=True)
        signature = [_flink(a) for a in args]
        for node in auxiliary:
            name = _name(node)
            node_args = list(node.expressions) if isinstance(node, exp.Anonymous) else [node.this, *node.expressions]
            if not name.startswith(kind + "_") or [_flink(a) for a in node_args] != signature:
                raise TranspileError(f"{name}() must repeat the arguments of GROUP BY {_flink(window)}.", node)
            field = name.rsplit("_", 1)[-1]
            if field == "START":
                node.replace(_field(struct, "start"))
            elif field == "END":
                node.replace(_field(struct, "end"))
            else:
                node.replace(exp.Sub(this=_field(struct, "end"), expression=_ONE_MICROSECOND.copy()))
        window.replace(spark_window)

    # -- UNNEST ------------------------------------------------------------------------------------------

    def unnest(self, select: exp.Select) -> None:
        kept: list[exp.Join] = []
        for join in select.args.get("joins") or []:
            if isinstance(join.this, exp.Unnest):
                select.append("laterals", self.lateral_view(join, join.this))
            elif select.args.get("laterals"):
                raise TranspileError(
                    "A join after CROSS JOIN UNNEST is not supported in Spark (LATERAL VIEW comes after all "
                    "joins): move the UNNEST last.",
                    join,
                )
            else:
                kept.append(join)
        select.set("joins", kept or None)

    def lateral_view(self, join: exp.Join, unnest: exp.Unnest) -> exp.Lateral:
        on = join.args.get("on")
        outer = str(join.args.get("side") or "").upper() == "LEFT"
        if on is not None and not (isinstance(on, exp.Boolean) and on.this is True):
            raise TranspileError("JOIN UNNEST(...) supports only ON TRUE.", on)
        if len(unnest.expressions) != 1:
            raise TranspileError(
                "UNNEST of several arrays at once is not supported; unnest one array per join.", unnest
            )
        array = unnest.expressions[0]
        alias = unnest.args.get("alias")
        columns = list(alias.columns) if alias else []
        ordinality = unnest.args.get("offset")
        if ordinality:
            if isinstance(ordinality, exp.Identifier) and len(columns) == 1:
                columns.append(ordinality)
            if len(columns) != 2:
                raise TranspileError(
                    "UNNEST ... WITH ORDINALITY is supported for arrays of scalars: AS t(value, ord).", unnest
                )
            element, index = exp.to_identifier("__e"), exp.to_identifier("__i")
            numbered = exp.Lambda(
                this=_fn(
                    "struct",
                    exp.column(element),
                    exp.Add(this=exp.column(index), expression=exp.Literal.number(1)),
                ),
                expressions=[element, index],
            )
            generator: exp.Expr = _fn("inline", _fn("transform", array, numbered))
        elif len(columns) >= 2:
            generator = _fn("inline", array)
        else:
            generator = exp.Explode(this=array)
        table_alias = exp.TableAlias(
            this=(alias.this if alias and alias.this else exp.to_identifier("__unnest")), columns=columns
        )
        return exp.Lateral(this=generator, view=True, outer=outer, alias=table_alias)

    # -- expressions -------------------------------------------------------------------------------------

    def expression(self, node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Table):
            return self.table(node)
        if isinstance(node, (exp.Cast, exp.TryCast)) and isinstance(node.args.get("to"), exp.DataType):
            return self.cast(node)
        if isinstance(node, exp.Interval):
            return _spark_interval(node)
        if isinstance(node, exp.Bracket):
            return self.subscript(node)
        if (
            isinstance(node, exp.Column)
            and not node.table
            and not node.this.quoted
            and node.name.upper() == "LOCALTIMESTAMP"
        ):
            return _fn("localtimestamp")
        if isinstance(node, exp.Count) and isinstance(node.this, exp.Distinct) and self.streaming:
            return self.count_distinct(node.this)
        handler = _FUNCTIONS.get(_name(node)) if isinstance(node, exp.Anonymous) else _NODES.get(type(node))
        return handler(self, node) if handler else node

    def table(self, node: exp.Table) -> exp.Table:
        node.set("catalog", None)
        node.set("db", None)
        node.set("hints", None)
        return node

    def cast(self, node: exp.Cast) -> exp.Expr:
        target = node.args["to"]
        if target.this == exp.DataType.Type.TIME:
            raise TranspileError(
                "CAST to TIME is not supported: TIME values are carried as STRING in Spark; use "
                "DATE_FORMAT(ts, 'HH:mm:ss') instead.",
                node,
            )
        try:
            ddl = types.spark_type_ddl(target)
        except types.TypeMappingError as err:
            raise TranspileError(str(err), node) from None
        node.set("to", exp.DataType.build(ddl, dialect="spark", udt=True))
        return node

    def subscript(self, node: exp.Bracket) -> exp.Expr:
        """Flink `a[i]` is 1-based on arrays and a key lookup on maps, NULL when absent: try_element_at."""
        if len(node.expressions) != 1:
            raise TranspileError("Subscripts take exactly one index.", node)
        (index,) = exp.apply_index_offset(node.this, node.expressions, self.flink.INDEX_OFFSET, self.flink)
        return _fn("try_element_at", node.this, index)

    def count_distinct(self, distinct: exp.Distinct) -> exp.Expr:
        values = distinct.expressions
        if len(values) == 1:
            element: exp.Expr = values[0]
        else:
            present = exp.and_(*[exp.Not(this=exp.Is(this=v.copy(), expression=exp.Null())) for v in values])
            element = exp.Case(ifs=[exp.If(this=present, true=_fn("struct", *values))])
        return _fn("size", _fn("collect_set", element))


# -- built-in functions ------------------------------------------------------------------------------------


def _args(node: exp.Expr) -> list[exp.Expr]:
    return list(node.expressions) if isinstance(node, exp.Anonymous) else [node.this, *node.expressions]


def _to_timestamp_ltz(_: _Rewriter, node: exp.Expr) -> exp.Expr:
    args = _args(node)
    value = args[0]
    second = args[1] if len(args) > 1 else None
    if (isinstance(value, exp.Literal) and value.is_string) or (isinstance(second, exp.Literal) and second.is_string):
        if len(args) > 2:
            raise TranspileError(
                "TO_TIMESTAMP_LTZ(string, format, timezone) is not supported; convert the zone first.", node
            )
        return _fn("try_to_timestamp", *args)
    precision = int(second.name) if isinstance(second, exp.Literal) else 3 if second is None else None
    functions = {0: "timestamp_seconds", 3: "timestamp_millis", 6: "timestamp_micros"}
    if precision not in functions:
        raise TranspileError("TO_TIMESTAMP_LTZ(n, precision) supports precision 0 (seconds), 3 (ms) or 6 (us).", node)
    return _fn(functions[precision], value)


def _to_timestamp(_: _Rewriter, node: exp.Expr) -> exp.Expr:
    """Flink returns NULL for text it cannot parse; Spark's ANSI to_timestamp would fail the query."""
    args = _args(node)
    ntz = exp.DataType.build("TIMESTAMP_NTZ", dialect="spark")
    if len(args) == 1:
        return exp.TryCast(this=args[0], to=ntz, safe=True)
    return exp.Cast(this=_fn("try_to_timestamp", *args), to=ntz)


def _json_path(path: exp.Expr) -> exp.Expr:
    """Spark's JSONPath has no SQL/JSON mode prefix (`lax $.a`); Flink's default mode is lax."""
    if isinstance(path, exp.Literal) and path.is_string:
        return exp.Literal.string(re.sub(r"^\s*(lax|strict)\s+", "", path.name, flags=re.IGNORECASE))
    return path


def _json_value(rewriter: _Rewriter, node: exp.Expr) -> exp.Expr:
    args = _args(node) if isinstance(node, exp.Anonymous) else [node.this, node.args["path"]]
    value: exp.Expr = _fn("get_json_object", args[0], _json_path(args[1]))
    returning = node.args.get("returning")
    if isinstance(returning, exp.DataType):
        value = rewriter.cast(exp.Cast(this=value, to=returning))
    condition = node.args.get("on_condition")
    if isinstance(condition, exp.OnCondition):
        clauses = [condition.args.get(k) for k in ("empty", "error")]
        if any(isinstance(c, str) and c.upper().startswith("ERROR") for c in clauses):
            raise TranspileError(
                "JSON_VALUE ... ERROR ON EMPTY/ERROR is not supported: Spark returns NULL for missing or "
                "invalid JSON. Use the default (NULL ON ...) or DEFAULT <value> ON ...",
                node,
            )
        defaults = [c for c in clauses if isinstance(c, exp.Expr)]
        if defaults:
            value = exp.Coalesce(this=value, expressions=[defaults[0]])
    return value


def _json_query(_: _Rewriter, node: exp.Expr) -> exp.Expr:
    args = _args(node)
    if len(args) != 2:
        raise TranspileError("JSON_QUERY is supported with a value and a path only (no WRAPPER/ON clauses).", node)
    return _fn("get_json_object", args[0], _json_path(args[1]))


def _listagg(_: _Rewriter, node: exp.Expr) -> exp.Expr:
    separator = (
        node.args.get("separator")
        if not isinstance(node, exp.Anonymous)
        else (_args(node)[1] if len(_args(node)) > 1 else None)
    )
    value = node.this if not isinstance(node, exp.Anonymous) else _args(node)[0]
    return _fn("listagg", value, separator if separator is not None else exp.Literal.string(","))


def _split_index(_: _Rewriter, node: exp.Expr) -> exp.Expr:
    """Flink splits on the literal separator, Spark on a regex: escape it. Index is 0-based in both (`get`)."""
    text, separator, index = _args(node)
    if isinstance(separator, exp.Literal) and separator.is_string:
        pattern: exp.Expr = exp.Literal.string(re.sub(r"([\\^$.|?*+()\[\]{}])", r"\\\1", separator.name))
    else:
        pattern = _fn("concat", exp.Literal.string("\\Q"), separator, exp.Literal.string("\\E"))
    return _fn("get", _fn("split", text, pattern, exp.Literal.number(-1)), index)


def _regexp_extract(_: _Rewriter, node: exp.Expr) -> exp.Expr:
    """Flink: group 0 by default and NULL when nothing matches; Spark: group 1 and ''."""
    if isinstance(node, exp.Anonymous):
        text, pattern, *rest = _args(node)
        group = rest[0] if rest else exp.Literal.number(0)
    else:
        text, pattern = node.this, node.expression
        group = node.args.get("group") or exp.Literal.number(0)
    extract = _fn("regexp_extract", text, pattern, group)
    matches = exp.RegexpLike(this=text.copy(), expression=pattern.copy())
    return exp.Case(ifs=[exp.If(this=matches, true=extract)])


_TRUNC_UNITS = {"YEAR", "QUARTER", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND", "MILLISECOND"}


def _floor_ceil(_: _Rewriter, node: exp.Expr) -> exp.Expr:
    unit = node.args.get("to")
    if unit is None:
        return node
    name = _singular(unit.name)
    if name not in _TRUNC_UNITS:
        raise TranspileError(
            f"FLOOR/CEIL(... TO {name}) is not supported; units: {', '.join(sorted(_TRUNC_UNITS))}.", node
        )
    floored = _fn("date_trunc", exp.Literal.string(name), node.this)
    if isinstance(node, exp.Floor):
        return floored
    amount, spark_unit = {"QUARTER": ("3", "MONTH"), "MILLISECOND": ("0.001", "SECOND")}.get(name, ("1", name))
    one = exp.Interval(this=exp.Literal.string(amount), unit=exp.var(spark_unit))
    exact = exp.EQ(this=floored.copy(), expression=node.this.copy())
    return exp.Case(
        ifs=[exp.If(this=exact, true=node.this.copy())], default=exp.Add(this=floored.copy(), expression=one)
    )


def _current_timestamp(_: _Rewriter, node: exp.Expr) -> exp.Expr:
    return exp.CurrentTimestamp()


def _row(_: _Rewriter, node: exp.Expr) -> exp.Expr:
    return _fn("struct", *_args(node))


def _timestampadd(_: _Rewriter, node: exp.Expr) -> exp.Expr:
    return _fn("timestampadd", exp.var(node.text("unit").upper()), node.expression, node.this)


# Flink functions the parser leaves as plain calls, by name.
_FUNCTIONS: dict[str, Callable[[_Rewriter, exp.Expr], exp.Expr]] = {
    "PROCTIME": _current_timestamp,
    "NOW": _current_timestamp,
    "CURRENT_ROW_TIMESTAMP": _current_timestamp,
    "TO_TIMESTAMP_LTZ": _to_timestamp_ltz,
    "TO_TIMESTAMP": _to_timestamp,
    "JSON_VALUE": _json_value,
    "JSON_QUERY": _json_query,
    "LISTAGG": _listagg,
    "SPLIT_INDEX": _split_index,
    "REGEXP_EXTRACT": _regexp_extract,
    "ROW": _row,
}
# Flink functions the parser turns into typed sqlglot nodes whose Spark rendering differs from Flink.
_NODES: dict[type[exp.Expr], Callable[[_Rewriter, exp.Expr], exp.Expr]] = {
    exp.JSONValue: _json_value,
    exp.GroupConcat: _listagg,
    exp.RegexpExtract: _regexp_extract,
    exp.Floor: _floor_ceil,
    exp.Ceil: _floor_ceil,
    exp.TimestampAdd: _timestampadd,
}
