"""A Top-N over a GROUP BY (`connector.planning.operators.top_n`, `TopN.aggregated`): Flink's group aggregate and its
RetractableTopNFunction in one stateful operator.

Spark runs one `applyInPandasWithState` per query, so the group aggregate
(`connector.runtime.operators.changelog_aggregation`)
cannot feed the Top-N operator (`connector.runtime.operators.top_n`); this operator does both, keyed by the Top-N's
PARTITION
BY columns (which the GROUP BY keys include, so a group lives in one key). Each key keeps its groups' accumulators
and every group's current row, ranked; a record changes its group's row, whose old row leaves the ranking (a
row below the N may move up) and whose new row enters it. After a micro-batch the key emits what changed in its N
first rows, as the Top-N operator does.
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
from pyspark.sql.types import BooleanType, LongType, StringType, StructField, StructType

from connector.connectors.reading import DELETED
from connector.planning.operators.changelog_aggregation import ChangelogAggregation
from connector.planning.operators.top_n import TopN
from connector.runtime.operators.accumulators import Accumulator, Aggregate, exact_decimals, json_object, result_type
from connector.runtime.operators.changelog_aggregation import ARGS, KEYS, grouped_records
from connector.runtime.operators.state_rows import ROW, STATE, read_json
from connector.runtime.operators.top_n import changes, compare

_RANK = "__rank"
_EVENTS = StructType(
    [StructField(ROW, StringType()), StructField(_RANK, LongType()), StructField(DELETED, BooleanType())]
)


def top_n_of_aggregation(
    frame: DataFrame, aggregation: ChangelogAggregation, keys: Sequence[str], top: TopN
) -> DataFrame:
    """The Top-N `top` per `keys` (names of the GROUP BY's output) of the groups of `frame` (the aggregation's view
    query, a stream of inserts): the GROUP BY's output columns, the rank (when selected) and `__deleted`."""
    names = dict(aggregation.outputs)  # the view's column -> the GROUP BY's output name
    columns = {name: column for column, name in aggregation.outputs}
    partition = [F.col(f"`{columns[k]}`") for k in keys]  # none: a global Top-N, one key
    aggregates, records = grouped_records(frame, aggregation, partition)
    types = {k: frame.schema[k].dataType for k in aggregation.keys}
    types.update((a.output, result_type(frame, a)) for a in aggregates)
    schema = StructType([StructField(name, types[column]) for column, name in aggregation.outputs])
    order = tuple(name for name, _ in top.order)
    descending = tuple(desc for _, desc in top.order)
    emit = functools.partial(_ranked, top.limit, descending, top.rank_selected, tuple(aggregates), names, order)
    events = records.applyInPandasWithState(emit, _EVENTS, STATE, "append", GroupStateTimeout.NoTimeout)
    row = read_json(F.col(ROW), schema)
    rank = [F.col(_RANK).alias(top.rank)] if top.rank_selected else []
    return events.select(*[row.getField(f.name).alias(f.name) for f in schema.fields], *rank, F.col(DELETED))


def _ranked(
    limit: int,
    descending: tuple[bool, ...],
    rank_selected: bool,
    aggregates: tuple[Aggregate, ...],
    names: dict[str, str],
    order: tuple[str, ...],
    _: Any,
    chunks: Iterator[pd.DataFrame],
    state: GroupState,
) -> Iterator[pd.DataFrame]:
    """One key's records of a micro-batch: its groups updated, their rows re-ranked, what changed emitted."""
    with exact_decimals():
        saved: dict[str, Any] = (
            pickle.loads(state.get[0]) if state.exists else {"groups": {}, "entries": [], "arrivals": 0}
        )
        groups: dict[str, list[Accumulator]] = saved["groups"]
        entries: list[tuple[Any, ...]] = saved["entries"]
        previous = entries[:limit]
        ordering = functools.cmp_to_key(functools.partial(compare, descending, False))
        for chunk in chunks:
            for keys, text in chunk[[KEYS, ARGS]].itertuples(index=False):
                accumulators = groups.get(keys)
                old = _row(keys, aggregates, accumulators, names) if accumulators is not None else None
                if accumulators is None:
                    accumulators = groups[keys] = [Accumulator(a) for a in aggregates]
                arguments = json.loads(text, parse_float=Decimal)
                for accumulator in accumulators:
                    accumulator.add(arguments)
                new = _row(keys, aggregates, accumulators, names)
                if new == old:
                    continue  # the group's row did not change: Flink's aggregate emits nothing
                if old is not None:
                    entries.pop(next(i for i, e in enumerate(entries) if e[2] == old))
                values = json.loads(new, parse_float=Decimal)
                entries.append((tuple(values[name] for name in order), saved["arrivals"], new))
                saved["arrivals"] += 1
        entries.sort(key=ordering)
        state.update((pickle.dumps(saved),))
        found = changes(limit, rank_selected, previous, entries[:limit])
        yield pd.DataFrame([change[:3] for change in found], columns=[ROW, _RANK, DELETED])


def _row(keys: str, aggregates: Sequence[Aggregate], accumulators: Sequence[Accumulator], names: dict[str, str]) -> str:
    """A group's row as the GROUP BY outputs it, as JSON text: its keys and its aggregates' results, by name."""
    values = json.loads(keys, parse_float=Decimal)
    values.update((a.output, x.result()) for a, x in zip(aggregates, accumulators, strict=True))
    return json_object((names[column], values[column]) for column in names)
