"""Writing a query's rows to a sink table, per connector.

    query = sinks.start(frame, table, frame.writeStream.queryName(...).outputMode(...)
                        .option("checkpointLocation", ...).trigger(...))

`frame` holds the table's persisted columns (physical and non-VIRTUAL metadata) by name, cast to their
types; a boolean `__deleted` column, when present, marks rows that are deletes of their PRIMARY KEY
(upsert-kafka writes them as tombstones, print as `-D`; other sinks reject them). The engine owns the
writer's query name, output mode, trigger and checkpoint; `start` adds what the connector needs. What a
sink buffers is flushed before its micro-batch commits (checkpoint, then commit: seed 003).

* kafka / upsert-kafka: each micro-batch (`foreachBatch`, any output mode) is encoded by
  `connector.formats.codecs` (key and value formats, `key.fields`, `value.fields-include`), with the writable
  metadata `topic`, `headers` and `timestamp`, and written by the `flink-kafka-sink` data source
  (`connector.connectors.kafka.sink`) with the batch id, which gives 'sink.delivery-guarantee' its meaning. upsert-kafka
  keys are the PRIMARY KEY columns (key format), deletes are tombstones (NULL value), records are
  partitioned by key. A 'topic' that does not exist, on a broker that does not create topics, fails the
  first micro-batch at once with a message naming it.
* print: Flink's PrintSink format on standard output (or error with 'standard-error'): `+I[1, foo]`
  (append) or `+U[...]` (update mode, which carries no before-image, so a key's first row is `+U` too),
  `-D[...]` for deletes, prefixed `<print-identifier>> `.
* blackhole: Spark's `noop` sink.
* filesystem: Spark's file sink under 'path' (`PARTITIONED BY` as `col=value` directories): exactly-once,
  because the sink logs each committed batch in `_spark_metadata` and skips a batch it already has; Spark
  readers of the directory see committed files only. json and csv files use Flink's options (delimiter,
  quote, null literal, timestamp format); the rolling policy and partition commit options do not apply,
  as Spark writes one file per partition and micro-batch.

A table with data-quality expectations is written through its `batch_writer` from foreachBatch, after the
gate (`connector.quality.gate`) passed the batch: kafka and print as above; blackhole runs the batch into
`noop`; filesystem stages each batch, then publishes its files as `batch-<id>-*` (`FileBatch`), replacing
what an earlier attempt of the same batch published, so a replayed batch is not duplicated.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timezone
from decimal import Decimal
from typing import Any, Protocol, runtime_checkable
from urllib.parse import unquote, urlparse

import numpy as np
from confluent_kafka import KafkaError, KafkaException, Producer
from pyspark.sql import Column, DataFrame, Row, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import DataStreamWriter, StreamingQuery
from pyspark.sql.types import (
    BinaryType,
    DataType,
    FloatType,
    MapType,
    StringType,
    StructType,
    TimestampType,
)

from connector.connectors.declarations import FilesystemOptions, PrintOptions
from connector.connectors.kafka.sink import (
    BATCH_ID_OPTION,
    QUERY_ID_OPTION,
    REQUEST_TIMEOUT_SECONDS,
    KafkaSink,
    KafkaSinkError,
    SinkSettings,
)
from connector.diagnostics import Diagnostic, PipelineError
from connector.formats import codecs as formats
from connector.formats.codecs import PayloadFormat
from connector.options import framework as options
from connector.runtime import data_sources
from connector.sql.catalog import Column as TableColumn
from connector.sql.catalog import ColumnKind, Table

DELETED = "__deleted"
_KAFKA_METADATA_TYPES: dict[str, DataType] = {
    "topic": StringType(),
    "headers": MapType(StringType(), BinaryType()),
    "timestamp": TimestampType(),
}


BatchWriter = Callable[[DataFrame, int], None]  # writes one micro-batch, idempotently per batch id
BatchGate = Callable[[DataFrame, int, BatchWriter], None]  # checks a micro-batch, then writes what passes


def start(
    frame: DataFrame,
    table: Table,
    writer: DataStreamWriter,
    output_mode: str = "append",
    gate: BatchGate | None = None,
) -> StreamingQuery:
    """Start writing `frame` (the rows of `table`) with `writer`, which was created from `frame` and has the
    output mode `output_mode` (print shows it as the change kind). With a `gate` (`connector.quality.gate`),
    every micro-batch goes through it, and it calls the table's `batch_writer` with what may be written."""
    if gate is not None:
        write = batch_writer(frame, table, output_mode)
        return writer.foreachBatch(lambda batch, batch_id: gate(batch, batch_id, write)).start()
    connector = table.connector
    if connector in ("kafka", "upsert-kafka"):
        kafka_records(frame, table)  # the table's formats and metadata fail here, before the query starts
        return writer.foreachBatch(KafkaBatch(table)).start()
    if connector == "print":
        kind = "+U" if output_mode == "update" else "+I"
        return writer.foreachBatch(PrintBatch(table, frame.columns, kind)).start()
    _reject_deletes(frame, table)
    if connector == "blackhole":
        return writer.format("noop").start()
    if connector == "filesystem":
        return _filesystem(frame, table, writer).start()
    raise PipelineError(
        [
            Diagnostic.at(
                table.option_position("connector"),
                "connector-usage",
                f"Table '{table.name}' cannot be written: connector '{connector}' is not a sink.",
            )
        ]
    )


