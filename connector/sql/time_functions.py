"""Flink's TIMESTAMPDIFF in months, quarters and years and EXTRACT of EPOCH, MILLISECOND and MICROSECOND, rewritten
where Spark differs or has none (checked against Flink 2.3 by the conformance case `functions_edges_more`).

Flink counts the months from t1 to t2 as the most months that can be added to t1 (clamping to a month's last day,
as ADD_MONTHS does) without passing t2: 2024-01-31 to 2024-02-29 is one month, which Spark's timestampdiff counts
as none. Flink's MILLISECOND and MICROSECOND include the seconds (0 to 59,999 ms), and EPOCH is whole seconds,
each truncated toward zero (before 1970 they are negative); Spark extracts none of the three.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from connector.sql.rewriting import fn

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


NODES: dict[type[exp.Expr], Callable[[exp.Expr], exp.Expr]] = {
    exp.TimestampDiff: _timestampdiff,
    exp.Extract: _extract,
}
