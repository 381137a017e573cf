"""Streaming DataFrames for a source table: its physical and metadata columns, per connector.

`source_dataframe(spark, table)` returns the table's physical and metadata columns in declaration order
(computed columns and the watermark are added by the engine), followed by hidden columns the engine keeps
for error messages and quarantine records and drops before output:

* `__topic`, `__partition`, `__offset`: where a row comes from (Kafka coordinates; for files, `__topic`
  is the file path and the others are NULL; NULL for datagen).
* `__deleted` (upsert-kafka only): true for a tombstone, i.e. a DELETE of the row's PRIMARY KEY. Its key
  columns are decoded from the message key and all other columns are NULL. Every other row is an
  UPSERT (INSERT or UPDATE_AFTER) of its key; the engine keeps the latest row per key if it needs a
  changelog (Flink's ChangelogNormalize).

Kafka records go through `connector.formats.codecs`: records that are malformed under
'<format>.ignore-parse-errors' = 'true' are dropped and counted in the observed metric
`malformed_metric(table)` (column `records`, in `StreamingQueryProgress.observedMetrics`); otherwise the
query fails naming topic, partition and offset. With `malformed_rows=True` the same observation also
collects the skipped records themselves (column `rows`: `MALFORMED_FIELDS` per record), for the quality
gate to quarantine them: they travel to the driver with the batch's metrics. As in Flink, a NULL value
yields no row on a 'kafka' table with a json/csv value format, and a message whose key cannot give the
'key.fields' (NULL key with json/csv) yields no row.
"""

from __future__ import annotations

import dataclasses
import re
import sys
from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import Any, TypeVar

from pyspark.sql import Column, DataFrame, Observation, SparkSession
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
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from connector.connectors.declarations import DatagenOptions, FilesystemOptions, KafkaOptions
from connector.connectors.kafka.source import END_OF_INPUT_OFFSET, KafkaSource
from connector.diagnostics import Diagnostic, PipelineError
from connector.formats import codecs as formats
from connector.formats.codecs import Decoded, PayloadFormat
from connector.options import framework as options
from connector.options.framework import ConfigOption
from connector.runtime import data_sources
from connector.sql.catalog import Column as TableColumn
from connector.sql.catalog import ColumnKind, Table
from connector.sql.types import spark_type

T = TypeVar("T")
TOPIC, PARTITION, OFFSET, DELETED = "__topic", "__partition", "__offset", "__deleted"
HIDDEN_COLUMNS = (TOPIC, PARTITION, OFFSET, DELETED)
_VALUE_RECORD = "__value_record"
_KEY_PROBLEM, _VALUE_PROBLEM, _MALFORMED, _KEEP = "__key_problem", "__value_problem", "__malformed", "__keep"
_RAW_KEY, _RAW_VALUE = "__raw_key", "__raw_value"
RAW_KEY, RAW_VALUE = "raw_key", "raw_value"
MALFORMED_FIELDS = (TOPIC, PARTITION, OFFSET, RAW_KEY, RAW_VALUE)  # a collected malformed record (BINARY raw_*)


def malformed_metric(table: Table) -> str:
    """Name of the observed metric counting the table's skipped malformed records (column `records`)."""
    return f"malformed_records_{table.name}"


def source_dataframe(
    spark: SparkSession,
    table: Table,
    option_overrides: Mapping[str, str] | None = None,
    malformed_rows: bool = False,
    end_of_input: bool = False,
) -> DataFrame:
    """The streaming rows of `table`; `option_overrides` replace table options (e.g. from OPTIONS hints);
    `malformed_rows` collects skipped malformed records in the malformed-records observation; with
    `end_of_input` a bounded Kafka scan ends with the end-of-input row (`OFFSET` = END_OF_INPUT_OFFSET, NULL
    columns: see `connector.connectors.kafka.source`)."""
    if option_overrides:
        table = dataclasses.replace(table, options={**table.options, **option_overrides})
    connector = table.connector
    if connector in ("kafka", "upsert-kafka"):
        data_sources.register(spark, KafkaSource)
        source_options = dict(table.options)
        if connector == "upsert-kafka":  # always reads from the earliest offset (a fixed value of its factory)
            source_options["scan.startup.mode"] = str(options.resolve(table).get(KafkaOptions.SCAN_STARTUP_MODE))
        source_options[KafkaOptions.BOUNDED_END_WATERMARK.key] = str(end_of_input).lower()
        raw = spark.readStream.format(KafkaSource.name()).options(**source_options).load()
        return kafka_rows(raw, table, malformed_rows=malformed_rows, end_of_input=end_of_input)
    if connector == "datagen":
        return datagen_rows(spark, table)
    if connector == "filesystem":
        return filesystem_rows(spark, table, malformed_rows=malformed_rows)
    raise PipelineError(
        [
            Diagnostic.at(
                table.option_position("connector"),
                "connector-usage",
                f"Table '{table.name}' cannot be read: connector '{connector}' is not a source.",
            )
        ]
    )


