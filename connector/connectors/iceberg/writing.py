"""Writing an iceberg table: each micro-batch in one Iceberg commit, exactly once per checkpoint and batch id.

The driver collects the micro-batch as Arrow and commits it with pyiceberg. Every snapshot of the commit carries
`kafka-sql.query-id` (the checkpoint's query id) and `kafka-sql.batch-id`, as Flink's sink records its job id and
`flink.max-committed-checkpoint-id`: before committing, the sink walks the table's snapshots back from the current
one to the newest of its query, and a batch at or below that id was committed before a crash and is skipped. A new
checkpoint is a new query id. As in Flink, the database and the table are created from the DDL when missing
(columns, PARTITIONED BY as identity partitions); an existing table must have the declared columns.

Without a PRIMARY KEY the rows are appended. With one, an updating query, a changelog (or 'write.upsert.enabled')
replaces each key's row: the keys of the batch are deleted and the last row of each key that is not a delete is
appended, in one transaction (pyiceberg rewrites the affected data files: copy-on-write, where Flink writes equality
deletes; the table reads the same). An insert-only query into a keyed table appends, as Flink's does. A micro-batch
must fit in the driver's memory: bound a backlog with the Kafka source's 'scan.max-records-per-batch'.
"""

from __future__ import annotations

import contextlib
import functools
import warnings
from typing import Any, cast

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.streaming import DataStreamWriter, StreamingQuery

from connector.catalog.model import Table
from connector.connectors import registry
from connector.connectors.arrow_batches import ArrowBatchWriter, CollectedBatch
from connector.connectors.iceberg.factory import IcebergOptions, table_identifier
from connector.connectors.writing import DELETED, BatchWriter, persisted_columns
from connector.diagnostics import Diagnostic, PipelineError
from connector.errors import KafkaSqlError

QUERY_PROPERTY = "kafka-sql.query-id"
BATCH_PROPERTY = "kafka-sql.batch-id"
_COMMIT_ATTEMPTS = 5  # another writer committed first: reload and try again


class IcebergSinkError(KafkaSqlError, RuntimeError):
    """pyiceberg refused a micro-batch or the table; the message names the sink, the table and the reason."""


def start(
    frame: DataFrame, table: Table, writer: DataStreamWriter, output_mode: str, checkpoint: str
) -> StreamingQuery:
    return writer.foreachBatch(batch_writer(frame, table, output_mode, checkpoint)).start()


def batch_writer(frame: DataFrame, table: Table, output_mode: str, checkpoint: str) -> BatchWriter:
    target = IcebergTarget(table, frame, output_mode, checkpoint)
    try:
        target.prepare()
    except IcebergSinkError as err:
        raise PipelineError([Diagnostic.at(table.option_position("catalog-name"), "iceberg", str(err))]) from None
    return ArrowBatchWriter(target.columns, checkpoint, functools.partial(publish, target))


class IcebergTarget:
    """The Iceberg table of a sink: its catalog, identifier, declared columns, key and partitions."""

    def __init__(self, table: Table, frame: DataFrame, output_mode: str, checkpoint: str) -> None:
        options = registry.resolve(table)
        self.table = table
        self.catalog_name = str(options.get(IcebergOptions.CATALOG_NAME))
        self.warehouse = str(options.get(IcebergOptions.WAREHOUSE))
        self.identifier = table_identifier(table, options)
        self.format_version = options.get(IcebergOptions.FORMAT_VERSION) or 2
        self.columns = [c.name for c in persisted_columns(table)]
        self.arrow_schema = to_arrow_schema(frame.select(*self.columns).schema, timezone="UTC")
        self.key = list(table.primary_key)
        upsert = options.get(IcebergOptions.UPSERT)
        changes = output_mode == "update" or DELETED in frame.columns  # an aggregate's updates, a changelog
        self.upsert = bool(self.key) and (changes or bool(upsert))
        self.partitions = list(table.partitioned_by)
        self.checkpoint = checkpoint
        self.name = f"{self.catalog_name}.{'.'.join(self.identifier)}"

    def catalog(self) -> Any:
        from connector.connectors.iceberg.hadoop_catalog import HadoopCatalog

        return HadoopCatalog(self.catalog_name, warehouse=self.warehouse)

    def prepare(self) -> None:
        """Create the database and the table from the DDL, or check the existing table's columns."""
        from pyiceberg.exceptions import NamespaceAlreadyExistsError, TableAlreadyExistsError

        catalog = self.catalog()
        try:
            if not catalog.table_exists(self.identifier):
                with contextlib.suppress(NamespaceAlreadyExistsError):
                    catalog.create_namespace(self.identifier[0])
                with contextlib.suppress(TableAlreadyExistsError):  # another sink of the pipeline created it first
                    schema, spec = self._schema_and_spec(catalog)
                    catalog.create_table(
                        self.identifier, schema, partition_spec=spec,
                        properties={"format-version": str(self.format_version)},
                    )  # fmt: skip
            names = [f.name for f in catalog.load_table(self.identifier).schema().fields]
        except Exception as err:  # pyiceberg's errors, OSError, schema conversion
            raise IcebergSinkError(
                f"Iceberg sink '{self.table.name}': cannot create or open {self.name}: {err}"
            ) from None
        if sorted(n.lower() for n in names) != sorted(c.lower() for c in self.columns):
            raise IcebergSinkError(
                f"Iceberg sink '{self.table.name}': table {self.name} has the columns {', '.join(names)}, but the DDL "
                f"declares {', '.join(self.columns)}."
            )

    def _schema_and_spec(self, catalog: Any) -> tuple[Any, Any]:
        """The Iceberg schema of the DDL's columns (with field ids; the PRIMARY KEY as its identifier fields, which
        are required, as Flink creates them) and its PARTITIONED BY as identity partitions."""
        from pyiceberg.partitioning import PartitionField, PartitionSpec
        from pyiceberg.schema import Schema, assign_fresh_schema_ids
        from pyiceberg.transforms import IdentityTransform
        from pyiceberg.types import NestedField

        converted = assign_fresh_schema_ids(catalog._convert_schema_if_needed(self.arrow_schema))
        keys = {k.lower() for k in self.key}
        columns = [
            NestedField(f.field_id, f.name, f.field_type, required=f.required or f.name.lower() in keys, doc=f.doc)
            for f in converted.fields
        ]
        identifiers = [f.field_id for f in columns if f.name.lower() in keys]
        schema = Schema(*columns, identifier_field_ids=identifiers)
        fields = [
            PartitionField(schema.find_field(p).field_id, 1000 + i, IdentityTransform(), p)
            for i, p in enumerate(self.partitions)
        ]
        return schema, PartitionSpec(*fields)