def batch_writer(frame: DataFrame, table: Table, output_mode: str = "append") -> BatchWriter:
    """A foreachBatch function writing micro-batches of `frame`'s shape to `table`, exactly-once per batch id
    where the sink can be (gated queries and quarantine tables write through it)."""
    connector = table.connector
    if connector in ("kafka", "upsert-kafka"):
        kafka_records(frame, table)  # the table's formats and metadata fail here, before the query starts
        return KafkaBatch(table)
    if connector == "print":
        return PrintBatch(table, frame.columns, "+U" if output_mode == "update" else "+I")
    _reject_deletes(frame, table)
    if connector == "blackhole":
        return NoopBatch()
    if connector == "filesystem":
        return FileBatch(table)
    raise PipelineError(
        [
            Diagnostic.at(
                table.option_position("connector"),
                "connector-usage",
                f"Table '{table.name}' cannot be written: connector '{connector}' is not a sink.",
            )
        ]
    )


def _persisted(table: Table) -> list[TableColumn]:
    return [c for c in table.columns if c.persisted]


def _reject_deletes(frame: DataFrame, table: Table) -> None:
    if DELETED in frame.columns:
        raise PipelineError(
            [
                Diagnostic.at(
                    table.position,
                    "changelog",
                    f"Table '{table.name}' (connector '{table.connector}') doesn't support consuming update and "
                    "delete changes; write them to an 'upsert-kafka' table.",
                )
            ]
        )


# ---------------------------------------------------------------------------------------------------------
# Kafka
# ---------------------------------------------------------------------------------------------------------


def kafka_records(frame: DataFrame, table: Table) -> DataFrame:
    """The rows of a kafka / upsert-kafka table as `flink-kafka-sink` input: key, value, topic, headers,
    timestamp (the metadata columns only when the table declares them)."""
    row = {c.name: F.col(c.name) for c in _persisted(table)}
    value_fmt = PayloadFormat.of(table, "value")
    if value_fmt is None:
        raise PipelineError(
            [Diagnostic.at(table.position, "missing-option", f"Table '{table.name}' needs a 'value.format'.")]
        )
    key_fmt = PayloadFormat.of(table, "key")
    value = formats.encode(value_fmt, row)
    if DELETED in frame.columns:
        if table.connector != "upsert-kafka":
            _reject_deletes(frame, table)
        value = F.when(~F.coalesce(F.col(DELETED), F.lit(False)), value)
    columns: list[Column] = [value.alias("value")]
    if key_fmt is not None and key_fmt.fields:
        columns.append(formats.encode(key_fmt, row).alias("key"))
    for column in _persisted(table):
        if column.kind is ColumnKind.METADATA:
            key = column.metadata_key or column.name
            if key not in _KAFKA_METADATA_TYPES:
                message = (
                    f"Metadata column '{column.name}' (key '{key}') cannot be written to table '{table.name}'; "
                    f"declare it VIRTUAL. Writable metadata keys: {', '.join(_KAFKA_METADATA_TYPES)}."
                )
                raise PipelineError([Diagnostic.at(column.position, "metadata", message)])
            columns.append(F.col(column.name).cast(_KAFKA_METADATA_TYPES[key]).alias(key))
    return frame.select(*columns)


