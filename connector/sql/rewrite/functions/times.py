"""Flink's TIMESTAMPDIFF in months, quarters and years, EXTRACT of EPOCH, MILLISECOND and MICROSECOND, and its
parsing of date-time text (TO_TIMESTAMP, TO_DATE, UNIX_TIMESTAMP, CAST of text to DATE and TIMESTAMP), rewritten
where Spark differs or has none (checked against Flink 2.3 by the conformance cases `functions_edges_more` and
`time_parsing_edges`; the parsers are `connector.sql.rewrite.functions.time_parsing` and
`connector.sql.rewrite.functions.time_patterns`).

Flink counts the months from t1 to t2 as the most months that can be added to t1 (clamping to a month's last day,
as ADD_MONTHS does) without passing t2: 2024-01-31 to 2024-02-29 is one month, which Spark's timestampdiff counts
as none. Flink's MILLISECOND and MICROSECOND include the seconds (0 to 59,999 ms), and EPOCH is whole seconds,
each truncated toward zero (before 1970 they are negative); Spark extracts none of the three.
"""

from __future__ import annotations

from collections.abc import Callable

import sqlglot
from sqlglot import exp
from sqlglot.dialects.spark import Spark

from connector.catalog import types
from connector.sql.rewrite.functions import time_parsing, time_patterns
from connector.sql.rewrite.nodes import call_args, fn

_MONTHS_PER_UNIT = {"MONTH": 1, "QUARTER": 3, "YEAR": 12}
_TIME_OF_DAY = exp.Literal.string("HH:mm:ss.SSSSSS")


def _month_number(value: exp.Expr) -> exp.Expr:
    years = exp.Mul(this=fn("year", value.copy()), expression=exp.Literal.number(12))
    return exp.paren(exp.Add(this=years, expression=fn("month", value.copy())))


def _months(later: exp.Expr, earlier: exp.Expr) -> exp.Expr:
    """Flink's whole months from `earlier` to `later` (negative when `later` is before), as Calcite's
    DateTimeUtils.subtractMonths counts them."""
    forward = exp.GTE(this=later.copy(), expression=earlier.copy())
    high = exp.If(this=forward, true=later.copy(), false=earlier.copy())
    low = exp.If(this=forward.copy(), true=earlier.copy(), false=later.copy())
    high_day, low_day = fn("to_date", high), fn("to_date", low)
    estimate = exp.Sub(this=_month_number(high), expression=_month_number(low))
    one = exp.Literal.number(1)
    past = exp.GT(this=fn("add_months", low_day.copy(), estimate.copy()), expression=high_day.copy())
    whole_days = exp.If(this=past, true=exp.Sub(this=estimate.copy(), expression=one.copy()), false=estimate)
    same_day = exp.EQ(this=fn("add_months", low_day, whole_days.copy()), expression=high_day)
    earlier_time = exp.LT(
        this=fn("date_format", high.copy(), _TIME_OF_DAY.copy()), expression=fn("date_format", low, _TIME_OF_DAY)
    )
    months = exp.If(
        this=exp.and_(same_day, earlier_time),
        true=exp.Sub(this=whole_days.copy(), expression=one),
        false=whole_days,
    )
    return exp.If(this=forward.copy(), true=months.copy(), false=exp.Neg(this=exp.paren(months)))


def _timestampdiff(node: exp.Expr) -> exp.Expr:
    per = _MONTHS_PER_UNIT.get(node.text("unit").upper())
    if per is None:
        return node
    months = _months(node.this, node.expression)
    counted = months if per == 1 else exp.IntDiv(this=exp.paren(months), expression=exp.Literal.number(per))
    return exp.cast(counted, exp.DataType.build("INT"))


def _micros(value: exp.Expr) -> exp.Expr:
    """Microseconds since 1970-01-01 00:00:00 of a DATE or TIMESTAMP, whatever the session's time zone (a
    TIMESTAMP_LTZ counts from its wall-clock time in that zone)."""
    epoch = exp.cast(exp.Literal.string("1970-01-01 00:00:00"), exp.DataType.build("TIMESTAMP_NTZ", dialect="spark"))
    moment = exp.cast(value, exp.DataType.build("TIMESTAMP_NTZ", dialect="spark"))
    return fn("timestampdiff", exp.var("MICROSECOND"), epoch, moment)