def committed_batch(table: Any, query: str) -> int | None:
    """The newest batch id of `query` among the table's current snapshot and its ancestors."""
    snapshot = table.current_snapshot()
    while snapshot is not None:
        properties = snapshot.summary.additional_properties if snapshot.summary else {}
        if properties.get(QUERY_PROPERTY) == query:
            return int(properties[BATCH_PROPERTY])
        parent = snapshot.parent_snapshot_id
        snapshot = table.snapshot_by_id(parent) if parent is not None else None
    return None


def publish(target: IcebergTarget, batch: CollectedBatch) -> None:
    """Commit `batch` unless the table's snapshots show it committed; retried when another writer committed first."""
    from pyiceberg.exceptions import CommitFailedException

    for attempt in range(_COMMIT_ATTEMPTS):
        try:
            table = target.catalog().load_table(target.identifier)
            done = committed_batch(table, batch.query)
            if done is not None and done >= batch.batch_id:
                return  # this batch was committed before a crash: nothing to do
            _commit(target, table, batch)
            return
        except CommitFailedException as err:
            if attempt + 1 == _COMMIT_ATTEMPTS:
                raise _failure(target, batch, err) from None
        except Exception as err:  # pyiceberg's errors, OSError, arrow casts
            raise _failure(target, batch, err) from None


def _failure(target: IcebergTarget, batch: CollectedBatch, err: Exception) -> IcebergSinkError:
    return IcebergSinkError(
        f"Iceberg sink '{target.table.name}': writing batch {batch.batch_id} to {target.name} failed: "
        f"{type(err).__name__}: {err}"
    )


def _commit(target: IcebergTarget, table: Any, batch: CollectedBatch) -> None:
    properties = {QUERY_PROPERTY: batch.query, BATCH_PROPERTY: str(batch.batch_id)}
    schema = table.schema().as_arrow()
    by_name = {c.lower(): c for c in target.columns}
    if not target.upsert:
        with table.transaction() as transaction:
            transaction.append(_cast(batch.inserts(), schema, by_name), snapshot_properties=properties)
        return
    last = batch.last_per_key(target.key)
    kept = CollectedBatch(batch.query, batch.batch_id, last, batch.deletes).inserts()
    with table.transaction() as transaction, warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Delete operation did not match any records")  # new keys: expected
        transaction.delete(_keys_filter(last, target.key), snapshot_properties=properties)
        if kept.num_rows:
            transaction.append(_cast(kept, schema, by_name), snapshot_properties=properties)


def _cast(rows: pa.Table, schema: pa.Schema, by_name: dict[str, str]) -> pa.Table:
    """The batch's columns in the table's order and Arrow types."""
    return pa.Table.from_arrays(
        [rows[by_name[f.name.lower()]].cast(f.type) for f in schema], schema=schema
    )


def _keys_filter(rows: pa.Table, key: list[str]) -> Any:
    """An Iceberg row filter matching the keys of `rows`."""
    from pyiceberg import expressions

    # pyiceberg's expressions are pydantic models whose generated signatures hide the positional (term, value) form
    And, EqualTo, In, Or = (cast(Any, getattr(expressions, n)) for n in ("And", "EqualTo", "In", "Or"))
    if len(key) == 1:
        return In(key[0], rows[key[0]].to_pylist())
    matches = [And(*(EqualTo(k, v) for k, v in zip(key, values, strict=True)))
               for values in zip(*(rows[k].to_pylist() for k in key), strict=True)]  # fmt: skip
    return matches[0] if len(matches) == 1 else Or(*matches)
