"""Flink interval literals as Spark intervals and durations, and watermark delays.

Flink writes time spans as interval literals (`INTERVAL '5' SECOND`, `INTERVAL '1 02:03' DAY TO MINUTE`,
plural units, WEEK and QUARTER); Spark wants ANSI interval literals in expressions and duration strings
('10 minutes') for window sizes and `withWatermark`. Literals are read exactly (microseconds or months)
so that an interval Spark cannot represent is an error, not a silently rounded value.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

from sqlglot import exp

from connector.sql.rewrite.nodes import TranspileError, flink_sql

MICROS = {
    "DAY": 86_400_000_000,
    "HOUR": 3_600_000_000,
    "MINUTE": 60_000_000,
    "SECOND": 1_000_000,
    "MILLISECOND": 1_000,
    "MICROSECOND": 1,
}
_MONTHS = {"YEAR": 12, "MONTH": 1}
_UNIT_ALIASES = {"WEEK": ("DAY", 7), "QUARTER": ("MONTH", 3)}
ONE_MICROSECOND = exp.Interval(this=exp.Literal.string("0.000001"), unit=exp.var("SECOND"))


def spark_duration(interval: exp.Expr) -> str:
    """A Flink day-time interval literal as a Spark duration string ('10 minutes'), e.g. for withWatermark."""
    return duration_text(interval_micros(interval))


def duration_text(micros: int) -> str:
    """`micros` as a Spark duration string in the largest unit that divides it exactly."""
    if micros == 0:
        return "0 seconds"
    for unit in ("DAY", "HOUR", "MINUTE", "SECOND", "MILLISECOND"):
        size = MICROS[unit]
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
        f"Watermark strategy '{flink_sql(strategy)}' is not supported: use `{column}` or "
        f"`{column} - INTERVAL 'n' <unit>`.",
        strategy,
    )


# -- interval literals -------------------------------------------------------------------------------


def _interval_parts(node: exp.Expr) -> tuple[str, int]:
    """('micros', n) for a day-time interval literal, ('months', n) for a year-month one."""
    sign = 1
    while isinstance(node, (exp.Neg, exp.Paren)):
        sign = -sign if isinstance(node, exp.Neg) else sign
        node = node.this
    if not isinstance(node, exp.Interval) or not isinstance(node.this, exp.Literal):
        raise TranspileError(
            f"Expected an interval literal such as INTERVAL '5' SECOND, got '{flink_sql(node)}'.", node
        )
    text = node.this.name.strip()
    if text.startswith("-"):
        sign, text = -sign, text[1:].strip()
    unit = node.args.get("unit")
    if isinstance(unit, exp.IntervalSpan):
        kind, value = _span_value(text, unit.this.name.upper(), unit.expression.name.upper(), node)
    else:
        name = singular(unit.name if unit is not None else "")
        kind, value = _single_value(text, name, node)
    return kind, sign * value


def interval_micros(node: exp.Expr) -> int:
    """The length of a day-time interval literal in microseconds; a year-month interval is an error."""
    kind, value = _interval_parts(node)
    if kind != "micros":
        raise TranspileError(f"'{flink_sql(node)}' is a year-month interval; a duration (DAY..SECOND) is needed.", node)
    return value


def singular(unit: str) -> str:
    """Flink accepts plural units (`INTERVAL '5' SECONDS`); the rest of the rewrite sees singular ones."""
    unit = unit.upper()
    return unit[:-1] if unit.endswith("S") and unit[:-1] in {*MICROS, *_MONTHS, *_UNIT_ALIASES} else unit


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
    if unit in MICROS:
        micros = number * MICROS[unit]
        if micros == micros.to_integral_value():
            return "micros", int(micros)
    raise TranspileError(f"Interval '{flink_sql(node)}' cannot be represented (unit {unit or 'missing'}).", node)


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
        raise TranspileError(f"Interval '{flink_sql(node)}' does not match INTERVAL ... {start} TO {end}.", node)
    fields = match.groupdict()
    if start == "YEAR":
        return "months", int(fields["YEAR"]) * 12 + int(fields["MONTH"])
    micros = sum(Decimal(value) * MICROS[unit] for unit, value in fields.items() if value is not None)
    return "micros", int(micros)


def spark_interval(node: exp.Interval) -> exp.Expr:
    """A Flink interval literal as a Spark ANSI interval literal (singular units; ms/us as fractional seconds)."""
    if isinstance(node.args.get("unit"), exp.IntervalSpan) or not isinstance(node.this, exp.Literal):
        return node
    kind, value = _interval_parts(node)
    unit = singular(node.args["unit"].name) if node.args.get("unit") else ""
    if kind == "months":
        spark_unit = "YEAR" if unit == "YEAR" else "MONTH"
        amount = str(value // 12) if spark_unit == "YEAR" else str(value)
    elif unit in ("DAY", "HOUR", "MINUTE") and value % MICROS[unit] == 0:
        spark_unit, amount = unit, str(value // MICROS[unit])
    elif unit == "WEEK":
        spark_unit, amount = "DAY", str(value // MICROS["DAY"])
    else:
        spark_unit, amount = "SECOND", decimal_text(Decimal(value) / MICROS["SECOND"])
    return exp.Interval(this=exp.Literal.string(amount), unit=exp.var(spark_unit))


def decimal_text(value: Decimal) -> str:
    """`value` in plain notation without trailing zeros, as Spark interval literals want it."""
    text = format(value, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def duration_literal(interval: exp.Expr) -> exp.Literal:
    """A window size, slide or gap: a positive duration."""
    if interval_micros(interval) <= 0:
        raise TranspileError(f"Window durations must be positive, got '{flink_sql(interval)}'.", interval)
    return exp.Literal.string(spark_duration(interval))
