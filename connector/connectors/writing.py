"""Writing a query's rows to a sink table, per connector.

    query = writing.start(frame, table, frame.writeStream.queryName(...).outputMode(...)
                        .option("checkpointLocation", ...).trigger(...))

`frame` holds the table's persisted columns (physical and non-VIRTUAL metadata) by name, cast to their
types; a boolean `__deleted` column, when present, marks rows that are deletes of their PRIMARY KEY
(upsert-kafka writes them as tombstones, print as `-D`; other sinks reject them). The engine owns the
writer's query name, output mode, trigger and checkpoint; `start` adds what the connector needs. What a
sink buffers is flushed before its micro-batch commits (checkpoint, then commit: seed 003).

* kafka / upsert-kafka: each micro-batch (`foreachBatch`, any output mode) is encoded by
  their formats' codecs (key and value formats, `key.fields`, `value.fields-include`), with the writable
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

import importlib
from collections.abc import Callable
from typing import Protocol, runtime_checkable

from pyspark.sql import DataFrame
from pyspark.sql.streaming import DataStreamWriter, StreamingQuery

from connector.catalog.model import Column as TableColumn
from connector.catalog.model import Table
from connector.connectors import registry
from connector.diagnostics import Diagnostic, PipelineError

DELETED = "__deleted"


BatchWriter = Callable[[DataFrame, int], None]  # writes one micro-batch, idempotently per batch id
BatchGate = Callable[[DataFrame, int, BatchWriter], None]  # checks a micro-batch, then writes what passes


def start(
    frame: DataFrame,
    table: Table,
    writer: DataStreamWriter,
    output_mode: str = "append",
    gate: BatchGate | None = None,
    *,
    checkpoint: str,
) -> StreamingQuery:
    """Start writing `frame` (the rows of `table`) with `writer`, which was created from `frame` and has the
    output mode `output_mode` (print shows it as the change kind) and the checkpoint location `checkpoint`.
    With a `gate` (`connector.quality.gate`), every micro-batch goes through it, and it calls the table's
    `batch_writer` with what may be written."""
    if gate is not None:
        write = batch_writer(frame, table, output_mode, checkpoint=checkpoint)
        return writer.foreachBatch(lambda batch, batch_id: gate(batch, batch_id, write)).start()
    return _sink_writer(table).start(frame, table, writer, output_mode, checkpoint)


def batch_writer(frame: DataFrame, table: Table, output_mode: str = "append", *, checkpoint: str) -> BatchWriter:
    """A foreachBatch function writing micro-batches of `frame`'s shape to `table`, exactly-once per batch id
    where the sink can be (gated queries and quarantine tables write through it), for the query of
    `checkpoint` (its batch ids are that checkpoint's)."""
    return _sink_writer(table).batch_writer(frame, table, output_mode, checkpoint)


class SinkWriter(Protocol):
    """What a connector's writing module (its factory's `writer`) provides."""

    def start(
        self, frame: DataFrame, table: Table, writer: DataStreamWriter, output_mode: str, checkpoint: str
    ) -> StreamingQuery:
        """Start `writer` (created from `frame`, with its output mode, trigger and checkpoint location
        `checkpoint`) writing `table`."""
        ...

    def batch_writer(self, frame: DataFrame, table: Table, output_mode: str, checkpoint: str) -> BatchWriter:
        """A foreachBatch function writing micro-batches of `frame`'s shape to `table` for the query of
        `checkpoint`."""
        ...


def _sink_writer(table: Table) -> SinkWriter:
    factory = registry.connector_factory(table)
    if factory is None or factory.writer is None:
        raise PipelineError(
            [
                Diagnostic.at(
                    table.option_position("connector"),
                    "connector-usage",
                    f"Table '{table.name}' cannot be written: connector '{table.connector}' is not a sink.",
                )
            ]
        )
    module: SinkWriter = importlib.import_module(factory.writer)
    return module


def persisted_columns(table: Table) -> list[TableColumn]:
    return [c for c in table.columns if c.persisted]


def reject_deletes(frame: DataFrame, table: Table) -> None:
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


class _Nothing:
    """What a writer that keeps nothing, or shows a batch at once, has staged."""

    def publish(self) -> None:
        pass

    def discard(self) -> None:
        pass


NOTHING_STAGED: Staged = _Nothing()
