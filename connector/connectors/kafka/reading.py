"""Kafka records (`flink-kafka` rows) decoded into a kafka or upsert-kafka table's columns."""

from __future__ import annotations

import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

from pyspark.sql import Column, DataFrame, Observation, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import DataStreamReader
from pyspark.sql.types import (
    StringType,
)

from connector.catalog.model import ColumnKind, Table
from connector.connectors import registry
from connector.connectors.kafka.options import KafkaOptions
from connector.connectors.kafka.records import DECODED_VALUE
from connector.connectors.kafka.settings import OPTIONAL_COLUMNS, RECORD_COLUMNS, VALUE_JSON_FIELDS
from connector.connectors.kafka.source import KafkaSource
from connector.connectors.reading import (
    DELETED,
    END_OF_INPUT_OFFSET,
    HIDDEN_RAW_KEY,
    HIDDEN_RAW_VALUE,
    KEEP,
    KEY_PROBLEM,
    MALFORMED,
    OFFSET,
    PARTITION,
    TOPIC,
    UPDATE_AFTER,
    UPDATE_BEFORE,
    VALUE_PROBLEM,
    column_type,
    finish,
    metadata_source,
    source_columns,
    typed,
)
from connector.diagnostics import Diagnostic, PipelineError
from connector.formats import json_arrow
from connector.formats import payload as formats
from connector.formats.payload import Decoded, PayloadFormat
from connector.runtime import data_sources

_BY_READER = "__value_by_reader"  # the reader decoded the row's value (DECODED_VALUE is not NULL)

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


# The source's column each metadata key reads; the optional ones (`settings.OPTIONAL_COLUMNS`) are built only for
# tables that read them (`_record_columns`).
_METADATA_COLUMNS = {
    "topic": "topic",
    "partition": "partition",
    "offset": "offset",
    "timestamp": "timestamp",
    "timestamp-type": "timestamp_type",
    "leader-epoch": "leader_epoch",
    "headers": "headers",
}
_KAFKA_METADATA: dict[str, Callable[[], Column]] = {
    **{key: functools.partial(F.col, column) for key, column in _METADATA_COLUMNS.items()},
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


def _or_decoded_by_reader(value: Decoded, fmt: PayloadFormat, by_reader: Column) -> Decoded:
    """`value` for the rows the Spark side decoded; the reader's fields, neither absent nor malformed, elsewhere."""
    fields = F.col(DECODED_VALUE)
    return replace(
        value,
        values={
            f.column: F.when(by_reader, fields.getField(f.name)).otherwise(value.values[f.column]) for f in fmt.fields
        },
        absent=~by_reader & value.absent,
        malformed=~by_reader & value.malformed,
        problem=F.when(~by_reader, value.problem),
    )


def client_options(table: Table) -> dict[str, str]:
    """The options the table's Kafka source (and its offset commits) run with: the table's, and for upsert-kafka
    its factory's fixed start at the earliest offset."""
    options = dict(table.options)
    if table.connector == "upsert-kafka":
        options["scan.startup.mode"] = str(registry.resolve(table).get(KafkaOptions.SCAN_STARTUP_MODE))
    return options


def read(spark: SparkSession, table: Table, malformed_rows: bool, end_of_input: bool) -> DataFrame:
    """A kafka or upsert-kafka table's rows from the `flink-kafka` source; with `end_of_input` a bounded scan ends
    with the end-of-input row (`OFFSET` = END_OF_INPUT_OFFSET, NULL columns). When the value format allows it,
    the source's readers decode the values' JSON themselves (`connector.formats.json_arrow`)."""
    data_sources.register(spark, KafkaSource)
    source_options = client_options(table)
    source_options[KafkaOptions.BOUNDED_END_WATERMARK.key] = str(end_of_input).lower()
    value_fmt = _require_value_format(table)
    reader_fields = value_fmt.codec.reader_fields(value_fmt)
    if reader_fields:
        source_options[VALUE_JSON_FIELDS] = json_arrow.fields_option(reader_fields)
    source_options[RECORD_COLUMNS] = ",".join(_record_columns(table, malformed_rows))
    source = spark.readStream.format(KafkaSource.name()).options(**source_options)
    # Creating the source starts a Python planning process and waits for it (about 0.9 s at a run's start), and
    # building the decoding's Columns is a few hundred calls into the JVM (about 1.6 s then): the one runs in a
    # thread while the other is built. Measured on 2 cores (bench/race_flink.py's pipeline, 100k records): the
    # query started 0.9 s sooner, the first output 0.1-0.3 s sooner (the start-up's other work takes both cores).
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="kafka-sql-source") as pool:
        loading = pool.submit(_load, spark, source)
        decoding = _Decoding.of(
            table, malformed_rows=malformed_rows, end_of_input=end_of_input, decoded_by_reader=bool(reader_fields)
        )
        raw = loading.result()
    return decoding.apply(raw)