def _extract(node: exp.Expr) -> exp.Expr:
    unit = node.name.upper()
    if unit == "EPOCH":
        return exp.IntDiv(this=_micros(node.expression), expression=exp.Literal.number(1_000_000))
    if unit == "MILLISECOND":
        millis = exp.IntDiv(this=_micros(node.expression), expression=exp.Literal.number(1_000))
        return exp.Mod(this=exp.paren(millis), expression=exp.Literal.number(60_000))
    if unit == "MICROSECOND":
        return exp.Mod(this=_micros(node.expression), expression=exp.Literal.number(60_000_000))
    return node


_NTZ = "TIMESTAMP_NTZ"
_UNPARSED_SECONDS = -(2**63)  # DateTimeUtils.unixTimestamp of text it cannot parse: Long.MIN_VALUE
# DateTimeUtils.parseDate(text, format) of it: the days of Long.MIN_VALUE ms, overflowed (+1705471-09-27)
_UNPARSED_DAYS = 622_191_233


def _pattern(value: exp.Expr | None) -> str | None:
    """The text of a literal pattern, as written in Flink."""
    return value.name if isinstance(value, exp.Literal) and value.is_string else None


def _written_pattern(node: exp.Expr) -> str | None:
    """The Java pattern a parsed UNIX_TIMESTAMP / TO_DATE was written with (sqlglot keeps it in its own notation;
    Spark's notation is Java's)."""
    if _pattern(node.args.get("format")) is None:
        return None
    return sqlglot.parse_one(Spark().generator().format_time(node) or "''", read="spark").name


def to_timestamp(node: exp.Expr) -> exp.Expr:
    """TO_TIMESTAMP(text): DateTimeUtils.parseTimestampData(text), milliseconds kept. TO_TIMESTAMP(text, pattern):
    DateTimeUtils.parseTimestampData(text, pattern), DateTimeFormatter.ofPattern then java.sql.Timestamp.valueOf
    (or java.sql.Date.valueOf); a pattern `time_patterns.java_time` does not compile, or one not written as a
    literal, is read by Spark's to_timestamp instead of java.time's."""
    args = call_args(node)
    if len(args) == 1:
        return time_parsing.flink_timestamp(args[0], 3)
    text, pattern = args
    written = _pattern(pattern)
    compiled = time_patterns.java_time(written) if written is not None else None

    def parsed(t: exp.Expr) -> exp.Expr:
        if compiled is not None:
            first = time_patterns.java_time_timestamp(t, compiled)
        else:
            first = exp.cast(fn("try_to_timestamp", t, pattern), exp.DataType.build(_NTZ, dialect="spark"))
        return exp.Coalesce(this=first, expressions=[time_parsing.value_of(t.copy())])

    return time_parsing.bind(text, "__text", parsed)


def _simple_date_format(node: exp.Expr) -> time_patterns.Compiled | None:
    written = _written_pattern(node)
    return time_patterns.simple_date_format(written) if written is not None else None


def _unless_null(text: exp.Expr, parsed: Callable[[exp.Expr], exp.Expr], unparsed: exp.Expr) -> exp.Expr:
    """NULL for NULL text, else what `parsed` gives of it, `unparsed` when that is NULL."""

    def body(t: exp.Expr) -> exp.Expr:
        null = exp.Is(this=t, expression=exp.Null())
        return exp.Case(
            ifs=[exp.If(this=null, true=exp.Null())],
            default=exp.Coalesce(this=parsed(t.copy()), expressions=[unparsed]),
        )

    return time_parsing.bind(text, "__text", body)


