"""The stateful operator of a Top-N view (`connector.planning.operators.top_n`): Flink's AppendOnlyTopNFunction on
Spark.

Keyed by the PARTITION BY columns (`applyInPandasWithState`, its state in the query's checkpoint), each key keeps
its N first rows in the ORDER BY order, ties in arrival order (within a micro-batch, the order Spark hands the rows
over). After a micro-batch a key emits what changed, as Flink's final table has it: with the rank selected, each
rank whose row changed (an upsert of key and rank); without it, a delete (`__deleted`) of each row that left the N
and each row that entered (a Top-1, a deduplication, upserts its key's new row). Written as a changelog format, a
key emits the changes of each row as it arrives, as Flink's rank operators do, a replaced row's delete included.
Ordered by a processing-time attribute, rows rank by arrival (the last rows first, descending). NULLs order first
ascending and last descending, as in Flink.
"""

from __future__ import annotations

import functools
import pickle
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pandas as pd
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.streaming.state import GroupState, GroupStateTimeout
from pyspark.sql.types import BinaryType, BooleanType, LongType, StringType, StructField, StructType

from connector.connectors.reading import DELETED, UPDATE_AFTER, UPDATE_BEFORE
from connector.planning.operators.top_n import TopN
from connector.runtime.operators.state_rows import ROW, row_columns, row_text

_RANK = "__rank"
_EVENTS = StructType(
    [
        StructField(ROW, StringType()),
        StructField(_RANK, LongType()),
        StructField(DELETED, BooleanType()),
        StructField(UPDATE_BEFORE, BooleanType()),
        StructField(UPDATE_AFTER, BooleanType()),
    ]
)
_EVENT_COLUMNS = [ROW, _RANK, DELETED, UPDATE_BEFORE, UPDATE_AFTER]
# The key's rows as a pickled list of (ordering values, arrival number, row JSON), and the next arrival number.
_STATE = StructType([StructField("rows", BinaryType()), StructField("arrivals", LongType())])


def top_n(frame: DataFrame, keys: Sequence[str], top: TopN) -> DataFrame:
    """The rows of `frame` (an append-only stream) that the Top-N `top` per `keys` emits: its columns, the rank
    (when selected) and `__deleted`."""
    ordered = [F.col(f"`{name}`").alias(f"__order_{i}") for i, (name, _) in enumerate(top.order)]
    key_columns = [F.col(f"`{k}`") for k in keys] or [F.lit(0)]  # a global Top-N: one key
    records = frame.select(
        *[column.alias(f"__key_{i}") for i, column in enumerate(key_columns)],
        row_text(frame.columns).alias(ROW),
        *ordered,
    )
    descending = tuple(desc for _, desc in top.order)
    emit = functools.partial(_ranked, top.limit, descending, top.newest_first, top.rank_selected, top.changelog)
    events = records.groupBy(*[f"__key_{i}" for i in range(len(key_columns))]).applyInPandasWithState(
        emit, _EVENTS, _STATE, "append", GroupStateTimeout.NoTimeout
    )
    rank = [F.col(_RANK).alias(top.rank)] if top.rank_selected else []
    kinds = [F.col(UPDATE_BEFORE), F.col(UPDATE_AFTER)] if top.kinds else []
    return events.select(*row_columns(F.col(ROW), frame, frame.columns), *rank, F.col(DELETED), *kinds)


def native(value: Any) -> Any:
    """A value from pandas as a plain comparable Python value; None for a NULL."""
    if value is None or value is pd.NaT or (isinstance(value, float) and np.isnan(value)):
        return None
    return value.item() if isinstance(value, np.generic) else value


def compare(descending: tuple[bool, ...], newest_first: bool, a: tuple[Any, ...], b: tuple[Any, ...]) -> int:
    for x, y, desc in zip(a[0], b[0], descending, strict=True):
        if x is None or y is None:
            if x is None and y is None:
                continue
            first = x is None  # NULL is the smallest value
            return (-1 if first else 1) * (-1 if desc else 1)
        if x != y:
            return (-1 if x < y else 1) * (-1 if desc else 1)
    earlier = -1 if a[1] < b[1] else (1 if a[1] > b[1] else 0)
    return -earlier if newest_first else earlier


def _ranked(
    limit: int,
    descending: tuple[bool, ...],
    newest_first: bool,
    rank_selected: bool,
    changelog: bool,
    _: Any,
    chunks: Iterator[pd.DataFrame],
    state: GroupState,
) -> Iterator[pd.DataFrame]:
    """One key's rows of a micro-batch added to its N first, and what changed emitted: after the micro-batch, or
    for a changelog after each row."""
    entries: list[tuple[Any, ...]] = pickle.loads(state.get[0]) if state.exists else []  # this operator's own state
    arrivals: int = state.get[1] if state.exists else 0
    previous = list(entries)
    order_columns = [f"__order_{i}" for i in range(len(descending))]
    ranking = functools.cmp_to_key(functools.partial(compare, descending, newest_first))
    out: list[tuple[Any, ...]] = []
    for chunk in chunks:
        for values in chunk[[*order_columns, ROW]].itertuples(index=False):
            entries.append((tuple(native(v) for v in values[:-1]), arrivals, values[-1]))
            arrivals += 1
            if changelog:
                entries = sorted(entries, key=ranking)[:limit]
                out += changes(limit, rank_selected, previous, entries, changelog)
                previous = list(entries)
    entries = sorted(entries, key=ranking)[:limit]
    state.update((pickle.dumps(entries), arrivals))
    if not changelog:
        out = changes(limit, rank_selected, previous, entries)
    yield pd.DataFrame(out, columns=_EVENT_COLUMNS)


def changes(
    limit: int,
    rank_selected: bool,
    previous: Sequence[tuple[Any, ...]],
    top: Sequence[tuple[Any, ...]],
    changelog: bool = False,
) -> list[tuple[Any, ...]]:
    """What a key emits when its N first entries (ordering values, arrival number, row) go from `previous` to
    `top`: (row, rank, deleted, update before, update after) rows. With the rank selected each rank whose row
    changed is upserted (for a changelog, its old row deleted first: -U, +U), and a rank no row holds any more
    deleted; without it, a row that left is deleted (-D) and one that entered inserted (+I); a Top-1 upserts its
    key's new row, as Flink's deduplication (for a changelog, its old row deleted first: -U, +U)."""
    before = [e[1] for e in previous]
    if rank_selected or limit == 1:
        out: list[tuple[Any, ...]] = []
        for i, e in enumerate(top):
            if i < len(before) and before[i] == e[1]:
                continue
            if changelog and i < len(previous):
                out.append((previous[i][2], i + 1, True, True, False))
            out.append((e[2], i + 1, False, False, i < len(previous)))
        return out + [(e[2], i + 1, True, False, False) for i, e in enumerate(previous) if i >= len(top)]
    left = set(before) - {e[1] for e in top}
    out = [(row, None, True, False, False) for _, arrival, row in previous if arrival in left]
    return out + [(e[2], None, False, False, False) for e in top if e[1] not in set(before)]

