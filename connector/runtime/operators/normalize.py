"""Flink's ChangelogNormalize for an upsert-kafka source that an aggregate reads.

An upsert-kafka record is the new row of its key, a tombstone its delete; neither carries the old row, which an
aggregate must retract (`connector.planning.operators.retractions`). Flink keeps the last row of each key in state and
emits it
as UPDATE_BEFORE before the new row, or as the DELETE of a tombstone; a tombstone of an unknown key emits nothing.
Here a stateful operator (`applyInPandasWithState`, its state in the query's checkpoint) does the same: keyed by
the PRIMARY KEY, a key's records in Kafka order, its last row as JSON text (one string column holds any row type).
The rows it emits retract (`__deleted`) or add, as a CDC format's rows do.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pandas as pd
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.streaming.state import GroupState, GroupStateTimeout
from pyspark.sql.types import BooleanType, IntegerType, LongType, StringType, StructField, StructType

from connector.connectors.reading import DELETED, END_OF_INPUT_OFFSET, OFFSET, PARTITION, TOPIC
from connector.runtime.operators.state_rows import ROW, row_columns, row_text

_EVENTS = StructType(
    [
        StructField(ROW, StringType()),
        StructField(DELETED, BooleanType()),
        StructField(TOPIC, StringType()),
        StructField(PARTITION, IntegerType()),
        StructField(OFFSET, LongType()),
    ]
)
_STATE = StructType([StructField(ROW, StringType())])


def normalize(frame: DataFrame, key: list[str]) -> DataFrame:
    """`frame` (an upsert-kafka source's rows, hidden columns last) as rows that add or retract (`__deleted`)."""
    hidden = [c for c in (DELETED, TOPIC, PARTITION, OFFSET) if c in frame.columns]
    visible = [c for c in frame.columns if c not in hidden]
    records = frame.select(
        *[F.col(f"`{k}`").alias(f"__key_{i}") for i, k in enumerate(key)],
        row_text(visible).alias(ROW),
        F.col(DELETED),
        *[F.col(c).cast(_EVENTS[c].dataType) for c in (TOPIC, PARTITION, OFFSET)],
    )
    events = records.groupBy(*[f"__key_{i}" for i in range(len(key))]).applyInPandasWithState(
        _normalized, _EVENTS, _STATE, "append", GroupStateTimeout.NoTimeout
    )
    return events.select(*row_columns(F.col(ROW), frame, visible), *[F.col(c) for c in hidden])


def _normalized(_: Any, chunks: Iterator[pd.DataFrame], state: GroupState) -> Iterator[pd.DataFrame]:
    """One key's records of a micro-batch, in Kafka order, as the rows they retract and add."""
    records = pd.concat(list(chunks), ignore_index=True).sort_values([PARTITION, OFFSET], kind="stable")
    last: str | None = state.get[0] if state.exists else None
    out: list[tuple[Any, ...]] = []
    for row, deleted, topic, partition, offset in records[[ROW, DELETED, TOPIC, PARTITION, OFFSET]].itertuples(
        index=False
    ):
        if offset == END_OF_INPUT_OFFSET:  # the end-of-input row of a bounded scan passes as it is
            out.append((row, False, topic, partition, offset))
            continue
        if last is not None:
            out.append((last, True, topic, partition, offset))
        last = None if deleted else row
        if last is not None:
            out.append((last, False, topic, partition, offset))
    if last is None:
        state.remove()
    else:
        state.update((last,))
    yield pd.DataFrame(out, columns=[ROW, DELETED, TOPIC, PARTITION, OFFSET])
