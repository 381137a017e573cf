"""What the sinks that commit micro-batches from the driver through a Python table library (delta, iceberg) share:
the batch collected as Arrow with the checkpoint's query id (which makes their commits idempotent), the last row of
each key, and the column types such tables take."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from connector.catalog.types import flink_sql, type_root
from connector.options.factory import Check

if TYPE_CHECKING:  # the factories import this module for `table_types`; `validate` needs neither Spark nor Arrow
    import pyarrow as pa
    from pyspark.sql import DataFrame

    from connector.connectors.writing import Staged

_SEQUENCE = "__kafka_sql_seq"
# Parquet-backed table formats have no TIME (a string on the Spark side here), INTERVAL or MULTISET.
_TABLE_TYPES = (
    "STRING", "BOOLEAN", "DECIMAL", "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "FLOAT", "DOUBLE", "DATE",
    "TIMESTAMP", "TIMESTAMP_LTZ", "BINARY", "ARRAY", "MAP", "ROW",
)  # fmt: skip


def table_types(check: Check) -> None:
    """A factory rule: every persisted column has a type the table format stores."""
    for column in check.table.columns:
        if column.persisted and column.data_type is not None and type_root(column.data_type) not in _TABLE_TYPES:
            check.report(
                "unsupported-type",
                f"A {check.factory.identifier} table cannot store {flink_sql(column.data_type)} (column "
                f"'{column.name}'); cast it to STRING or a number in the query.",
                position=column.position,
            )


@dataclass(frozen=True)
class CollectedBatch:
    """One micro-batch on the driver: `rows` hold the sink's columns, and `__deleted` when `deletes`."""

    query: str  # the checkpoint's query id
    batch_id: int
    rows: pa.Table
    deletes: bool

    def inserts(self) -> pa.Table:
        """The rows that are not deletes."""
        import pyarrow.compute as pc

        from connector.connectors.writing import DELETED

        return self.rows.filter(pc.invert(self.rows[DELETED].fill_null(False))) if self.deletes else self.rows

    def last_per_key(self, key: list[str]) -> pa.Table:
        """The last row of each key, in batch order (a delete when the key's last change deleted it)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        rows = self.rows.append_column(_SEQUENCE, pa.array(range(self.rows.num_rows), pa.int64()))
        positions = rows.group_by(key, use_threads=False).aggregate([(_SEQUENCE, "max")])[f"{_SEQUENCE}_max"]
        return self.rows.take(positions.take(pc.sort_indices(positions)))


class _Collected:
    def __init__(self, batch: CollectedBatch, commit: Callable[[CollectedBatch], None]) -> None:
        self.batch, self.commit = batch, commit

    def publish(self) -> None:
        if self.batch.rows.num_rows:
            self.commit(self.batch)

    def discard(self) -> None:
        """Nothing to undo: the rows were only collected."""


class ArrowBatchWriter:
    """foreachBatch function of such a sink (also the quality gate's `StagingWriter`): collects the batch's
    `columns`, then `commit` publishes it (and must skip a batch id the table already has for the query)."""

    def __init__(self, columns: list[str], checkpoint: str, commit: Callable[[CollectedBatch], None]) -> None:
        self.columns, self.checkpoint, self.commit = columns, checkpoint, commit
        self._query: str | None = None

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        self.stage(batch, batch_id).publish()

    def stage(self, batch: DataFrame, batch_id: int) -> Staged:
        from connector.connectors.filesystem.sink_log import query_id
        from connector.connectors.writing import DELETED
        from connector.runtime.hadoop_fs import HadoopFs

        if self._query is None:  # the checkpoint's query id never changes: read once
            self._query = query_id(HadoopFs(batch.sparkSession, self.checkpoint), self.checkpoint)
            if self._query is None:
                raise RuntimeError(f"checkpoint '{self.checkpoint}' has no query id (its 'metadata' file)")
        deletes = DELETED in batch.columns
        rows = batch.select(*self.columns, *([DELETED] if deletes else [])).toArrow()
        return _Collected(CollectedBatch(self._query, batch_id, rows, deletes), self.commit)
