"""Generated rows (Flink's datagen generators) as Spark expressions on the rate source."""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    BinaryType,
    BooleanType,
    ByteType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
    TimestampNTZType,
    TimestampType,
)

from connector.catalog.model import Column as TableColumn
from connector.catalog.model import Table
from connector.connectors import registry
from connector.connectors.datagen.factory import DatagenOptions, row_count
from connector.connectors.reading import END_OF_INPUT_OFFSET, OFFSET, PARTITION, TOPIC, column_type
from connector.diagnostics import Diagnostic, PipelineError
from connector.options.declarations import ConfigOption

# ---------------------------------------------------------------------------------------------------------
# Datagen
# ---------------------------------------------------------------------------------------------------------

_INTEGER_RANGES: dict[type[DataType], tuple[int, int]] = {
    ByteType: (-(2**7), 2**7 - 1),
    ShortType: (-(2**15), 2**15 - 1),
    IntegerType: (-(2**31), 2**31 - 1),
    LongType: (-(2**63), 2**63 - 1),
}
_UNIT = float(2**53)
_FLOAT_MAX = 3.4028234663852886e38  # Java's Float.MAX_VALUE
_GENERATOR_OPTIONS: tuple[tuple[str, ConfigOption[Any]], ...] = (
    ("kind", DatagenOptions.KIND),
    ("min", DatagenOptions.MIN),
    ("max", DatagenOptions.MAX),
    ("max-past", DatagenOptions.MAX_PAST),
    ("length", DatagenOptions.LENGTH),
    ("var-len", DatagenOptions.VAR_LEN),
    ("start", DatagenOptions.START),
    ("end", DatagenOptions.END),
    ("null-rate", DatagenOptions.NULL_RATE),
)


def _uniform(seed: Column) -> Column:
    """A deterministic pseudo-random DOUBLE in [0, 1) per row (replays of a batch get the same values)."""
    return F.pmod(F.xxhash64(F.col("value"), seed), F.lit(2**53)).cast(DoubleType()) / F.lit(_UNIT)


