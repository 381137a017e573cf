"""Writing a filesystem table: Spark's file sink, or, behind the quality gate, staged batches published by id."""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame
from pyspark.sql.streaming import DataStreamWriter, StreamingQuery

from connector.catalog.model import Table
from connector.connectors import registry
from connector.connectors.filesystem import sink_log
from connector.connectors.filesystem.factory import FilesystemOptions
from connector.connectors.writing import BatchWriter, Staged, reject_deletes
from connector.diagnostics import Diagnostic, PipelineError
from connector.formats import registry as format_registry
from connector.runtime.hadoop_fs import HadoopFs


def start(
    frame: DataFrame, table: Table, writer: DataStreamWriter, output_mode: str, checkpoint: str
) -> StreamingQuery:
    """Spark's file sink, once `checkpoint` is known to own the directory's sink log (`sink_log`)."""
    reject_deletes(frame, table)
    path, identifier, file_options = _file_format(table)
    sink_log.claim(frame.sparkSession, table, path, identifier, checkpoint)
    writer = writer.option("path", path)
    if table.partitioned_by:
        writer = writer.partitionBy(*table.partitioned_by)
    query = writer.format(identifier).options(**file_options).start()
    sink_log.record_owner(frame.sparkSession, path, checkpoint, str(query.id))
    return query


def batch_writer(frame: DataFrame, table: Table, output_mode: str, checkpoint: str) -> BatchWriter:
    reject_deletes(frame, table)
    return FileBatch(table, checkpoint)


def _file_format(table: Table) -> tuple[str, str, dict[str, str]]:
    """(path, Spark format, Spark writer options) of a filesystem table, from Flink's format options."""
    resolved = registry.resolve(table)
    path = str(resolved.require(FilesystemOptions.PATH))
    found = registry.format_options(table, "value")
    if found is None:
        raise PipelineError(
            [Diagnostic.at(table.position, "missing-option", f"Table '{table.name}' needs a 'format'.")]
        )
    identifier, values = found
    declared = format_registry.get(identifier)
    files = declared.codec.spark_files(values) if declared is not None and declared.codec is not None else None
    if files is None:
        writable = [
            f.identifier for f in format_registry.formats() if f.codec is not None and f.codec.spark_files({})
        ]
        raise PipelineError(
            [
                Diagnostic.at(
                    table.option_position("format"),
                    "unsupported-format",
                    f"Format '{identifier}' cannot be written to files; use {', '.join(writable)}.",
                )
            ]
        )
    spark_format, spark_options = files
    return path, spark_format, spark_options


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
    `<path>/_kafka_sql_staging/<query>/<id>` (readers skip `_` directories), then its files move into the table
    directory (partition directories kept) named `batch-<query>-<id>-...`, after the files an earlier attempt
    of the same batch published are removed. `<query>` is the checkpoint's query id: another checkpoint writing
    the same directory numbers its batches from 0 too, and must neither replace nor be mistaken for these."""

    STAGING = "_kafka_sql_staging"

    def __init__(self, table: Table, checkpoint: str) -> None:
        self.table = table
        self.checkpoint = checkpoint
        self.path, self.format, self.options = _file_format(table)
        self.checked = False
        self.query: str | None = None

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
        if self.query is None:  # Spark wrote it when the query started, before its first batch
            self.query = sink_log.query_id(HadoopFs(batch.sparkSession, self.checkpoint), self.checkpoint)
            if self.query is None:
                raise OSError(f"checkpoint '{self.checkpoint}' has no query id (its 'metadata' file)")
        staging = f"{self.path}/{self.STAGING}/{self.query}/{batch_id}"
        writer = batch.write.mode("overwrite").format(self.format).options(**self.options)
        if self.table.partitioned_by:
            writer = writer.partitionBy(*self.table.partitioned_by)
        writer.save(staging)
        prefix = f"batch-{self.query}-{batch_id:012d}-"
        return _StagedFiles(fs, self.path, staging, prefix, len(self.table.partitioned_by))
