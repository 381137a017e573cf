"""Writing a delta table: each micro-batch in one Delta commit, exactly once per checkpoint and batch id.

The driver collects the micro-batch as Arrow and commits it with delta-rs (`deltalake`), recording the batch in
the same commit as a Delta transaction id (`SetTransaction`: app id `kafka-sql-<query id of the checkpoint>`,
version = batch id, which is how Spark's own Delta sink is idempotent). A batch replayed after a crash finds its
version in the table and writes nothing; a new checkpoint is a new app id. Without a PRIMARY KEY the rows are
appended; with one they are merged (Delta MERGE on the key): the last row of a key in the batch wins, deletes of
the changelog delete their key. Files a crashed attempt left in the table directory are in no commit, so no
Delta reader sees them (`VACUUM` removes them). The table is created from the DDL on first start.

A micro-batch must fit in the driver's memory: bound a large backlog with the Kafka source's
'scan.max-records-per-batch' (without it, the first batch of a run reads the whole backlog).
"""

from __future__ import annotations

import functools
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.streaming import DataStreamWriter, StreamingQuery

from connector.catalog.model import Table
from connector.connectors import registry
from connector.connectors.arrow_batches import ArrowBatchWriter, CollectedBatch
from connector.connectors.delta.factory import DeltaOptions
from connector.connectors.writing import DELETED, BatchWriter, persisted_columns
from connector.diagnostics import Diagnostic, PipelineError
from connector.errors import KafkaSqlError


class DeltaSinkError(KafkaSqlError, RuntimeError):
    """delta-rs refused a micro-batch; the message names the table, its path and the reason."""


def start(
    frame: DataFrame, table: Table, writer: DataStreamWriter, output_mode: str, checkpoint: str
) -> StreamingQuery:
    return writer.foreachBatch(batch_writer(frame, table, output_mode, checkpoint)).start()


def batch_writer(frame: DataFrame, table: Table, output_mode: str, checkpoint: str) -> BatchWriter:
    target = DeltaTarget(table, frame, checkpoint)
    try:
        target.prepare()
    except DeltaSinkError as err:
        raise PipelineError([Diagnostic.at(table.option_position("table-path"), "delta", str(err))]) from None
    return ArrowBatchWriter(target.columns, checkpoint, functools.partial(publish, target))


class DeltaTarget:
    """The Delta table of a sink: its path, the Arrow schema of its declared columns, its key and partitions."""

    def __init__(self, table: Table, frame: DataFrame, checkpoint: str) -> None:
        self.table = table
        self.path = str(registry.resolve(table).get(DeltaOptions.TABLE_PATH))
        self.columns = [c.name for c in persisted_columns(table)]
        fields = frame.select(*self.columns).schema
        self.schema = to_arrow_schema(fields, timezone="UTC")
        self.key = list(table.primary_key)
        self.partitions = list(table.partitioned_by)
        self.checkpoint = checkpoint

    def prepare(self) -> None:
        """Create the table from the DDL, or check that the existing one has the declared columns and partitions."""
        from deltalake import DeltaTable
        from deltalake.exceptions import DeltaError

        try:
            if not DeltaTable.is_deltatable(self.path):
                DeltaTable.create(self.path, schema=self.schema, partition_by=self.partitions or None, mode="ignore")
                return
            existing = DeltaTable(self.path)
        except (DeltaError, OSError) as err:
            raise DeltaSinkError(f"Delta sink '{self.table.name}': cannot create or open {self.path}: {err}") from None
        names = [field.name for field in existing.schema().fields]
        if sorted(n.lower() for n in names) != sorted(c.lower() for c in self.columns):
            raise DeltaSinkError(
                f"Delta sink '{self.table.name}': the table at {self.path} has the columns {', '.join(names)}, "
                f"but the DDL declares {', '.join(self.columns)}."
            )
        partitioned = existing.metadata().partition_columns
        if [p.lower() for p in partitioned] != [p.lower() for p in self.partitions]:
            raise DeltaSinkError(
                f"Delta sink '{self.table.name}': the table at {self.path} is partitioned by "
                f"({', '.join(partitioned) or 'nothing'}), but the DDL says PARTITIONED BY "
                f"({', '.join(self.partitions) or 'nothing'})."
            )

    def fail(self, batch_id: int, err: Exception) -> DeltaSinkError:
        return DeltaSinkError(
            f"Delta sink '{self.table.name}': writing batch {batch_id} to {self.path} failed: "
            f"{type(err).__name__}: {err}"
        )


def publish(target: DeltaTarget, batch: CollectedBatch) -> None:
    """Commit `batch` to the table, unless the table's transaction id for the checkpoint is at or past it."""
    from deltalake import CommitProperties, DeltaTable, Transaction, write_deltalake

    app_id = f"kafka-sql-{batch.query}"
    try:
        table = DeltaTable(target.path)
        done = table.transaction_version(app_id)
        if done is not None and done >= batch.batch_id:
            return  # this batch was committed before a crash: nothing to do
        commit = CommitProperties(app_transactions=[Transaction(app_id, batch.batch_id)])
        if not target.key:
            write_deltalake(table, _values(target, batch.inserts()), mode="append", commit_properties=commit)
        else:
            _merge(target, table, batch, commit)
    except Exception as err:  # delta-rs raises DeltaError, CommitFailedError, OSError, arrow errors
        raise target.fail(batch.batch_id, err) from None


def _values(target: DeltaTarget, rows: pa.Table) -> pa.Table:
    return rows.select(target.columns).cast(target.schema)


def _merge(target: DeltaTarget, table: Any, batch: CollectedBatch, commit: Any) -> None:
    last = batch.last_per_key(target.key)
    source = _values(target, last)
    if batch.deletes:
        source = source.append_column(DELETED, last[DELETED].fill_null(False))
    predicate = " AND ".join(f"t.`{k}` = s.`{k}`" for k in target.key)
    values = {c: f"s.`{c}`" for c in target.columns}
    merge = table.merge(source, predicate, source_alias="s", target_alias="t", commit_properties=commit)
    if batch.deletes:
        merge = merge.when_matched_delete(predicate=f"s.`{DELETED}`")
        merge = merge.when_matched_update(updates=values, predicate=f"NOT s.`{DELETED}`")
        merge = merge.when_not_matched_insert(updates=values, predicate=f"NOT s.`{DELETED}`")
    else:
        merge = merge.when_matched_update(updates=values).when_not_matched_insert(updates=values)
    merge.execute()
