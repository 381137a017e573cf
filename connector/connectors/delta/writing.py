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

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.streaming import DataStreamWriter, StreamingQuery

from connector.connectors import registry
from connector.connectors.delta.factory import DeltaOptions
from connector.connectors.filesystem.sink_log import query_id
from connector.connectors.writing import DELETED, BatchWriter, Staged, persisted_columns
from connector.diagnostics import Diagnostic, PipelineError
from connector.runtime.hadoop_fs import HadoopFs
from connector.sql.catalog import Table

_SEQUENCE = "__kafka_sql_seq"


class DeltaSinkError(RuntimeError):
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
    return DeltaBatch(target)


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


class DeltaBatch:
    """foreachBatch function of a delta sink (also the quality gate's `StagingWriter`)."""

    def __init__(self, target: DeltaTarget) -> None:
        self.target = target
        self._app_id: str | None = None

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        self.stage(batch, batch_id).publish()

    def stage(self, batch: DataFrame, batch_id: int) -> Staged:
        target = self.target
        if self._app_id is None:  # the checkpoint's query id never changes: read once
            found = query_id(HadoopFs(batch.sparkSession, target.checkpoint), target.checkpoint)
            if found is None:
                raise DeltaSinkError(f"checkpoint '{target.checkpoint}' has no query id (its 'metadata' file)")
            self._app_id = f"kafka-sql-{found}"
        deletes = DELETED in batch.columns
        rows = batch.select(*target.columns, *([DELETED] if deletes else [])).toArrow()
        return _Commit(target, self._app_id, batch_id, rows, deletes)


class _Commit:
    """A collected micro-batch, committed to the table by `publish` (once per app id and batch id)."""

    def __init__(self, target: DeltaTarget, app_id: str, batch_id: int, rows: pa.Table, deletes: bool) -> None:
        self.target, self.app_id, self.batch_id, self.rows, self.deletes = target, app_id, batch_id, rows, deletes

    def discard(self) -> None:
        """Nothing to undo: the rows were only collected."""

    def publish(self) -> None:
        from deltalake import CommitProperties, DeltaTable, Transaction, write_deltalake

        target = self.target
        if self.rows.num_rows == 0:
            return
        try:
            table = DeltaTable(target.path)
            done = table.transaction_version(self.app_id)
            if done is not None and done >= self.batch_id:
                return  # this batch was committed before a crash: nothing to do
            commit = CommitProperties(app_transactions=[Transaction(self.app_id, self.batch_id)])
            if not target.key:
                write_deltalake(table, self._values(self.rows), mode="append", commit_properties=commit)
            else:
                self._merge(table, commit)
        except DeltaSinkError:
            raise
        except Exception as err:  # delta-rs raises DeltaError, CommitFailedError, OSError, arrow errors
            raise target.fail(self.batch_id, err) from None

    def _values(self, rows: pa.Table) -> pa.Table:
        return rows.select(self.target.columns).cast(self.target.schema)

    def _merge(self, table: Any, commit: Any) -> None:
        target = self.target
        rows = self.rows.append_column(_SEQUENCE, pa.array(range(self.rows.num_rows), pa.int64()))
        positions = rows.group_by(target.key, use_threads=False).aggregate([(_SEQUENCE, "max")])[f"{_SEQUENCE}_max"]
        last = rows.take(positions.take(pc.sort_indices(positions)))  # the last row of each key, in batch order
        source = self._values(last)
        if self.deletes:
            source = source.append_column(DELETED, last[DELETED].fill_null(False))
        predicate = " AND ".join(f"t.`{k}` = s.`{k}`" for k in target.key)
        values = {c: f"s.`{c}`" for c in target.columns}
        merge = table.merge(source, predicate, source_alias="s", target_alias="t", commit_properties=commit)
        if self.deletes:
            merge = merge.when_matched_delete(predicate=f"s.`{DELETED}`")
            merge = merge.when_matched_update(updates=values, predicate=f"NOT s.`{DELETED}`")
            merge = merge.when_not_matched_insert(updates=values, predicate=f"NOT s.`{DELETED}`")
        else:
            merge = merge.when_matched_update(updates=values).when_not_matched_insert(updates=values)
        merge.execute()
