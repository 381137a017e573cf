"""Writing a kafka or upsert-kafka table: rows encoded by their formats, written per micro-batch by the
`flink-kafka-sink` writer's code (`connector.connectors.kafka.sink`)."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import numpy as np
import pyarrow as pa
from confluent_kafka import KafkaError, KafkaException, Producer
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.streaming import DataStreamWriter, StreamingQuery
from pyspark.sql.types import (
    BinaryType,
    DataType,
    MapType,
    StringType,
    TimestampType,
)

from connector.catalog.model import ColumnKind, Table
from connector.connectors.kafka.retries import Refusals, Refused
from connector.connectors.kafka.sink import (
    BATCH_ID_OPTION,
    QUERY_ID_OPTION,
    REQUEST_TIMEOUT_SECONDS,
    KafkaSinkError,
    SinkSettings,
    warn_failed_batch,
    write_batches,
)
from connector.connectors.writing import DELETED, BatchWriter, persisted_columns, reject_deletes
from connector.diagnostics import Diagnostic, PipelineError
from connector.formats import payload as formats
from connector.formats.payload import PayloadFormat

log = logging.getLogger(__name__)
_WRITTEN = pa.schema([("records", pa.int64())])

# ---------------------------------------------------------------------------------------------------------
# Kafka
# ---------------------------------------------------------------------------------------------------------


_KAFKA_METADATA_TYPES: dict[str, DataType] = {
    "topic": StringType(),
    "headers": MapType(StringType(), BinaryType()),
    "timestamp": TimestampType(),
}


def start(
    frame: DataFrame, table: Table, writer: DataStreamWriter, output_mode: str, checkpoint: str
) -> StreamingQuery:
    return writer.foreachBatch(_checked_writer(frame, table)).start()


def batch_writer(frame: DataFrame, table: Table, output_mode: str, checkpoint: str) -> BatchWriter:
    return _checked_writer(frame, table)


def _checked_writer(frame: DataFrame, table: Table) -> KafkaBatch:
    writer = KafkaBatch(table)
    writer.records(frame)  # the table's formats and metadata fail here, before the query starts
    return writer


def _record_columns(frame: DataFrame, table: Table) -> list[Column]:
    """The columns of a kafka / upsert-kafka table's rows as `flink-kafka-sink` input: key, value, topic, headers,
    timestamp (the metadata columns only when the table declares them)."""
    row = {c.name: F.col(c.name) for c in persisted_columns(table)}
    value_fmt = PayloadFormat.of(table, "value")
    if value_fmt is None:
        raise PipelineError(
            [Diagnostic.at(table.position, "missing-option", f"Table '{table.name}' needs a 'value.format'.")]
        )
    key_fmt = PayloadFormat.of(table, "key")
    retracts = F.coalesce(F.col(DELETED), F.lit(False)) if DELETED in frame.columns else F.lit(False)
    if value_fmt.codec.writes_changes:  # a changelog format (debezium-json) writes retractions as its messages
        value = value_fmt.codec.encode_change(value_fmt, row, retracts)
    else:
        value = formats.encode(value_fmt, row)
        if DELETED in frame.columns:
            if table.connector != "upsert-kafka":
                reject_deletes(frame, table)
            value = F.when(~retracts, value)
    columns: list[Column] = [value.alias("value")]
    if key_fmt is not None and key_fmt.fields:
        columns.append(formats.encode(key_fmt, row).alias("key"))
    for column in persisted_columns(table):
        if column.kind is ColumnKind.METADATA:
            key = column.metadata_key or column.name
            if key not in _KAFKA_METADATA_TYPES:
                message = (
                    f"Metadata column '{column.name}' (key '{key}') cannot be written to table '{table.name}'; "
                    f"declare it VIRTUAL. Writable metadata keys: {', '.join(_KAFKA_METADATA_TYPES)}."
                )
                raise PipelineError([Diagnostic.at(column.position, "metadata", message)])
            columns.append(F.col(column.name).cast(_KAFKA_METADATA_TYPES[key]).alias(key))
    return columns


class KafkaBatch:
    """foreachBatch function of a Kafka sink: encode, then write with the batch id (exactly-once needs it).

    Each write task runs the `flink-kafka-sink` writer's code (`write_batches`) in `mapInArrow`, and the driver
    adds up what they wrote. Through Spark's data source write path instead, every micro-batch started two more
    Python processes on the driver, one to create the writer and one for its (empty) commit: about 1 s of each
    batch, measured on 2 cores.
    """

    def __init__(self, table: Table) -> None:
        self.table = table
        self.options = dict(table.options)
        self.checked = False
        self._columns: dict[tuple[str, ...], list[Column]] = {}

    def records(self, frame: DataFrame) -> DataFrame:
        """`frame`'s rows as `flink-kafka-sink` input. The encoding's Columns are built once per set of input
        columns: every Column built in Python is a call into the JVM (0.75 s for a 4-column JSON row at a query's
        start, py-spy on a busy machine), and a query's streaming rows and its micro-batches have the same columns.
        Names are key enough: every frame a sink gets was cast to its table's column types (`engine._align`)."""
        shape = tuple(frame.columns)
        if shape not in self._columns:
            self._columns[shape] = _record_columns(frame, self.table)
        return frame.select(*self._columns[shape])

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        spark = batch.sparkSession
        if not self.checked:
            self._require_topics()
            self.checked = True
        query_id = spark.sparkContext.getLocalProperty("sql.streaming.queryId") or ""
        records = self.records(batch)
        options = {**self.options, BATCH_ID_OPTION: str(batch_id), QUERY_ID_OPTION: query_id}
        settings = SinkSettings.from_options(options)
        completed = spark.sparkContext.accumulator(0)

        def write(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            written = write_batches(settings, batches)
            completed.add(written.records)
            yield _written(written.records)

        try:
            written = sum(row.records for row in records.mapInArrow(write, "records long").collect())
        except Exception:
            warn_failed_batch(settings, completed.value)
            raise
        log.debug("%s records written", written)

    def _require_topics(self) -> None:
        """Fail the first batch at once, naming the topic, when a 'topic' does not exist and the broker does not
        create it (the producer would only give up after 'topic.metadata.propagation.max.ms')."""
        settings = SinkSettings.from_options(self.options)
        bootstrap = str(settings.producer_config.get("bootstrap.servers"))
        refusals = Refusals({k: str(v) for k, v in settings.producer_config.items()}, bootstrap)
        producer = Producer(refusals.client_config(settings.producer_config))
        for topic in settings.topics:
            try:
                found = refusals.list_topics(producer, REQUEST_TIMEOUT_SECONDS, topic).topics.get(topic)
            except Refused as refused:
                raise KafkaSinkError(f"{refused} (writing topic '{topic}')") from None
            except KafkaException as error:
                raise KafkaSinkError(f"Cannot reach Kafka at {bootstrap} to write topic '{topic}': {error}") from None
            if found is None or (found.error is not None and found.error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART):
                raise KafkaSinkError(
                    f"Topic '{topic}' of sink table '{self.table.name}' does not exist on Kafka at {bootstrap}, "
                    "and the broker does not create topics automatically. Create it, then run the pipeline again."
                )


def _written(records: int) -> pa.RecordBatch:
    """A write task's answer, built from a buffer: `pa.array` and `from_pydict` import pandas, which took each write
    task's Python worker about 0.5-0.7 s at the end of its first task (measured with py-spy)."""
    count = pa.Array.from_buffers(pa.int64(), 1, [None, pa.py_buffer(np.array([records], np.int64))])
    return pa.RecordBatch.from_arrays([count], schema=_WRITTEN)