def _load(spark: SparkSession, source: DataStreamReader) -> DataFrame:
    """`source.load()` in a thread of its own, with the JVM thread's active session set to `spark` (which Spark's
    configuration lookups read) as in the thread that made `source`."""
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    jvm.org.apache.spark.sql.SparkSession.setActiveSession(spark._jsparkSession)
    return source.load()


def _record_columns(table: Table, malformed_rows: bool) -> list[str]:
    """The source's optional columns `kafka_rows` reads for `table`: the key when a key format decodes it or
    malformed records are collected, and those its metadata columns read."""
    key_fmt = PayloadFormat.of(table, "key")
    needed = {"key"} if (key_fmt is not None and key_fmt.fields) or malformed_rows else set()
    for column in source_columns(table):
        if column.kind is ColumnKind.METADATA:
            read = _METADATA_COLUMNS.get(column.metadata_key or column.name)
            if read in OPTIONAL_COLUMNS:
                needed.add(read)
    return sorted(needed)


def kafka_rows(
    raw: DataFrame,
    table: Table,
    observation: str | Observation | None = None,
    malformed_rows: bool = False,
    end_of_input: bool = False,
    decoded_by_reader: bool = False,
) -> DataFrame:
    """Decode raw `flink-kafka` rows (key, value, topic, partition, offset, timestamp, ...) into the
    table's columns plus the hidden ones; `observation` overrides the malformed-records metric, which
    collects the skipped records too with `malformed_rows`; with `end_of_input` the end-of-input row is kept
    (NULL columns), neither a delete nor malformed. With `decoded_by_reader`, rows whose value the reader
    decoded (`DECODED_VALUE` not NULL) take their fields from it, and only the others are decoded here."""
    decoding = _Decoding.of(table, observation, malformed_rows, end_of_input, decoded_by_reader)
    return decoding.apply(raw)