class KafkaBatch:
    """foreachBatch function of a Kafka sink: encode, then write with the batch id (exactly-once needs it)."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.options = dict(table.options)
        self.registered = False

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        spark = batch.sparkSession
        if not self.registered:
            self._require_topics()
            data_sources.register(spark, KafkaSink)
            self.registered = True
        query_id = spark.sparkContext.getLocalProperty("sql.streaming.queryId") or ""
        records = kafka_records(batch, self.table)
        write_options = {**self.options, BATCH_ID_OPTION: str(batch_id), QUERY_ID_OPTION: query_id}
        records.write.format(KafkaSink.name()).options(**write_options).mode("append").save()

    def _require_topics(self) -> None:
        """Fail the first batch at once, naming the topic, when a 'topic' does not exist and the broker does not
        create it (the producer would only give up after 'topic.metadata.propagation.max.ms')."""
        settings = SinkSettings.from_options(self.options)
        producer = Producer(settings.producer_config)
        bootstrap = settings.producer_config.get("bootstrap.servers")
        for topic in settings.topics:
            try:
                found = producer.list_topics(topic, timeout=REQUEST_TIMEOUT_SECONDS).topics.get(topic)
            except KafkaException as error:
                raise KafkaSinkError(f"Cannot reach Kafka at {bootstrap} to write topic '{topic}': {error}") from None
            if found is None or (found.error is not None and found.error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART):
                raise KafkaSinkError(
                    f"Topic '{topic}' of sink table '{self.table.name}' does not exist on Kafka at {bootstrap}, "
                    "and the broker does not create topics automatically. Create it, then run the pipeline again."
                )


# ---------------------------------------------------------------------------------------------------------
# print
# ---------------------------------------------------------------------------------------------------------


def _java_float(value: float, single: bool) -> str:
    """Java's Float/Double.toString: shortest digits, scientific notation outside [1e-3, 1e7)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    number = np.float32(value) if single else np.float64(value)
    if value == 0 or 1e-3 <= abs(value) < 1e7:
        return np.format_float_positional(number, unique=True, trim="0")
    mantissa, exponent = np.format_float_scientific(number, unique=True, trim="0").split("e")
    return f"{mantissa}E{int(exponent)}"


def _java_time(value: datetime) -> str:
    """LocalDateTime.toString: seconds and fraction only when not zero, the fraction in groups of 3."""
    text = value.strftime("%Y-%m-%dT%H:%M")
    if value.second or value.microsecond:
        text += f":{value.second:02d}"
    if value.microsecond:
        text += f".{value.microsecond // 1000:03d}" if value.microsecond % 1000 == 0 else f".{value.microsecond:06d}"
    return text


def _java_instant(value: datetime) -> str:
    """Instant.toString: always seconds, the fraction in groups of 3, 'Z'."""
    utc = value.astimezone(timezone.utc)
    text = utc.strftime("%Y-%m-%dT%H:%M:%S")
    if utc.microsecond:
        text += f".{utc.microsecond // 1000:03d}" if utc.microsecond % 1000 == 0 else f".{utc.microsecond:06d}"
    return text + "Z"


def flink_text(value: Any, data_type: DataType) -> str:
    """A value as Flink's Row.toString prints it (print connector)."""
    if value is None:
        return "null"
    if isinstance(data_type, StructType):
        fields = [flink_text(value[f.name], f.dataType) for f in data_type.fields]
        return f"+I[{', '.join(fields)}]"
    if isinstance(value, list):
        element = getattr(data_type, "elementType", StringType())
        return "[" + ", ".join(flink_text(v, element) for v in value) + "]"
    if isinstance(value, dict):
        assert isinstance(data_type, MapType)
        entries = (f"{flink_text(k, data_type.keyType)}={flink_text(v, data_type.valueType)}" for k, v in value.items())
        return "{" + ", ".join(entries) + "}"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, bytes | bytearray):
        return "[" + ", ".join(str(b - 256 if b > 127 else b) for b in value) + "]"
    if isinstance(value, float):
        return _java_float(value, isinstance(data_type, FloatType))
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, datetime):
        return _java_instant(value) if isinstance(data_type, TimestampType) else _java_time(value)
    if isinstance(value, date):
        return value.isoformat()
    return str(value)


class PrintBatch:
    """foreachBatch function of a print sink: one line per row, on the driver, in Flink's format."""

    def __init__(self, table: Table, columns: list[str], kind: str) -> None:
        resolved = options.resolve(table)
        self.kind = kind
        identifier = resolved.get(PrintOptions.PRINT_IDENTIFIER) or ""
        self.prefix = f"{identifier}> " if identifier else ""
        standard_error = resolved.get(PrintOptions.STANDARD_ERROR)
        self.stderr = standard_error is True
        self.columns = [c.name for c in _persisted(table)]
        self.deletes = DELETED in columns

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        selected = batch.select(*self.columns, *([DELETED] if self.deletes else []))
        types = {f.name: f.dataType for f in selected.schema.fields}
        out = sys.stderr if self.stderr else sys.stdout
        for row in selected.toLocalIterator():
            print(self.line(row, types), file=out)
        out.flush()

    def line(self, row: Row, types: dict[str, DataType]) -> str:
        kind = "-D" if self.deletes and row[DELETED] else self.kind
        fields = ", ".join(flink_text(row[name], types[name]) for name in self.columns)
        return f"{self.prefix}{kind}[{fields}]"