def _columns(table: Table) -> list[TableColumn]:
    """Physical and metadata columns in declaration order: what a source produces."""
    return [c for c in table.columns if c.kind is not ColumnKind.COMPUTED]


def _typed(value: Column, column: TableColumn) -> Column:
    """`value` as the column's declared type (Flink casts metadata to the declared type)."""
    if column.data_type is None:
        return value
    return value.cast(spark_type(column.data_type))


def _finish(
    frame: DataFrame,
    table: Table,
    checks: list[Column],
    observation: str | Observation | None,
) -> DataFrame:
    """Fail on problems, count (and collect, when the frame has the raw columns) malformed records, drop
    skipped rows and helper columns."""
    for check in checks:
        frame = frame.where(check)
    metric = observation if observation is not None else malformed_metric(table)
    figures = [F.count(F.when(F.col(_MALFORMED), 1)).alias("records")]
    if _RAW_VALUE in frame.columns:
        raw = [F.col(_RAW_KEY).alias(RAW_KEY), F.col(_RAW_VALUE).alias(RAW_VALUE)]
        record = F.struct(F.col(TOPIC), F.col(PARTITION), F.col(OFFSET), *raw)
        figures.append(F.collect_list(F.when(F.col(_MALFORMED), record)).alias("rows"))
    frame = frame.observe(metric, *figures)
    frame = frame.where(F.col(_KEEP))
    return frame.drop(_KEY_PROBLEM, _VALUE_PROBLEM, _MALFORMED, _KEEP, _RAW_KEY, _RAW_VALUE)


# ---------------------------------------------------------------------------------------------------------
# Kafka
# ---------------------------------------------------------------------------------------------------------


def _kafka_headers() -> Column:
    """Kafka headers as Flink's MAP<STRING, BYTES>: duplicate keys collapse, the last one wins."""
    headers = F.coalesce(F.col("headers"), F.array().cast("array<struct<key:string,value:binary>>"))
    last = F.filter(
        headers,
        lambda h, i: ~F.exists(F.slice(headers, i + 2, F.size(headers)), lambda o: o["key"] == h["key"]),
    )
    return F.map_from_entries(last)


_KAFKA_METADATA: dict[str, Callable[[], Column]] = {
    "topic": lambda: F.col("topic"),
    "partition": lambda: F.col("partition"),
    "offset": lambda: F.col("offset"),
    "timestamp": lambda: F.col("timestamp"),
    "timestamp-type": lambda: F.col("timestamp_type"),
    "leader-epoch": lambda: F.col("leader_epoch"),
    "headers": _kafka_headers,
}


def _require_value_format(table: Table) -> PayloadFormat:
    fmt = PayloadFormat.of(table, "value")
    if fmt is None:
        raise PipelineError(
            [
                Diagnostic.at(
                    table.position,
                    "missing-option",
                    f"Table '{table.name}' needs a 'value.format' (or 'format').",
                )
            ]
        )
    return fmt


