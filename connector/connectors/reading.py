"""Streaming DataFrames for a source table: its physical and metadata columns, per connector.

`source_dataframe(spark, table)` returns the table's physical and metadata columns in declaration order
(computed columns and the watermark are added by the engine), followed by hidden columns the engine keeps
for error messages and quarantine records and drops before output:

* `__topic`, `__partition`, `__offset`: where a row comes from (Kafka coordinates; for files, `__topic`
  is the file path and the others are NULL; NULL for datagen).
* `__deleted` (changelogs only: upsert-kafka tables and CDC value formats such as debezium-json): true for a
  DELETE of the row's key. For an upsert-kafka tombstone the key columns are decoded from the message key and
  all other columns are NULL; a CDC delete carries the deleted row. Every other row is an UPSERT (INSERT or
  UPDATE_AFTER) of its key.

Kafka records and file lines are decoded by their format's codec (`connector.formats`): records that are malformed under
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
import importlib
from collections.abc import Mapping
from typing import Protocol, TypeVar

from pyspark.sql import Column, DataFrame, Observation, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    DataType,
)

from connector.catalog.model import DELETED_COLUMN, UPDATE_AFTER_COLUMN, UPDATE_BEFORE_COLUMN, ColumnKind, Table
from connector.catalog.model import Column as TableColumn
from connector.catalog.spark_types import spark_type
from connector.connectors import END_OF_INPUT_OFFSET as END_OF_INPUT_OFFSET  # re-exported: the decoding names it
from connector.connectors import registry
from connector.diagnostics import Diagnostic, PipelineError

T = TypeVar("T")
TOPIC, PARTITION, OFFSET, DELETED = "__topic", "__partition", "__offset", DELETED_COLUMN
UPDATE_BEFORE, UPDATE_AFTER = UPDATE_BEFORE_COLUMN, UPDATE_AFTER_COLUMN
KEY_PROBLEM, VALUE_PROBLEM, MALFORMED, KEEP = "__key_problem", "__value_problem", "__malformed", "__keep"
HIDDEN_RAW_KEY, HIDDEN_RAW_VALUE = "__raw_key", "__raw_value"
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
    factory = registry.connector_factory(table)
    if factory is None or factory.reader is None:
        raise _unusable(table, f"cannot be read: connector '{table.connector}' is not a source")
    reader: SourceReader = importlib.import_module(factory.reader)
    return reader.read(spark, table, malformed_rows=malformed_rows, end_of_input=end_of_input)


def lookup_dataframe(spark: SparkSession, table: Table) -> DataFrame:
    """The rows of `table` for lookup joins: a static relation its connector's `lookup` module gives, which a
    stream-static join reads again every micro-batch."""
    factory = registry.connector_factory(table)
    if factory is None or factory.lookup is None:
        raise _unusable(table, f"cannot be looked up: connector '{table.connector}' has no lookup")
    module: LookupReader = importlib.import_module(factory.lookup)
    return module.lookup(spark, table)


def _unusable(table: Table, words: str) -> PipelineError:
    return PipelineError(
        [Diagnostic.at(table.option_position("connector"), "connector-usage", f"Table '{table.name}' {words}.")]
    )


class LookupReader(Protocol):
    """What a connector's lookup module (its factory's `lookup`) provides."""

    def lookup(self, spark: SparkSession, table: Table) -> DataFrame:
        """The table's physical columns as a static relation, read when a micro-batch joins it."""
        ...


class SourceReader(Protocol):
    """What a connector's reading module (its factory's `reader`) provides."""

    def read(self, spark: SparkSession, table: Table, malformed_rows: bool, end_of_input: bool) -> DataFrame:
        """The streaming rows of `table`: its physical and metadata columns, then the hidden ones."""
        ...


def source_columns(table: Table) -> list[TableColumn]:
    """Physical and metadata columns in declaration order: what a source produces."""
    return [c for c in table.columns if c.kind is not ColumnKind.COMPUTED]


def typed(value: Column, column: TableColumn) -> Column:
    """`value` as the column's declared type (Flink casts metadata to the declared type)."""
    if column.data_type is None:
        return value
    return value.cast(spark_type(column.data_type))


def finish(
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
    figures = [F.count(F.when(F.col(MALFORMED), 1)).alias("records")]
    if HIDDEN_RAW_VALUE in frame.columns:
        raw = [F.col(HIDDEN_RAW_KEY).alias(RAW_KEY), F.col(HIDDEN_RAW_VALUE).alias(RAW_VALUE)]
        record = F.struct(F.col(TOPIC), F.col(PARTITION), F.col(OFFSET), *raw)
        figures.append(F.collect_list(F.when(F.col(MALFORMED), record)).alias("rows"))
    frame = frame.observe(metric, *figures)
    frame = frame.where(F.col(KEEP))
    return frame.drop(KEY_PROBLEM, VALUE_PROBLEM, MALFORMED, KEEP, HIDDEN_RAW_KEY, HIDDEN_RAW_VALUE)


def metadata_source(known: Mapping[str, T], column: TableColumn, table: Table) -> T:
    """What metadata column `column` reads; an unknown key is reported at the column."""
    key = column.metadata_key or column.name
    if key not in known:
        message = (
            f"Invalid metadata key '{key}' in column '{column.name}' of table '{table.name}'. Connector "
            f"'{table.connector}' supports the following metadata keys for reading: {', '.join(sorted(known))}."
        )
        raise PipelineError([Diagnostic.at(column.position, "metadata", message)])
    return known[key]


def column_type(column: TableColumn) -> DataType:
    if column.data_type is None:
        raise ValueError(f"column '{column.name}' has no data type")
    return spark_type(column.data_type)
