"""The `datagen` connector's factory; `fields.#.*` options are per physical column ('fields.id.kind')."""

from __future__ import annotations

from datetime import timedelta

from connector.catalog.model import Table
from connector.options import shared
from connector.options.declarations import ConfigOption, ResolvedOptions, at_least, fraction
from connector.options.factory import Check, Factory, SourceBehaviour
from connector.options.types import BOOLEAN, DURATION, ENUM, FLOAT, INT, LONG, NUMBER


class DatagenOptions:
    """Options of the `datagen` connector; `fields.#.*` are per physical column ('fields.id.kind')."""

    ROWS_PER_SECOND = ConfigOption(
        "rows-per-second", LONG, "Rows generated per second.", default=10000, constraint=at_least(1)
    )
    NUMBER_OF_ROWS = ConfigOption(
        "number-of-rows",
        LONG,
        "Total rows to generate (bounded); unlimited when unset.",
        constraint=at_least(0),
    )
    SCAN_PARALLELISM = shared.SCAN_PARALLELISM
    KIND = ConfigOption(
        "fields.#.kind",
        ENUM("random", "sequence"),
        "Generator of the column: 'random' values or a 'sequence' from 'start' to 'end'.",
        default="random",
    )
    MIN = ConfigOption("fields.#.min", NUMBER, "Random generator: smallest value (numeric columns).")
    MAX = ConfigOption("fields.#.max", NUMBER, "Random generator: largest value (numeric columns).")
    MAX_PAST = ConfigOption(
        "fields.#.max-past",
        DURATION,
        "Random generator: largest distance into the past from now (timestamp columns).",
        default=timedelta(0),
    )
    LENGTH = ConfigOption(
        "fields.#.length",
        INT,
        "Random generator: length of strings, bytes and collections.",
        default=100,
        constraint=at_least(0),
    )
    VAR_LEN = ConfigOption(
        "fields.#.var-len", BOOLEAN, "Random generator: variable-length strings and bytes.", default=False
    )
    START = ConfigOption("fields.#.start", NUMBER, "Sequence generator: first value (required).")
    END = ConfigOption("fields.#.end", NUMBER, "Sequence generator: last value (required).")
    NULL_RATE = ConfigOption(
        "fields.#.null-rate", FLOAT, "Fraction of null values.", default=0.0, constraint=fraction()
    )


_RANDOM_ONLY = (
    DatagenOptions.MIN,
    DatagenOptions.MAX,
    DatagenOptions.MAX_PAST,
    DatagenOptions.LENGTH,
    DatagenOptions.VAR_LEN,
)
_SEQUENCE_ONLY = (DatagenOptions.START, DatagenOptions.END)


def _datagen_generators(check: Check) -> None:
    """Each generator kind takes its own options; sequences need both ends, bounds must be ordered."""
    options = check.options
    for column in check.table.physical_columns:
        kind_option = DatagenOptions.KIND.for_column(column.name)
        kind = options.get(kind_option)
        wrong = _SEQUENCE_ONLY if kind == "random" else _RANDOM_ONLY
        for template in wrong:
            option = template.for_column(column.name)
            if options.is_set(option):
                check.report(
                    "option-conflict",
                    f"Option '{option.key}' only applies to "
                    f"'{'random' if kind == 'sequence' else 'sequence'}' "
                    f"fields, but '{kind_option.key}' is '{kind}'.",
                    option.key,
                )
        if kind == "sequence":
            for template in _SEQUENCE_ONLY:
                option = template.for_column(column.name)
                if not options.is_set(option):
                    check.report(
                        "missing-option",
                        f"Could not find required property '{option.key}' for sequence generator.",
                        kind_option.key,
                    )
        for low, high in (
            (DatagenOptions.MIN, DatagenOptions.MAX),
            (DatagenOptions.START, DatagenOptions.END),
        ):
            low_value = options.get(low.for_column(column.name))
            high_value = options.get(high.for_column(column.name))
            if low_value is not None and high_value is not None and low_value > high_value:
                check.report(
                    "invalid-option-value",
                    f"'{low.for_column(column.name).key}' ({low_value}) must not be greater than "
                    f"'{high.for_column(column.name).key}' ({high_value}).",
                    low.for_column(column.name).key,
                )


def row_count(table: Table, opts: ResolvedOptions) -> int | None:
    """The rows a datagen table generates: 'number-of-rows', and no more than its shortest 'sequence' column holds
    (Flink's datagen ends with the first exhausted generator); None: unbounded."""
    counts = [opts.get(DatagenOptions.NUMBER_OF_ROWS)]
    for column in table.physical_columns:
        if opts.get(DatagenOptions.KIND.for_column(column.name)) == "sequence":
            start = opts.get(DatagenOptions.START.for_column(column.name))
            end = opts.get(DatagenOptions.END.for_column(column.name))
            if isinstance(start, int | float) and isinstance(end, int | float):  # validated by the rules
                counts.append(max(0, int(end) - int(start) + 1))
    bounds = [c for c in counts if c is not None]
    return min(bounds) if bounds else None


def _describe_source(table: Table, opts: ResolvedOptions) -> SourceBehaviour:
    rows = row_count(table, opts)
    rate = opts.get(DatagenOptions.ROWS_PER_SECOND)
    stop = f"after {rows} rows" if rows is not None else "unbounded"
    # A bounded datagen table with a WATERMARK ends with the end-of-input row, as a bounded Kafka scan does: Flink's
    # bounded sources emit the final watermark, which fires every open window.
    final = rows is not None and table.watermark is not None
    if final:
        stop += "; the watermark then moves to the end of time, firing every open window"
    # Spark's rate source cannot run AvailableNow; the runner stops the query after the rows instead.
    return SourceBehaviour(
        False, {"start": f"generated, {rate} rows per second", "stop": stop}, rows=rows, final_watermark=final
    )


FACTORY = Factory(
    "datagen",
    "Generates rows: random values or sequences per column, at 'rows-per-second', optionally bounded.",
    options=tuple(v for v in vars(DatagenOptions).values() if isinstance(v, ConfigOption)),
    reader="connector.connectors.datagen.reading",
    describe_source=_describe_source,
    rules=(_datagen_generators,),
)