# ---------------------------------------------------------------------------------------------------------
# filesystem
# ---------------------------------------------------------------------------------------------------------


def _filesystem(frame: DataFrame, table: Table, writer: DataStreamWriter) -> DataStreamWriter:
    path, identifier, file_options = _file_format(table)
    writer = writer.option("path", path)
    if table.partitioned_by:
        writer = writer.partitionBy(*table.partitioned_by)
    return writer.format(identifier).options(**file_options)


def _file_format(table: Table) -> tuple[str, str, dict[str, str]]:
    """(path, Spark format, Spark writer options) of a filesystem table, from Flink's format options."""
    resolved = options.resolve(table)
    path = str(resolved.require(FilesystemOptions.PATH))
    found = options.format_options(table, "value")
    if found is None:
        raise PipelineError(
            [Diagnostic.at(table.position, "missing-option", f"Table '{table.name}' needs a 'format'.")]
        )
    identifier, values = found
    if identifier == "parquet":
        return path, "parquet", {k: str(v) for k, v in values.items() if k != "utc-timezone"}
    if identifier == "json":
        separator = "'T'" if values.get("timestamp-format.standard") == "ISO-8601" else " "
        return path, "json", {
            "ignoreNullFields": "true" if values.get("encode.ignore-null-fields") else "false",
            "timestampNTZFormat": f"yyyy-MM-dd{separator}HH:mm:ss.SSS",
            "timestampFormat": f"yyyy-MM-dd{separator}HH:mm:ss.SSS'Z'",
            "timeZone": "UTC",
            "dateFormat": "yyyy-MM-dd",
        }
    if identifier == "csv":
        quote = "\u0000" if values.get("disable-quote-character") else str(values.get("quote-character", '"'))
        return path, "csv", {
            "sep": str(values.get("field-delimiter", ",")),
            "quote": quote,
            "escape": str(values.get("escape-character") or quote),
            "nullValue": str(values.get("null-literal") or ""),
            "emptyValue": "",
            "timestampNTZFormat": "yyyy-MM-dd HH:mm:ss.SSS",
            "timestampFormat": "yyyy-MM-dd HH:mm:ss.SSS'Z'",
            "timeZone": "UTC",
            "header": "false",
        }
    raise PipelineError(
        [
            Diagnostic.at(
                table.option_position("format"),
                "unsupported-format",
                f"Format '{identifier}' cannot be written to files; use json, csv or parquet.",
            )
        ]
    )


class Staged(Protocol):
    """A micro-batch written where readers do not see it yet."""

    def publish(self) -> None: ...

    def discard(self) -> None: ...


@runtime_checkable
class StagingWriter(Protocol):
    """A batch writer that can write first and decide later whether readers see the batch (the quality gate
    then checks and writes a batch in one pass)."""

    def __call__(self, batch: DataFrame, batch_id: int) -> None: ...

    def stage(self, batch: DataFrame, batch_id: int) -> Staged: ...


@dataclass
class _StagedFiles:
    fs: HadoopFs
    path: str
    staging: str
    prefix: str
    depth: int

    def publish(self) -> None:
        for published in self.fs.glob(self.path + "/*" * self.depth + f"/{self.prefix}*"):
            self.fs.delete(published)
        root = self.fs.qualified(self.staging)
        for file in self.fs.data_files(self.staging):
            directory, _, name = file[len(root) + 1 :].rpartition("/")
            self.fs.move(file, f"{self.path}/{directory + '/' if directory else ''}{self.prefix}{name}")
        self.fs.delete(self.staging)

    def discard(self) -> None:
        self.fs.delete(self.staging)


