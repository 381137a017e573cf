"""Which checkpoint a file sink's output belongs to, and the files a crashed batch left behind.

Spark's file sink logs every committed batch in `<path>/_spark_metadata` and skips a batch id the log
already has. A query with another checkpoint (the file renamed, a new `--checkpoint-dir`, the checkpoint
deleted) numbers its batches from 0 again, so into such a directory it would write nothing, silently. The
sink therefore records its owner, the checkpoint's query id, in `<path>/_kafka_sql_sink.json` (readers skip
`_` files), and a run whose checkpoint is not the owner is refused before it reads a record.

Spark readers list the log's files only, but a reader that lists the directory (Hive-style engines, Flink,
pyarrow, pandas) sees every file: before a query writes again, the `part-` files of a batch that never
reached the log (the process died while writing it) are deleted, as Spark re-runs that batch.
"""

from __future__ import annotations

import json
import logging
import re

from pyspark.sql import SparkSession

from connector.catalog.model import Table
from connector.catalog.spark_types import spark_type
from connector.diagnostics import Diagnostic, PipelineError
from connector.runtime.hadoop_fs import HadoopFs

log = logging.getLogger(__name__)

SINK_LOG = "_spark_metadata"
OWNER = "_kafka_sql_sink.json"
_LOGGED_BATCH = re.compile(r"(\d+)(\.compact)?")


def query_id(fs: HadoopFs, checkpoint: str) -> str | None:
    """The id Spark keeps in a checkpoint (`metadata`, written when its query first starts), or None."""
    text = fs.read_text(f"{checkpoint}/metadata")
    if not text:
        return None
    try:
        found = json.loads(text.splitlines()[0]).get("id")
    except (ValueError, AttributeError):
        return None
    return str(found) if found else None


def claim(spark: SparkSession, table: Table, path: str, spark_format: str, checkpoint: str) -> None:
    """Refuse to write `path` from `checkpoint` unless its sink log is this checkpoint's; then delete the files
    no committed batch lists (a crash's leftovers)."""
    fs = HadoopFs(spark, path)
    if not fs.exists(f"{path}/{SINK_LOG}"):
        return
    ours = query_id(fs, checkpoint)
    owner = _owner(fs, path)
    if owner is not None:
        if owner.get("queryId") != ours:
            _refuse(table, path, checkpoint, str(owner.get("checkpoint", "an unknown checkpoint")), ours is None)
    else:  # written before owners were recorded, or by another Spark job: the batch ids must fit
        logged, committed = _last_logged_batch(fs, path), _last_committed_batch(fs, checkpoint)
        if committed is None or (logged is not None and logged > committed + 1):
            _refuse(table, path, checkpoint, None, ours is None)
    _delete_uncommitted_files(spark, fs, table, path, spark_format)


def record_owner(spark: SparkSession, path: str, checkpoint: str, owner_id: str) -> None:
    """Note that `path`'s sink log belongs to the query `owner_id` of `checkpoint`, once its query started."""
    fs = HadoopFs(spark, path)
    owner = _owner(fs, path)
    if owner is None or owner.get("queryId") != owner_id:
        fs.write_text(f"{path}/{OWNER}", json.dumps({"checkpoint": checkpoint, "queryId": owner_id}) + "\n")


def _owner(fs: HadoopFs, path: str) -> dict[str, object] | None:
    text = fs.read_text(f"{path}/{OWNER}")
    if not text:
        return None
    try:
        found = json.loads(text)
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def _last_logged_batch(fs: HadoopFs, path: str) -> int | None:
    names = (entry.rsplit("/", 1)[-1] for entry in fs.glob(f"{path}/{SINK_LOG}/*"))
    batches = [int(m.group(1)) for m in map(_LOGGED_BATCH.fullmatch, names) if m]
    return max(batches, default=None)


def _last_committed_batch(fs: HadoopFs, checkpoint: str) -> int | None:
    names = (entry.rsplit("/", 1)[-1] for entry in fs.glob(f"{checkpoint}/commits/*"))
    return max((int(name) for name in names if name.isdigit()), default=None)


def _refuse(table: Table, path: str, checkpoint: str, owner: str | None, fresh: bool) -> None:
    if owner is None:
        whose = "a query whose checkpoint is not this run's"
    elif owner == checkpoint:
        whose = f"an earlier query of checkpoint '{owner}', since deleted or replaced"
    else:
        whose = f"the query of checkpoint '{owner}'"
    this = "a new checkpoint" if fresh else "checkpoint"
    raise PipelineError(
        [
            Diagnostic.at(
                table.option_position("path"),
                "sink-owner",
                f"Table '{table.name}' writes '{path}', whose file sink log ({SINK_LOG}) was written by {whose}. "
                f"Spark's file sink skips every batch id that log already holds, so this run ({this} "
                f"'{checkpoint}') would write nothing. To go on writing it, run with the checkpoint that wrote it "
                "(the same --checkpoint-dir and pipeline name); to keep both outputs, give this table another "
                f"'path'; to start the output afresh, delete '{path}' with its {SINK_LOG}.",
            )
        ]
    )


def _delete_uncommitted_files(spark: SparkSession, fs: HadoopFs, table: Table, path: str, spark_format: str) -> None:
    """Delete the `part-` files under `path` that the sink log does not list (Spark lists only those)."""
    from pyspark.sql.types import StructField, StructType

    schema = StructType(
        [StructField(c.name, spark_type(c.data_type)) for c in table.columns if c.persisted and c.data_type]
    )
    listed = {fs.qualified(f) for f in spark.read.format(spark_format).schema(schema).load(path).inputFiles()}
    for file in fs.data_files(path):
        if file.rsplit("/", 1)[-1].startswith("part-") and fs.qualified(file) not in listed:
            log.info("Deleting %s: written by a batch that never committed; the restarted query writes it again", file)
            fs.delete(file)