@dataclass(frozen=True)
class _Decoding:
    """`kafka_rows`'s projections as Columns, built before the rows they apply to exist (`read` creates the
    source meanwhile): the columns added before the records are staged, the staging generator, the table's
    columns with the hidden ones, and the checks that fail the query on a malformed record."""

    table: Table
    observation: str | Observation | None
    prepared: list[Column]
    generated: Column
    selected: list[Column]
    checks: list[Column]

    @classmethod
    def of(
        cls,
        table: Table,
        observation: str | Observation | None = None,
        malformed_rows: bool = False,
        end_of_input: bool = False,
        decoded_by_reader: bool = False,
    ) -> _Decoding:
        upsert = table.connector == "upsert-kafka"
        value_fmt = _require_value_format(table)
        key_fmt = PayloadFormat.of(table, "key")
        if key_fmt is not None and not key_fmt.fields:
            key_fmt = None  # Flink: a key format without key fields reads nothing from the key

        def decode_record(record: Column) -> list[Decoded]:
            value = formats.decode(record, value_fmt, "__value")
            key = [formats.decode(F.col("key"), key_fmt, "__key")] if key_fmt is not None else []
            return [value, *key]

        prepared = value_fmt.codec.prepare(F.col("value"), value_fmt, "__value")
        if key_fmt is not None:
            prepared.update(key_fmt.codec.prepare(F.col("key"), key_fmt, "__key"))
        added = [column.alias(name) for name, column in prepared.items()]
        by_reader = F.col(_BY_READER) if decoded_by_reader else F.lit(False)
        payload = F.col("value")
        if decoded_by_reader:  # computed in Spark's generated code, before the generator that decodes the others
            added.append(F.col(DECODED_VALUE).isNotNull().alias(_BY_READER))
            payload = F.when(~by_reader, payload)
        # A value the reader decoded is not decoded again: the Spark side sees a NULL payload (one NULL record).
        records = formats.records(payload, value_fmt)
        generated, decoded = formats.stage(records, decode_record, by_reader if decoded_by_reader else None)
        value, key = decoded[0], (decoded[1] if key_fmt is not None else None)
        if decoded_by_reader:
            value = _or_decoded_by_reader(value, value_fmt, by_reader)

        marker = (F.col("offset") == END_OF_INPUT_OFFSET) if end_of_input else F.lit(False)
        tombstone = F.col("value").isNull() & ~marker if upsert else F.lit(False)
        # upsert-kafka: a tombstone deletes its key; a changelog format (debezium-json) says so in the record
        deleted = tombstone if value.deleted is None else tombstone | F.coalesce(value.deleted, F.lit(False))
        key_values = key.values if key is not None else {}
        selected: list[Column] = []
        for column in source_columns(table):
            if column.kind is ColumnKind.METADATA:
                metadata_key = column.metadata_key or column.name
                format_key = metadata_key.removeprefix("value.")  # the value format's own metadata
                if format_key != metadata_key and format_key in value.metadata:
                    source = value.metadata[format_key]
                else:
                    source = metadata_source(_KAFKA_METADATA, column, table)()
                selected.append(typed(source, column).alias(column.name))
            elif column.name in value.values:
                from_value = value.values[column.name]
                if column.name in key_values:  # 'value.fields-include' = 'ALL': the value wins, unless a tombstone
                    from_value = F.when(tombstone, key_values[column.name]).otherwise(from_value)
                selected.append(from_value.alias(column.name))
            elif column.name in key_values:
                selected.append(key_values[column.name].alias(column.name))
            else:
                selected.append(F.lit(None).cast(column_type(column)).alias(column.name))

        key_ok = ~key.absent & ~key.malformed if key is not None else F.lit(True)
        value_ok = tombstone | (~value.absent & ~value.malformed)
        malformed = ((key.malformed if key is not None else F.lit(False)) | (~tombstone & value.malformed)) & ~marker
        key_problem = F.when(~marker, key.problem) if key is not None else F.lit(None).cast(StringType())
        value_problem = F.when(~tombstone & ~marker, value.problem)
        hidden = [F.col("topic").alias(TOPIC), F.col("partition").alias(PARTITION), F.col("offset").alias(OFFSET)]
        if upsert or value.deleted is not None:
            hidden.append(deleted.alias(DELETED))
        if value.update_before is not None:
            hidden.append(value.update_before.alias(UPDATE_BEFORE))
        if value.update_after is not None:
            hidden.append(value.update_after.alias(UPDATE_AFTER))
        if malformed_rows:
            hidden += [F.col("key").alias(HIDDEN_RAW_KEY), F.col("value").alias(HIDDEN_RAW_VALUE)]
        selected += [
            *hidden,
            key_problem.alias(KEY_PROBLEM),
            value_problem.alias(VALUE_PROBLEM),
            malformed.alias(MALFORMED),
            ((key_ok & value_ok) | marker).alias(KEEP),
        ]
        origin = formats.kafka_origin(F.col(TOPIC), F.col(PARTITION), F.col(OFFSET))
        checks = [formats.failure(value_fmt, F.col(VALUE_PROBLEM), origin)]
        if key_fmt is not None:
            checks.insert(0, formats.failure(key_fmt, F.col(KEY_PROBLEM), origin))
        return cls(table, observation, added, generated, selected, checks)

    def apply(self, raw: DataFrame) -> DataFrame:
        """The table's rows from the `flink-kafka` rows `raw`."""
        frame = raw.select("*", *self.prepared) if self.prepared else raw
        frame = frame.select("*", F.inline(self.generated)).select(*self.selected)
        return finish(frame, self.table, self.checks, self.observation)
