"""The stateful operator of an event-time temporal join view (`connector.planning.operators.temporal`), Flink's
TemporalRowTimeJoinOperator on Spark.

Both inputs, keyed by the join key, meet in one `applyInPandasWithState` with an event-time timeout (its state in
the query's checkpoint): the stream's rows wait until the watermark (the lesser of both inputs', as Spark and Flink
compute it) passes their time, then each joins the latest version of its key at or before its time (by version
time, then arrival), nothing when that version is a delete; a LEFT join keeps a row without a version with NULLs.
Versions older than the newest one the watermark has passed are dropped.
"""

from __future__ import annotations

import functools
import pickle
from collections.abc import Iterator
from typing import Any

import pandas as pd
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.streaming.state import GroupState, GroupStateTimeout
from pyspark.sql.types import BinaryType, StringType, StructField, StructType

from connector.connectors.reading import DELETED
from connector.planning.operators.temporal import TemporalJoin, column_name
from connector.runtime.operators.state_rows import row_columns, row_text

_LEFT, _RIGHT = "__left", "__right"
_EVENTS = StructType([StructField(_LEFT, StringType()), StructField(_RIGHT, StringType())])
_STATE = StructType([StructField("state", BinaryType())])


def temporal_join(left: DataFrame, right: DataFrame, join: TemporalJoin) -> DataFrame:
    """The rows of the view `join` defines over the stream `left` and the versioned table `right` (source views,
    watermarked): both sides' columns, named `<alias>__<column>`."""
    visible = {
        side: [c for c in frame.columns if c != DELETED and not c.startswith("__")]
        for side, frame in ((_LEFT, left), (_RIGHT, right))
    }
    deleted = F.coalesce(F.col(DELETED), F.lit(False)) if DELETED in right.columns else F.lit(False)

    def side(frame: DataFrame, name: str, keys: list[str], time: str, retracts: Any) -> DataFrame:
        key = [F.col(f"`{_column(frame, k)}`").cast("string").alias(str(i)) for i, k in enumerate(keys)]
        return frame.select(
            F.to_json(F.struct(*key)).alias("__key"),
            F.lit(name).alias("__side"),
            F.col(f"`{_column(frame, time)}`").alias("__event_time"),  # keeps the watermark the timeout needs
            F.unix_millis(F.col(f"`{_column(frame, time)}`")).alias("__time"),  # epoch ms, as the watermark
            row_text(visible[name]).alias("__row"),
            retracts.alias("__retracts"),
        )

    rows = side(left, _LEFT, [k for k, _ in join.keys], join.left_time, F.lit(False)).unionByName(
        side(right, _RIGHT, [k for _, k in join.keys], join.right_time, deleted)
    )
    events = rows.groupBy("__key").applyInPandasWithState(
        functools.partial(_joined, join.outer), _EVENTS, _STATE, "append", GroupStateTimeout.EventTimeTimeout
    )
    columns = []
    for name, alias, frame in ((_LEFT, join.left_alias, left), (_RIGHT, join.right_alias, right)):
        named = [column_name(alias, c) for c in visible[name]]
        columns += row_columns(F.col(name), frame, visible[name], named)
    return events.select(*columns)


def _column(frame: DataFrame, name: str) -> str:
    """`frame`'s column named `name`, whatever its case."""
    return next(c for c in frame.columns if c.lower() == name.lower())


def _joined(outer: bool, _: Any, chunks: Iterator[pd.DataFrame], state: GroupState) -> Iterator[pd.DataFrame]:
    """One key's new rows and versions; the rows the watermark has passed, joined."""
    kept: dict[str, Any] = pickle.loads(state.get[0]) if state.exists else {"rows": [], "versions": [], "seq": 0}
    for chunk in chunks:
        for side, time, row, retracts in chunk[["__side", "__time", "__row", "__retracts"]].itertuples(index=False):
            if pd.isna(time):
                continue  # no event time: Flink drops it too
            entry = (int(time), kept["seq"], None if retracts else row)
            kept["rows" if side == _LEFT else "versions"].append(entry)
            kept["seq"] += 1
    watermark = state.getCurrentWatermarkMs()
    ready = sorted((r for r in kept["rows"] if r[0] <= watermark), key=lambda r: (r[0], r[1]))
    kept["rows"] = [r for r in kept["rows"] if r[0] > watermark]
    out = []
    for time, _, row in ready:
        valid = [v for v in kept["versions"] if v[0] <= time]
        version = max(valid, key=lambda v: (v[0], v[1]))[2] if valid else None
        if version is not None or outer:
            out.append((row, version))
    passed = [v for v in kept["versions"] if v[0] <= watermark]
    newest = max(passed, key=lambda v: (v[0], v[1])) if passed else None
    kept["versions"] = [v for v in kept["versions"] if v[0] > watermark or v is newest]
    if kept["rows"]:
        state.update((pickle.dumps(kept),))
        state.setTimeoutTimestamp(min(r[0] for r in kept["rows"]))
    elif kept["versions"]:
        state.update((pickle.dumps(kept),))
    else:
        state.remove()
    yield pd.DataFrame(out, columns=[_LEFT, _RIGHT])