class FileBatch:
    """foreachBatch function of a gated filesystem sink, exactly-once by batch id: the batch is written under
    `<path>/_kafka_sql_staging/<id>` (readers skip `_` directories), then its files move into the table
    directory (partition directories kept) named `batch-<id>-...`, after the files an earlier attempt of the
    same batch published are removed."""

    STAGING = "_kafka_sql_staging"

    def __init__(self, table: Table) -> None:
        self.table = table
        self.path, self.format, self.options = _file_format(table)
        self.checked = False

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        self.stage(batch, batch_id).publish()

    def stage(self, batch: DataFrame, batch_id: int) -> Staged:
        fs = HadoopFs(batch.sparkSession, self.path)
        if not self.checked:
            if fs.exists(f"{self.path}/_spark_metadata"):
                raise PipelineError(
                    [
                        Diagnostic.at(
                            self.table.option_position("path"),
                            "quality",
                            f"'{self.path}' holds a Spark file sink log (_spark_metadata) from a run without "
                            f"expectations; Spark readers would not see the gated batches of '{self.table.name}'. "
                            "Write to a new directory, or delete _spark_metadata.",
                        )
                    ]
                )
            self.checked = True
        staging = f"{self.path}/{self.STAGING}/{batch_id}"
        writer = batch.write.mode("overwrite").format(self.format).options(**self.options)
        if self.table.partitioned_by:
            writer = writer.partitionBy(*self.table.partitioned_by)
        writer.save(staging)
        return _StagedFiles(fs, self.path, staging, f"batch-{batch_id:012d}-", len(self.table.partitioned_by))


class _Nothing:
    """What a writer that keeps nothing, or shows a batch at once, has staged."""

    def publish(self) -> None:
        pass

    def discard(self) -> None:
        pass


NOTHING_STAGED: Staged = _Nothing()


class NoopBatch:
    """foreachBatch function of a gated blackhole sink: runs the batch, keeps nothing."""

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        self.stage(batch, batch_id)

    def stage(self, batch: DataFrame, batch_id: int) -> Staged:
        batch.write.format("noop").mode("overwrite").save()
        return NOTHING_STAGED


class HadoopFs:
    """The few file operations gated sinks and the quality gate need, on any Hadoop file system (local, HDFS,
    S3, ...), through the session's Hadoop configuration."""

    def __init__(self, spark: SparkSession, path: str) -> None:
        context = spark.sparkContext
        jvm = context._jvm
        assert jvm is not None, "a classic SparkSession is needed"
        self._hadoop = jvm.org.apache.hadoop.fs
        self._io = jvm.org.apache.commons.io.IOUtils
        self._fs = self._hadoop.Path(path).getFileSystem(context._jsc.hadoopConfiguration())
        self._local = str(self._fs.getUri().getScheme()) == "file"

    def _path(self, text: str) -> Any:
        return self._hadoop.Path(text)

    def qualified(self, text: str) -> str:
        return str(self._fs.makeQualified(self._path(text)).toString())

    def exists(self, text: str) -> bool:
        return bool(self._fs.exists(self._path(text)))

    def glob(self, pattern: str) -> list[str]:
        found = self._fs.globStatus(self._path(pattern))
        return [str(status.getPath().toString()) for status in found or []]

    def data_files(self, root: str) -> list[str]:
        """Files under `root`, recursively, without Spark's markers and checksums (names starting `_` / `.`)."""
        files = []
        listing = self._fs.listFiles(self._path(root), True)
        while listing.hasNext():
            path = listing.next().getPath()
            if not str(path.getName()).startswith(("_", ".")):
                files.append(str(path.toString()))
        return files

    def move(self, source: str, target: str) -> None:
        destination = self._path(target)
        self._fs.mkdirs(destination.getParent())
        if not self._fs.rename(self._path(source), destination):
            raise OSError(f"cannot move {source} to {target}")

    def delete(self, text: str) -> None:
        self._fs.delete(self._path(text), True)

    def read_text(self, text: str) -> str | None:
        """The file's content, or None when it does not exist."""
        path = self._path(text)
        if not self._fs.exists(path):
            return None
        stream = self._fs.open(path)
        try:
            return bytes(self._io.toByteArray(stream)).decode()
        finally:
            stream.close()

    def write_text(self, text: str, content: str) -> None:
        """Replace the file atomically where the file system renames atomically (write aside, then rename).
        On the local file system Python writes it: about ten calls into the JVM fewer, 10-20 ms a file
        while a micro-batch keeps the JVM busy (measured)."""
        if self._local:
            local = unquote(urlparse(self.qualified(text)).path)
            os.makedirs(os.path.dirname(local), exist_ok=True)
            with open(f"{local}.tmp", "w", encoding="utf-8") as out:
                out.write(content)
            os.replace(f"{local}.tmp", local)
            folder, name = os.path.split(local)
            stale = os.path.join(folder, f".{name}.crc")  # Hadoop's checksum of an earlier version
            if os.path.exists(stale):
                os.remove(stale)
            return
        target = self._path(text)
        aside = self._path(f"{text}.tmp")
        stream = self._fs.create(aside, True)
        try:
            stream.write(bytearray(content.encode()))
        finally:
            stream.close()
        self._fs.delete(target, False)
        if not self._fs.rename(aside, target):
            raise OSError(f"cannot write {text}")
