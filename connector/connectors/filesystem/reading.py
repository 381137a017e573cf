"""Reading a filesystem table: Spark's file source, lines decoded by the table's format (or Spark's own reader)."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Observation, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    BinaryType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from connector.catalog.model import ColumnKind, Table
from connector.connectors import registry
from connector.connectors.filesystem.factory import FilesystemOptions
from connector.connectors.reading import (
    HIDDEN_RAW_KEY,
    HIDDEN_RAW_VALUE,
    KEEP,
    KEY_PROBLEM,
    MALFORMED,
    OFFSET,
    PARTITION,
    TOPIC,
    VALUE_PROBLEM,
    column_type,
    finish,
    metadata_source,
    source_columns,
    typed,
)
from connector.diagnostics import Diagnostic, PipelineError
from connector.formats import payload as formats
from connector.formats import registry as format_registry
from connector.formats.payload import Decoded, PayloadFormat

# ---------------------------------------------------------------------------------------------------------
# Filesystem
# ---------------------------------------------------------------------------------------------------------

_FILE_METADATA: dict[str, str] = {
    "file.path": "file_path",
    "file.name": "file_name",
    "file.size": "file_size",
    "file.modification-time": "file_modification_time",
}


def read(spark: SparkSession, table: Table, malformed_rows: bool, end_of_input: bool) -> DataFrame:
    """A filesystem table's rows (`end_of_input` is a Kafka notion: a bounded file scan just ends)."""
    return filesystem_rows(spark, table, malformed_rows=malformed_rows)


def filesystem_rows(
    spark: SparkSession, table: Table, observation: str | Observation | None = None, malformed_rows: bool = False
) -> DataFrame:
    """Files under 'path' as a stream (Spark's file source, which remembers the files it has read).

    json and csv files are read line by line and decoded by the format's codec (one record per line,
    Flink's semantics); parquet with Spark's reader. `PARTITIONED BY` columns come from `col=value`
    directories. A malformed line's `raw_value` is its UTF-8 bytes.
    """
    resolved = registry.resolve(table)
    path = str(resolved.require(FilesystemOptions.PATH))
    found = registry.format_options(table, "value")
    if found is None:
        raise PipelineError(
            [Diagnostic.at(table.position, "missing-option", f"Table '{table.name}' needs a 'format'.")]
        )
    identifier, format_values = found
    physical = table.physical_columns
    partition_names = {name.lower() for name in table.partitioned_by}
    partitions = [c for c in physical if c.name.lower() in partition_names]
    partition_fields = [StructField(c.name, column_type(c)) for c in partitions]
    reader = spark.readStream
    declared = format_registry.get(identifier)
    files = declared.codec.spark_files(format_values) if declared is not None and declared.codec is not None else None
    if files is not None and declared is not None and declared.codec is not None and not declared.codec.reads_lines:
        spark_format, spark_options = files
        schema = StructType([StructField(c.name, column_type(c)) for c in physical])
        frame = reader.schema(schema).format(spark_format).options(**spark_options).load(path)
        values = {c.name: F.col(c.name) for c in physical}
        value_fmt: PayloadFormat | None = None
        decoded: Decoded | None = None
    else:
        data_columns = [c for c in physical if c not in partitions]
        value_fmt = PayloadFormat.of(table, "value", data_columns)
        if value_fmt is None:
            raise PipelineError(
                [Diagnostic.at(table.position, "missing-option", f"Table '{table.name}' needs a 'format'.")]
            )
        schema = StructType([StructField("value", StringType()), *partition_fields])
        lines = reader.schema(schema).format("text").load(path)
        fmt = value_fmt
        frame, (decoded,) = formats.staged(
            lines, F.array(F.col("value")), lambda line: [formats.decode(line, fmt, "__value")]
        )
        values = {**decoded.values, **{c.name: F.col(c.name) for c in partitions}}

    selected: list[Column] = []
    for column in source_columns(table):
        if column.kind is ColumnKind.METADATA:
            source = F.col("_metadata").getField(metadata_source(_FILE_METADATA, column, table))
            selected.append(typed(source, column).alias(column.name))
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
        hidden += [F.lit(None).cast(BinaryType()).alias(HIDDEN_RAW_KEY), raw_line.alias(HIDDEN_RAW_VALUE)]
    nothing = F.lit(None).cast(StringType())
    frame = frame.select(
        *selected,
        *hidden,
        nothing.alias(KEY_PROBLEM),
        (decoded.problem if decoded is not None else nothing).alias(VALUE_PROBLEM),
        (decoded.malformed if decoded is not None else F.lit(False)).alias(MALFORMED),
        (~decoded.absent & ~decoded.malformed if decoded is not None else F.lit(True)).alias(KEEP),
    )
    checks = []
    if value_fmt is not None:
        origin = F.concat(F.lit("file '"), F.col(TOPIC), F.lit("'"))
        checks.append(formats.failure(value_fmt, F.col(VALUE_PROBLEM), origin))
    return finish(frame, table, checks, observation)