def kafka_rows(
    raw: DataFrame,
    table: Table,
    observation: str | Observation | None = None,
    malformed_rows: bool = False,
    end_of_input: bool = False,
) -> DataFrame:
    """Decode raw `flink-kafka` rows (key, value, topic, partition, offset, timestamp, ...) into the
    table's columns plus the hidden ones; `observation` overrides the malformed-records metric, which
    collects the skipped records too with `malformed_rows`; with `end_of_input` the end-of-input row is kept
    (NULL columns), neither a delete nor malformed."""
    upsert = table.connector == "upsert-kafka"
    value_fmt = _require_value_format(table)
    key_fmt = PayloadFormat.of(table, "key")
    if key_fmt is not None and not key_fmt.fields:
        key_fmt = None  # Flink: a key format without key fields reads nothing from the key

    def decode_record(record: Column) -> list[Decoded]:
        value = formats.decode(record, value_fmt, "__value")
        key = [formats.decode(F.col("key"), key_fmt, "__key")] if key_fmt is not None else []
        return [value, *key]

    frame, decoded = formats.staged(raw, formats.records(F.col("value"), value_fmt), decode_record)
    value, key = decoded[0], (decoded[1] if key_fmt is not None else None)

    marker = (F.col("offset") == END_OF_INPUT_OFFSET) if end_of_input else F.lit(False)
    deleted = F.col("value").isNull() & ~marker if upsert else F.lit(False)
    key_values = key.values if key is not None else {}
    selected: list[Column] = []
    for column in _columns(table):
        if column.kind is ColumnKind.METADATA:
            source = _metadata(_KAFKA_METADATA, column, table)()
            selected.append(_typed(source, column).alias(column.name))
        elif column.name in value.values:
            from_value = value.values[column.name]
            if column.name in key_values:  # 'value.fields-include' = 'ALL': the value wins, unless deleted
                from_value = F.when(deleted, key_values[column.name]).otherwise(from_value)
            selected.append(from_value.alias(column.name))
        elif column.name in key_values:
            selected.append(key_values[column.name].alias(column.name))
        else:
            selected.append(F.lit(None).cast(_column_type(column)).alias(column.name))

    key_ok = ~key.absent & ~key.malformed if key is not None else F.lit(True)
    value_ok = deleted | (~value.absent & ~value.malformed)
    malformed = ((key.malformed if key is not None else F.lit(False)) | (~deleted & value.malformed)) & ~marker
    key_problem = F.when(~marker, key.problem) if key is not None else F.lit(None).cast(StringType())
    value_problem = F.when(~deleted & ~marker, value.problem)
    hidden = [F.col("topic").alias(TOPIC), F.col("partition").alias(PARTITION), F.col("offset").alias(OFFSET)]
    if upsert:
        hidden.append(deleted.alias(DELETED))
    if malformed_rows:
        hidden += [F.col("key").alias(_RAW_KEY), F.col("value").alias(_RAW_VALUE)]
    frame = frame.select(
        *selected,
        *hidden,
        key_problem.alias(_KEY_PROBLEM),
        value_problem.alias(_VALUE_PROBLEM),
        malformed.alias(_MALFORMED),
        ((key_ok & value_ok) | marker).alias(_KEEP),
    )
    origin = formats.kafka_origin(F.col(TOPIC), F.col(PARTITION), F.col(OFFSET))
    checks = [formats.failure(value_fmt, F.col(_VALUE_PROBLEM), origin)]
    if key_fmt is not None:
        checks.insert(0, formats.failure(key_fmt, F.col(_KEY_PROBLEM), origin))
    return _finish(frame, table, checks, observation)


def _metadata(known: Mapping[str, T], column: TableColumn, table: Table) -> T:
    """What metadata column `column` reads; an unknown key is reported at the column."""
    key = column.metadata_key or column.name
    if key not in known:
        message = (
            f"Invalid metadata key '{key}' in column '{column.name}' of table '{table.name}'. Connector "
            f"'{table.connector}' supports the following metadata keys for reading: {', '.join(sorted(known))}."
        )
        raise PipelineError([Diagnostic.at(column.position, "metadata", message)])
    return known[key]


def _column_type(column: TableColumn) -> DataType:
    if column.data_type is None:
        raise ValueError(f"column '{column.name}' has no data type")
    return spark_type(column.data_type)


# ---------------------------------------------------------------------------------------------------------
# Filesystem
# ---------------------------------------------------------------------------------------------------------

_FILE_METADATA: dict[str, str] = {
    "file.path": "file_path",
    "file.name": "file_name",
    "file.size": "file_size",
    "file.modification-time": "file_modification_time",
}


