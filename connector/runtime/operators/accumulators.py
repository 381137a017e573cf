"""Flink's aggregate functions as the Python stateful operators compute them (OVER windows, changelog GROUP BY):
COUNT, SUM, AVG, MIN and MAX with Flink's result types and arithmetic, their arguments read from JSON text.

COUNT is BIGINT; SUM of an integer type keeps the type and wraps on overflow, of DECIMAL(p, s) is DECIMAL(38, s);
AVG of an integer type truncates toward zero in that type, of DECIMAL(p, s) is DECIMAL(38, max(6, s)) rounded half
up; MIN and MAX keep the argument's type. An accumulator retracts too (bounded OVER frames), in Flink's order, so
DOUBLE sums round as Flink's do.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, localcontext
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql.types import (
    ByteType,
    DataType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    ShortType,
)

from connector.errors import KafkaSqlError

_BITS: dict[type[DataType], int] = {ByteType: 8, ShortType: 16, IntegerType: 32, LongType: 64}


class AggregateError(KafkaSqlError):
    """An aggregate this cannot compute (e.g. SUM of a STRING)."""


@dataclass(frozen=True)
class Aggregate:
    """One aggregate call: its function, the operator input's column it reads (None: COUNT(*)), its output column."""

    function: str
    argument: str | None
    output: str
    bits: int | None = None  # an integer argument's width
    scale: int | None = None  # a DECIMAL result's scale
    floating: bool = False  # a FLOAT or DOUBLE argument
    distinct: bool = False  # each value once (Flink's distinct MapView: value -> rows holding it)


def typed(frame: DataFrame, function: str, argument: str | None, output: str, distinct: bool = False) -> Aggregate:
    """The aggregate `function` of column `argument` of `frame` (None: COUNT(*)), typed as Flink types it."""
    if argument is None:
        return Aggregate(function, None, output)
    kind = frame.schema[argument].dataType
    bits = _BITS.get(type(kind))
    scale = kind.scale if isinstance(kind, DecimalType) else None
    if function == "AVG" and scale is not None:
        scale = max(6, scale)
    floating = isinstance(kind, FloatType | DoubleType)
    if function in ("SUM", "AVG") and bits is None and scale is None and not floating:
        raise AggregateError(f"{function} needs a numeric argument, not {kind.simpleString()}.")
    return Aggregate(function, argument, output, bits, scale, floating, distinct)


def result_type(frame: DataFrame, aggregate: Aggregate) -> DataType:
    """The Spark type of the aggregate's result (Flink's type for it)."""
    if aggregate.function == "COUNT":
        return LongType()
    assert aggregate.argument is not None
    kind = frame.schema[aggregate.argument].dataType
    if aggregate.function in ("SUM", "AVG") and aggregate.scale is not None:
        return DecimalType(38, aggregate.scale)
    return kind


class Accumulator:
    """One aggregate's running value: added rows, and for a bounded frame retracted ones (Flink's accumulators with
    retraction, in Flink's order, so DOUBLE sums round as Flink's do)."""

    def __init__(self, aggregate: Aggregate, counted: bool = False) -> None:
        """`counted`: MIN and MAX count the values they saw, to retract one of a changelog. A DISTINCT aggregate
        always counts them, and takes a value in when it first comes and out when its last row goes."""
        self.aggregate = aggregate
        self.rows = 0
        self.count = 0
        self.total: Any = 0
        self.least: Any = None
        self.most: Any = None
        # value -> times added and not retracted
        self.seen: dict[Any, int] | None = {} if counted or aggregate.distinct else None

    def _value(self, arguments: dict[str, Any]) -> Any:
        value = arguments[self.aggregate.argument] if self.aggregate.argument is not None else None
        return float(value) if value is not None and self.aggregate.floating else value

    def add(self, arguments: dict[str, Any]) -> None:
        self.rows += 1
        value = self._value(arguments)
        if value is None:
            return
        if self.seen is not None:
            held = self.seen.get(value, 0)
            self.seen[value] = held + 1
            if held and self.aggregate.distinct:
                return  # counted already
        self.count += 1
        if self.aggregate.function in ("SUM", "AVG"):
            self.total += value
        self.least = value if self.least is None or value < self.least else self.least
        self.most = value if self.most is None or value > self.most else self.most

    def retract(self, arguments: dict[str, Any], frame: Sequence[dict[str, Any]] | None = None) -> None:
        """Take out a row: one that left an OVER frame (`frame`: the rows still in it, which MIN and MAX look at
        again), or a changelog's retraction (MIN and MAX then count the values they saw, as Flink's
        MinWithRetractAggFunction keeps them in map state)."""
        self.rows -= 1
        value = self._value(arguments)
        if value is None:
            return
        counted = frame is None and self.seen is not None
        if counted:
            assert self.seen is not None
            if self.aggregate.distinct and value not in self.seen:
                return  # never taken in (Flink's distinct view ignores it)
            held = self.seen.pop(value, 0) - 1
            if held > 0:
                self.seen[value] = held
                if self.aggregate.distinct:
                    return  # other rows still hold the value
        self.count -= 1
        if self.aggregate.function in ("SUM", "AVG"):
            self.total -= value
        if self.aggregate.function not in ("MIN", "MAX"):
            return
        values = list(self.seen or {}) if counted else [v for v in map(self._value, frame or []) if v is not None]
        self.least, self.most = (min(values), max(values)) if values else (None, None)

    def result(self) -> Any:
        function, bits, scale = self.aggregate.function, self.aggregate.bits, self.aggregate.scale
        if function == "COUNT":
            return self.rows if self.aggregate.argument is None else self.count
        if function == "MIN":
            return self.least
        if function == "MAX":
            return self.most
        if self.count == 0:
            return None
        value = self.total
        if function == "AVG":
            if bits is not None:
                value = abs(value) // self.count * (-1 if value < 0 else 1)  # Java's division truncates
            elif scale is not None:
                value = Decimal(value) / self.count
            else:
                value = value / self.count
        if bits is not None:
            half = 1 << (bits - 1)
            value = (value + half) % (1 << bits) - half  # Java's integer overflow
        if scale is not None:
            value = Decimal(value).quantize(Decimal(1).scaleb(-scale), rounding=ROUND_HALF_UP)
        return value


def results_json(aggregates: Sequence[Aggregate], accumulators: Sequence[Accumulator]) -> str:
    """The accumulators' results as one JSON object text, keyed by the aggregates' output columns."""
    return json_object((a.output, x.result()) for a, x in zip(aggregates, accumulators, strict=True))


def json_object(pairs: Iterable[tuple[str, Any]]) -> str:
    """A JSON object's text, DECIMAL values written as numbers with every digit (as Spark reads them back)."""
    texts = (f"{json.dumps(k)}:{str(v) if isinstance(v, Decimal) else json.dumps(v)}" for k, v in pairs)
    return "{" + ",".join(texts) + "}"


def exact_decimals() -> contextlib.AbstractContextManager[Any]:
    """The decimal context the operators compute in: DECIMAL(38, s) sums exactly (Python's default keeps 28
    digits)."""
    return localcontext(prec=80)