def _hex_text(seed: int, length: Column, max_length: int) -> Column:
    blocks = max(1, -(-max_length // 64))
    digest = F.concat(*[F.sha2(F.concat_ws(":", F.col("value"), F.lit(seed), F.lit(j)), 256) for j in range(blocks)])
    return digest.substr(F.lit(1), length)


def _random_value(column: TableColumn, data_type: DataType, opts: Mapping[str, object], seed: int) -> Column:
    """Flink's RandomGenerator for one column, from its 'fields.<col>.*' options."""
    r = _uniform(F.lit(seed))
    low, high = opts.get("min"), opts.get("max")
    if isinstance(data_type, BooleanType):
        return r < F.lit(0.5)
    if type(data_type) in _INTEGER_RANGES:
        type_low, type_high = _INTEGER_RANGES[type(data_type)]
        lo = int(low) if isinstance(low, int | float) else type_low
        hi = int(high) if isinstance(high, int | float) else type_high
        # Literals as text: a BIGINT span (2**64) does not fit Spark's long literals.
        span = F.lit(str(hi - lo + 1)).cast(DecimalType(38, 0))
        offset = F.floor(r.cast(DecimalType(38, 18)) * span).cast(DecimalType(38, 0))
        low_dec, high_dec = F.lit(str(lo)).cast(DecimalType(38, 0)), F.lit(str(hi)).cast(DecimalType(38, 0))
        return F.least(low_dec + offset, high_dec).cast(data_type)
    if isinstance(data_type, FloatType | DoubleType | DecimalType):
        # Flink: [Float/Double.MIN_VALUE, MAX_VALUE], DECIMAL clamped to what its precision holds.
        if isinstance(data_type, DecimalType):
            default_high = 10.0 ** (data_type.precision - data_type.scale)
        else:
            default_high = _FLOAT_MAX if isinstance(data_type, FloatType) else sys.float_info.max
        lo_f = float(low) if isinstance(low, int | float) else 0.0
        hi_f = float(high) if isinstance(high, int | float) else default_high
        return (F.lit(lo_f) + r * F.lit(hi_f - lo_f)).try_cast(data_type)
    configured = opts.get("length")
    max_length = configured if isinstance(configured, int) else 100
    length: Column = F.lit(max_length)
    if opts.get("var-len"):
        length = F.lit(1) + F.pmod(F.xxhash64(F.col("value"), F.lit(seed + 7919)), F.lit(max(max_length, 1)))
    if isinstance(data_type, StringType):
        return _hex_text(seed, length, max_length)
    if isinstance(data_type, BinaryType):
        return F.unhex(_hex_text(seed, length * F.lit(2), 2 * max_length))
    if isinstance(data_type, TimestampType | TimestampNTZType | DateType):
        past = opts.get("max-past")
        seconds = past.total_seconds() if isinstance(past, timedelta) else 0.0
        back = F.make_dt_interval(F.lit(0), F.lit(0), F.lit(0), (r * F.lit(seconds)).cast(DecimalType(18, 6)))
        return (F.col("timestamp") - back).cast(data_type)
    raise PipelineError(
        [
            Diagnostic.at(
                column.position,
                "unsupported-type",
                f"The datagen connector cannot generate column '{column.name}' of type {column.type_sql} yet.",
            )
        ]
    )


def read(spark: SparkSession, table: Table, malformed_rows: bool, end_of_input: bool) -> DataFrame:
    """A datagen table's rows (generated rows are never malformed, and the runner ends bounded ones)."""
    return datagen_rows(spark, table, end_of_input)


def datagen_rows(spark: SparkSession, table: Table, end_of_input: bool = False) -> DataFrame:
    """Generated rows on Spark's rate source: 'rows-per-second', bounded by `row_count`. A bounded stream stays
    open after its last row; the runner stops it. With `end_of_input` the row after the last one is the
    end-of-input row (OFFSET END_OF_INPUT_OFFSET), which moves the watermark to the end of time, as a bounded
    Kafka scan's does."""
    resolved = registry.resolve(table)
    rows_per_second = resolved.require(DatagenOptions.ROWS_PER_SECOND)
    limit = row_count(table, resolved)
    rate = spark.readStream.format("rate").option("rowsPerSecond", str(rows_per_second)).load()
    selected: list[Column] = []
    for index, column in enumerate(table.physical_columns):
        data_type = column_type(column)
        opts = {key: resolved.get(template.for_column(column.name)) for key, template in _GENERATOR_OPTIONS}
        declared = re.match(r"\s*(?:VAR)?CHAR\s*\(\s*(\d+)\s*\)", column.type_sql, re.IGNORECASE)
        if declared and not resolved.is_set(DatagenOptions.LENGTH.for_column(column.name)):
            opts["length"] = int(declared.group(1))  # Flink: CHAR(n) / VARCHAR(n) strings have length n
        if opts["kind"] == "sequence":
            start = opts["start"]
            assert isinstance(start, int | float)  # validated by the factory
            value = (F.lit(int(start)) + F.col("value")).cast(data_type)
        else:
            value = _random_value(column, data_type, opts, index)
            null_rate = opts["null-rate"]
            if isinstance(null_rate, float) and null_rate > 0:
                value = F.when(_uniform(F.lit(-1 - index)) >= F.lit(null_rate), value)
        selected.append(value.alias(column.name))
    offset = F.lit(None).cast(LongType())
    if limit is not None:
        last = limit if end_of_input else limit - 1
        rate = rate.where(F.col("value") <= F.lit(last))
        if end_of_input:
            offset = F.when(F.col("value") == F.lit(limit), F.lit(END_OF_INPUT_OFFSET)).cast(LongType())
    nothing = [F.lit(None).cast(StringType()).alias(TOPIC), F.lit(None).cast(IntegerType()).alias(PARTITION)]
    return rate.select(*selected, *nothing, offset.alias(OFFSET))