def filesystem_rows(
    spark: SparkSession, table: Table, observation: str | Observation | None = None, malformed_rows: bool = False
) -> DataFrame:
    """Files under 'path' as a stream (Spark's file source, which remembers the files it has read).

    json and csv files are read line by line and decoded with `connector.formats.codecs` (one record per line,
    Flink's semantics); parquet with Spark's reader. `PARTITIONED BY` columns come from `col=value`
    directories. A malformed line's `raw_value` is its UTF-8 bytes.
    """
    resolved = options.resolve(table)
    path = str(resolved.require(FilesystemOptions.PATH))
    found = options.format_options(table, "value")
    if found is None:
        raise PipelineError(
            [Diagnostic.at(table.position, "missing-option", f"Table '{table.name}' needs a 'format'.")]
        )
    identifier, format_values = found
    physical = table.physical_columns
    partition_names = {name.lower() for name in table.partitioned_by}
    partitions = [c for c in physical if c.name.lower() in partition_names]
    partition_fields = [StructField(c.name, _column_type(c)) for c in partitions]
    reader = spark.readStream
    if identifier == "parquet":
        schema = StructType([StructField(c.name, _column_type(c)) for c in physical])
        extra = {k: str(v) for k, v in format_values.items() if k != "utc-timezone"}
        frame = reader.schema(schema).options(**extra).parquet(path)
        values = {c.name: F.col(c.name) for c in physical}
        value_fmt: PayloadFormat | None = None
        decoded: Decoded | None = None
    else:
        data_columns = [c for c in physical if c not in partitions]
        value_fmt = PayloadFormat.of(table, "value", data_columns)
        if value_fmt is None or value_fmt.identifier == formats.RAW:
            raise PipelineError(
                [
                    Diagnostic.at(
                        table.option_position("format"),
                        "unsupported-format",
                        f"Format '{identifier}' cannot be read from files; use json, csv or parquet.",
                    )
                ]
            )
        schema = StructType([StructField("value", StringType()), *partition_fields])
        lines = reader.schema(schema).format("text").load(path)
        fmt = value_fmt
        frame, (decoded,) = formats.staged(
            lines, F.array(F.col("value")), lambda line: [formats.decode(line, fmt, "__value")]
        )
        values = {**decoded.values, **{c.name: F.col(c.name) for c in partitions}}

    selected: list[Column] = []
    for column in _columns(table):
        if column.kind is ColumnKind.METADATA:
            source = F.col("_metadata").getField(_metadata(_FILE_METADATA, column, table))
            selected.append(_typed(source, column).alias(column.name))
        else:
            selected.append(values[column.name].alias(column.name))
    file_path = F.col("_metadata").getField("file_path")
    hidden = [
        file_path.alias(TOPIC),
        F.lit(None).cast(IntegerType()).alias(PARTITION),
        F.lit(None).cast(LongType()).alias(OFFSET),
    ]
    if malformed_rows and decoded is not None:
        raw_line = F.col("value").cast(BinaryType())
        hidden += [F.lit(None).cast(BinaryType()).alias(_RAW_KEY), raw_line.alias(_RAW_VALUE)]
    nothing = F.lit(None).cast(StringType())
    frame = frame.select(
        *selected,
        *hidden,
        nothing.alias(_KEY_PROBLEM),
        (decoded.problem if decoded is not None else nothing).alias(_VALUE_PROBLEM),
        (decoded.malformed if decoded is not None else F.lit(False)).alias(_MALFORMED),
        (~decoded.absent & ~decoded.malformed if decoded is not None else F.lit(True)).alias(_KEEP),
    )
    checks = []
    if value_fmt is not None:
        origin = F.concat(F.lit("file '"), F.col(TOPIC), F.lit("'"))
        checks.append(formats.failure(value_fmt, F.col(_VALUE_PROBLEM), origin))
    return _finish(frame, table, checks, observation)


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


def datagen_rows(spark: SparkSession, table: Table) -> DataFrame:
    """Generated rows on Spark's rate source: 'rows-per-second', bounded by 'number-of-rows' and by the
    shortest 'sequence' column (Flink's datagen ends with the first exhausted generator). A bounded
    stream stays open after its last row; the engine stops it."""
    resolved = options.resolve(table)
    rows_per_second = resolved.require(DatagenOptions.ROWS_PER_SECOND)
    limit = resolved.get(DatagenOptions.NUMBER_OF_ROWS)
    rate = spark.readStream.format("rate").option("rowsPerSecond", str(rows_per_second)).load()
    selected: list[Column] = []
    for index, column in enumerate(table.physical_columns):
        data_type = _column_type(column)
        opts = {key: resolved.get(template.for_column(column.name)) for key, template in _GENERATOR_OPTIONS}
        declared = re.match(r"\s*(?:VAR)?CHAR\s*\(\s*(\d+)\s*\)", column.type_sql, re.IGNORECASE)
        if declared and not resolved.is_set(DatagenOptions.LENGTH.for_column(column.name)):
            opts["length"] = int(declared.group(1))  # Flink: CHAR(n) / VARCHAR(n) strings have length n
        if opts["kind"] == "sequence":
            start, end = opts["start"], opts["end"]
            assert isinstance(start, int | float) and isinstance(end, int | float)  # validated by the factory
            count = int(end) - int(start) + 1
            limit = count if limit is None else min(limit, count)
            value = (F.lit(int(start)) + F.col("value")).cast(data_type)
        else:
            value = _random_value(column, data_type, opts, index)
            null_rate = opts["null-rate"]
            if isinstance(null_rate, float) and null_rate > 0:
                value = F.when(_uniform(F.lit(-1 - index)) >= F.lit(null_rate), value)
        selected.append(value.alias(column.name))
    if limit is not None:
        rate = rate.where(F.col("value") < F.lit(limit))
    nothing = [F.lit(None).cast(StringType()).alias(TOPIC), F.lit(None).cast(IntegerType()).alias(PARTITION)]
    return rate.select(*selected, *nothing, F.lit(None).cast(LongType()).alias(OFFSET))