def unix_timestamp(node: exp.Expr) -> exp.Expr:
    """UNIX_TIMESTAMP(text [, pattern]): DateTimeUtils.unixTimestamp, SimpleDateFormat in the session time zone,
    seconds truncated toward zero, Long.MIN_VALUE for text that does not parse. A pattern
    `time_patterns.simple_date_format` does not compile is read by Spark's to_timestamp instead."""
    compiled = _simple_date_format(node)
    unparsed = exp.Literal.number(_UNPARSED_SECONDS)
    if compiled is None:
        fmt = exp.Literal.string(_written_pattern(node)) if _written_pattern(node) else node.args["format"]
        return _unless_null(node.this, lambda t: fn("unix_timestamp", fn("try_to_timestamp", t, fmt.copy())), unparsed)

    def seconds(t: exp.Expr) -> exp.Expr:
        instant = time_parsing.session_instant(time_patterns.simple_date_format_millis(t, compiled))
        return exp.IntDiv(this=instant, expression=exp.Literal.number(1000))

    return _unless_null(node.this, seconds, unparsed)


def to_date(node: exp.Expr) -> exp.Expr:
    """TO_DATE(text): DateTimeUtils.parseDate(text). TO_DATE(text, pattern): DateTimeUtils.parseDate(text, pattern),
    SimpleDateFormat in UTC, and the date Flink makes of Long.MIN_VALUE for text that does not parse. A pattern
    `time_patterns.simple_date_format` does not compile is read by Spark's to_date."""
    if node.args.get("format") is None:
        return time_parsing.flink_date(node.this)
    compiled = _simple_date_format(node)
    if compiled is None:
        return node

    def day(t: exp.Expr) -> exp.Expr:
        millis = time_patterns.simple_date_format_millis(t, compiled)
        return fn("date_from_unix_date", fn("floor", exp.Div(this=millis, expression=exp.Literal.number(86_400_000))))

    return _unless_null(node.this, day, fn("date_from_unix_date", exp.Literal.number(_UNPARSED_DAYS)))


def text_cast(
    node: exp.Cast, target: exp.DataType, failure: Callable[[exp.Expr], exp.Expr] | None = None
) -> exp.Expr | None:
    """Flink's CAST of text to `target`: to DATE DateTimeUtils.parseDate, to TIMESTAMP(p) and TIMESTAMP_LTZ(p)
    DateTimeUtils.parseTimestampData(text, p), the latter in the session time zone (StringToDateCastRule,
    StringToTimestampCastRule); None for other targets. Text that does not parse is NULL (TRY_CAST), or
    `failure(text)` (CAST)."""
    precision = types.timestamp_precision(target)
    dated = target.this == exp.DataType.Type.DATE
    if precision is None and not dated:
        return None
    local = target.this in (exp.DataType.Type.TIMESTAMPLTZ, exp.DataType.Type.TIMESTAMPTZ)

    def parse(t: exp.Expr) -> exp.Expr:
        if precision is None:
            return time_parsing.flink_date(t)
        value = time_parsing.flink_timestamp(t, precision)
        return exp.cast(value, exp.DataType.build("TIMESTAMP", dialect="spark")) if local else value

    def parsed(t: exp.Expr) -> exp.Expr:
        if failure is None:
            return parse(t)

        def checked(p: exp.Expr) -> exp.Expr:
            bad = exp.and_(exp.Is(this=p, expression=exp.Null()), exp.not_(exp.Is(this=t, expression=exp.Null())))
            return exp.Case(ifs=[exp.If(this=bad, true=failure(t.copy()))], default=p.copy())

        return time_parsing.bind(parse(t.copy()), "__parsed", checked)

    return time_parsing.bind(node.this.copy(), "__cast", parsed)


# Flink functions the parser leaves as plain calls, by name.
FUNCTIONS: dict[str, Callable[[exp.Expr], exp.Expr]] = {"TO_TIMESTAMP": to_timestamp}
NODES: dict[type[exp.Expr], Callable[[exp.Expr], exp.Expr]] = {
    exp.TimestampDiff: _timestampdiff,
    exp.Extract: _extract,
    exp.StrToUnix: unix_timestamp,
    exp.TsOrDsToDate: to_date,
}
