"""The stateful operator of a GROUP BY written as a changelog (`connector.planning.operators.changelog_aggregation`):
Flink's
GroupAggFunction on Spark.

Keyed by the group (`applyInPandasWithState`, the accumulators in the query's checkpoint), rows are added one by
one in arrival order (in a micro-batch, as Spark hands them over): a group's first row emits its result, a row
that changes the result emits the old result as a retraction (`__deleted`) and then the new one, a row that
changes nothing emits nothing, as Flink's group aggregate does without mini-batches. Over a changelog (its
retracting rows taken out, MIN and MAX counting the values they saw) a group left without rows is deleted (its old
result retracted), and a retraction of a group never seen is ignored. For a sink keyed by the group the new row of a
changed group is emitted alone (Flink's upsert: no UPDATE_BEFORE). Results have Flink's types and
arithmetic (`connector.runtime.operators.accumulators`).
"""

from __future__ import annotations

import functools
import json
import pickle
from collections.abc import Iterator, Sequence
from decimal import Decimal
from typing import Any

import pandas as pd
from pyspark.sql import Column, DataFrame, GroupedData
from pyspark.sql import functions as F
from pyspark.sql.streaming.state import GroupState, GroupStateTimeout
from pyspark.sql.types import BooleanType, StringType, StructField, StructType

from connector.connectors.reading import DELETED, UPDATE_AFTER, UPDATE_BEFORE
from connector.planning.operators.changelog_aggregation import RETRACTS, ChangelogAggregation
from connector.runtime.operators.accumulators import (
    Accumulator,
    Aggregate,
    exact_decimals,
    result_type,
    results_json,
    typed,
)
from connector.runtime.operators.state_rows import STATE, read_json, row_columns, row_text

KEYS = "__agg_keys"
ARGS = "__agg_args"
_RESULTS = "__agg_results"
_EVENTS = StructType(
    [
        StructField(KEYS, StringType()),
        StructField(_RESULTS, StringType()),
        StructField(DELETED, BooleanType()),
        StructField(UPDATE_BEFORE, BooleanType()),
        StructField(UPDATE_AFTER, BooleanType()),
    ]
)


def grouped_records(
    frame: DataFrame, aggregation: ChangelogAggregation, partition: Sequence[Column]
) -> tuple[list[Aggregate], GroupedData]:
    """The typed aggregates and `frame`'s records for an operator keyed by `partition` (none: one key): each
    record's group keys (KEYS) and aggregated arguments (ARGS) as JSON text, and whether it retracts (RETRACTS)."""
    aggregates = [typed(frame, a.function, a.argument, a.output, a.distinct) for a in aggregation.aggregates]
    keys = list(partition) or [F.lit(0)]
    arguments = sorted({a.argument for a in aggregates if a.argument is not None})
    records = frame.select(
        *[key.alias(f"__key_{i}") for i, key in enumerate(keys)],
        (row_text(aggregation.keys) if aggregation.keys else F.lit("{}")).alias(KEYS),
        (row_text(arguments) if arguments else F.lit("{}")).alias(ARGS),
        (F.coalesce(F.col(RETRACTS), F.lit(False)) if aggregation.retracting else F.lit(False)).alias(RETRACTS),
    )
    return aggregates, records.groupBy(*[f"__key_{i}" for i in range(len(keys))])


def changelog_aggregation(frame: DataFrame, aggregation: ChangelogAggregation) -> DataFrame:
    """The changes of the groups of `frame` (an append-only stream: the view query): the key columns, one column per
    aggregate and `__deleted`."""
    groups = [F.col(f"`{k}`") for k in aggregation.keys]  # none: a global aggregate, one group
    aggregates, records = grouped_records(frame, aggregation, groups)
    results = StructType([StructField(a.output, result_type(frame, a)) for a in aggregates])
    emit = functools.partial(_changes, tuple(aggregates), aggregation.retracting, aggregation.keyed)
    events = records.applyInPandasWithState(emit, _EVENTS, STATE, "append", GroupStateTimeout.NoTimeout)
    computed = read_json(F.col(_RESULTS), results)
    key_columns = row_columns(F.col(KEYS), frame, aggregation.keys) if aggregation.keys else []
    outputs = [computed.getField(a.output).alias(a.output) for a in aggregates]
    kinds = [F.col(UPDATE_BEFORE), F.col(UPDATE_AFTER)] if aggregation.kinds else []
    return events.select(*key_columns, *outputs, F.col(DELETED), *kinds)


def _changes(
    aggregates: tuple[Aggregate, ...],
    retracting: bool,
    keyed: bool,
    _: Any,
    chunks: Iterator[pd.DataFrame],
    state: GroupState,
) -> Iterator[pd.DataFrame]:
    """One group's new rows, added (or retracted) one by one: the changes of its result."""
    with exact_decimals():
        accumulators: list[Accumulator] | None = pickle.loads(state.get[0]) if state.exists else None
        out: list[tuple[str, str, bool, bool, bool]] = []  # keys, results, deleted, update before, update after
        for chunk in chunks:
            for keys, text, retracts in chunk[[KEYS, ARGS, RETRACTS]].itertuples(index=False):
                before = results_json(aggregates, accumulators) if accumulators is not None else None
                if accumulators is None:
                    accumulators = [Accumulator(a, counted=retracting) for a in aggregates]
                arguments = json.loads(text, parse_float=Decimal)
                for accumulator in accumulators:
                    (accumulator.retract if retracts else accumulator.add)(arguments)
                after = results_json(aggregates, accumulators)
                if retracting and accumulators[0].rows <= 0:  # no row left: Flink deletes the group
                    if before is not None:
                        out.append((keys, before, True, False, False))
                    accumulators = None
                elif before is None:
                    out.append((keys, after, False, False, False))
                elif keyed and after != before:  # keyed by the group: the new row
                    out.append((keys, after, False, False, True))
                elif after != before:
                    out += [(keys, before, True, True, False), (keys, after, False, False, True)]
        if accumulators is not None:
            state.update((pickle.dumps(accumulators),))
        elif state.exists:
            state.remove()
        yield pd.DataFrame(out, columns=[KEYS, _RESULTS, DELETED, UPDATE_BEFORE, UPDATE_AFTER])
