"""The stateful operator of an OVER aggregation (`connector.planning.operators.over`): Flink's over-aggregate functions
on Spark.

Keyed by the PARTITION BY columns (`applyInPandasWithState`, its state in the query's checkpoint). Ordered by event
time, a key buffers its rows until the watermark passes them (Flink's RowTime*PrecedingFunction: a row older than
the watermark when it arrives is late and dropped), then emits them in time order, ties in arrival order (in a
micro-batch, as Spark hands rows over); an event-time timeout at the oldest buffered row brings a key without new
rows back when the watermark passes it. Ordered by processing time, rows are emitted as they arrive. Each row gets
its aggregates over its frame: ROWS counts the row and the n before it; RANGE takes every row within the interval
before the row's time, the row's peers (same time) included, so peers share their results. Unbounded frames keep
running totals; bounded ones also keep the rows they cover, retracting those that leave before adding new ones,
as Flink does (so DOUBLE sums round as Flink's).

Results have Flink's types and arithmetic (`connector.runtime.operators.accumulators`).
"""

from __future__ import annotations

import functools
import json
import pickle
from collections.abc import Iterator, Sequence
from decimal import Decimal
from typing import Any

import pandas as pd
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.streaming.state import GroupState, GroupStateTimeout
from pyspark.sql.types import (
    StringType,
    StructField,
    StructType,
)

from connector.planning.operators.over import TIME, Frame, OverAggregation
from connector.runtime.operators.accumulators import (
    Accumulator,
    Aggregate,
    exact_decimals,
    result_type,
    results_json,
    typed,
)
from connector.runtime.operators.state_rows import ROW, STATE, read_json, row_columns, row_text

_TIME_MS = "__over_time_ms"
_ARGS = "__over_args"
_RESULTS = "__over_results"
_EVENTS = StructType([StructField(ROW, StringType()), StructField(_RESULTS, StringType())])


def over_aggregation(frame: DataFrame, over: OverAggregation) -> DataFrame:
    """The rows of `frame` (an append-only stream: the OVER aggregation's view query), each with its aggregates."""
    aggregates = [typed(frame, a.function, a.argument, a.output) for a in over.aggregates]
    results = StructType([StructField(a.output, result_type(frame, a)) for a in aggregates])
    keys = [F.col(f"`{k}`") for k in over.keys] or [F.lit(0)]  # no PARTITION BY: one key
    arguments = [a.argument for a in aggregates if a.argument is not None]
    records = frame.where(F.col(f"`{TIME}`").isNotNull()).select(
        *[key.alias(f"__key_{i}") for i, key in enumerate(keys)],
        F.col(f"`{TIME}`"),  # Spark's event-time timeout needs the watermarked column in the operator's input
        F.unix_millis(F.col(f"`{TIME}`").cast("timestamp")).alias(_TIME_MS),
        (row_text(sorted(set(arguments))) if arguments else F.lit("{}")).alias(_ARGS),
        row_text(frame.columns).alias(ROW),
    )
    emit = functools.partial(_aggregate, over.frame, tuple(aggregates))
    timeout = GroupStateTimeout.EventTimeTimeout if over.frame.rowtime else GroupStateTimeout.NoTimeout
    events = records.groupBy(*[f"__key_{i}" for i in range(len(keys))]).applyInPandasWithState(
        emit, _EVENTS, STATE, "append", timeout
    )
    computed = read_json(F.col(_RESULTS), results)
    return events.select(
        *row_columns(F.col(ROW), frame, frame.columns),
        *[computed.getField(a.output).alias(a.output) for a in aggregates],
    )


def _over(frame: Frame, aggregates: Sequence[Aggregate], rows: list[Any], kept: dict[str, Any]) -> list[Any]:
    """Each of `rows` (time, arrival, arguments, row), in order, with its results. `kept` carries the key's frame
    from row to row and batch to batch: its accumulators and, for a bounded frame, the (time, arguments) of the
    rows it covers."""
    out = []
    accumulators: list[Accumulator] = kept.setdefault("accumulators", [Accumulator(a) for a in aggregates])
    covered: list[tuple[int, dict[str, Any]]] = kept.setdefault("covered", [])
    bounded = frame.preceding is not None
    peers = not frame.rows and (frame.rowtime or bounded)  # Flink's processing-time RANGE UNBOUNDED: row by row
    for group in _groups(rows, peers):
        if bounded:  # first what leaves the frame, then the new rows, as Flink's functions do
            assert frame.preceding is not None
            if frame.rows:
                leaving = max(0, len(covered) + 1 - (frame.preceding + 1))
            else:
                start = group[0][0] - frame.preceding
                leaving = next((i for i, (time, _) in enumerate(covered) if time >= start), len(covered))
            gone, covered[:] = covered[:leaving], covered[leaving:]
            remaining = [arguments for _, arguments in covered] if gone else []  # MIN and MAX look again
            for _, arguments in gone:
                for accumulator in accumulators:
                    accumulator.retract(arguments, remaining)
        for time, _, arguments, _ in group:
            for accumulator in accumulators:
                accumulator.add(arguments)
            if bounded:
                covered.append((time, arguments))
        results = results_json(aggregates, accumulators)
        out += [(row, results) for *_, row in group]
    return out


def _groups(rows: list[Any], peers: bool) -> Iterator[list[Any]]:
    """The rows one by one, or (`peers`) in groups of the same time."""
    if not peers:
        yield from ([r] for r in rows)
        return
    group: list[Any] = []
    for row in rows:
        if group and row[0] != group[0][0]:
            yield group
            group = []
        group.append(row)
    if group:
        yield group


def _aggregate(
    frame: Frame, aggregates: tuple[Aggregate, ...], _: Any, chunks: Iterator[pd.DataFrame], state: GroupState
) -> Iterator[pd.DataFrame]:
    """One key's new rows (or its timeout): the rows now due, emitted with their aggregates."""
    with exact_decimals():
        yield from _due(frame, aggregates, chunks, state)


def _due(
    frame: Frame, aggregates: tuple[Aggregate, ...], chunks: Iterator[pd.DataFrame], state: GroupState
) -> Iterator[pd.DataFrame]:
    saved: dict[str, Any] = pickle.loads(state.get[0]) if state.exists else {"pending": [], "kept": {}, "arrivals": 0}
    watermark = state.getCurrentWatermarkMs() if frame.rowtime else None
    arrivals: int = saved["arrivals"]
    pending: list[Any] = saved["pending"]
    for chunk in chunks:
        for time, text, row in chunk[[_TIME_MS, _ARGS, ROW]].itertuples(index=False):
            if watermark is not None and time < watermark:
                continue  # late: the watermark passed it before it arrived, Flink drops it
            pending.append((int(time), arrivals, json.loads(text, parse_float=Decimal), row))
            arrivals += 1
    due = [p for p in pending if watermark is None or p[0] < watermark]
    pending = [p for p in pending if watermark is not None and p[0] >= watermark]
    due.sort(key=lambda p: (p[0], p[1]) if frame.rowtime or not frame.rows else p[1])
    out = _over(frame, aggregates, due, saved["kept"])
    if pending:
        state.setTimeoutTimestamp(max(1, min(p[0] for p in pending)))
    state.update((pickle.dumps({"pending": pending, "kept": saved["kept"], "arrivals": arrivals}),))
    yield pd.DataFrame(out, columns=[ROW, _RESULTS])
