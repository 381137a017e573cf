"""Execute a `PipelinePlan` on a SparkSession: source views, computed columns, watermarks, sinks.

For each planned query the engine registers the query's source views (one per table, or per hinted use),
then the pipeline's views, runs the transpiled Spark SQL, lines its columns up with the sink's persisted
columns (Flink's INSERT casts implicitly by position) and starts the sink with the planned trigger,
output mode and checkpoint location. Views are registered again before each query so that every query
gets sources configured for it (e.g. only one query per consumer group commits offsets).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import StreamingQuery
from pyspark.sql.types import TimestampNTZType, TimestampType
from sqlglot import exp

from connector.catalog.model import ColumnKind, Pipeline, Table
from connector.catalog.spark_types import spark_type
from connector.catalog.types import timestamp_precision
from connector.connectors import reading, registry, writing
from connector.connectors.kafka import reading as kafka_reading
from connector.connectors.kafka.commit import commit_offsets_now
from connector.planning.plan import PipelinePlan, QueryPlan, SourcePlan, source_behaviour
from connector.planning.transpile import to_spark_sql
from connector.quality import gate as quality_gate
from connector.quality.expectations import has_quality
from connector.quality.gate import QualityGate
from connector.quality.provenance import PROVENANCE, provenance_view, with_located_calls, with_provenance
from connector.runtime.operators.changelog_aggregation import changelog_aggregation
from connector.runtime.operators.normalize import normalize
from connector.runtime.operators.over import over_aggregation
from connector.runtime.operators.temporal import temporal_join
from connector.runtime.operators.top_n import top_n
from connector.runtime.operators.top_n_aggregation import top_n_of_aggregation
from connector.runtime.python_udfs import located_variants, register_functions
from connector.sql.rewrite.intervals import watermark_delay

log = logging.getLogger(__name__)

# The end-of-input row's event time, 9999-12-30T00:00:00Z: later than any record, and clear of the end of
# Spark's TIMESTAMP range in every session time zone.
END_OF_TIME_MS = 253_402_128_000_000
_END_OF_TIME_SLACK_MS = 10 * 365 * 24 * 3600 * 1000  # a watermark this close to the end of time is its (delayed) one


@dataclass
class RunningQuery:
    plan: QueryPlan
    query: StreamingQuery
    gate: QualityGate | None = None  # the sink's data-quality gate


def _source_frame(
    spark: SparkSession,
    source: SourcePlan,
    provenance: bool = False,
    malformed_rows: bool = False,
    counted: bool = False,
) -> DataFrame:
    """The table's rows with computed columns and the watermark, hidden provenance columns dropped (kept, last,
    with `provenance`: the quality gate's quarantine records and reports name them); `malformed_rows` collects
    skipped malformed records for the gate to quarantine; `counted` observes the records read (`records_read`)."""
    table = source.table
    end_of_input = source.final_watermark
    frame = reading.source_dataframe(spark, table, malformed_rows=malformed_rows, end_of_input=end_of_input)
    update_before = F.col(reading.UPDATE_BEFORE) if reading.UPDATE_BEFORE in frame.columns else F.lit(False)
    if counted:
        marker = F.lit(False)
        if reading.OFFSET in frame.columns:
            marker = F.coalesce(F.col(reading.OFFSET) == reading.END_OF_INPUT_OFFSET, F.lit(False))
        name = f"{_RECORDS_READ}{source.view}{'_with_provenance' if provenance else ''}"  # unique in the query
        frame = frame.observe(name, F.count(F.when(~marker & ~update_before, 1)).alias("records"))
    kinds = [c for c in (reading.UPDATE_BEFORE, reading.UPDATE_AFTER) if c in frame.columns]
    if reading.UPDATE_BEFORE in frame.columns:
        # The old row of an update: an aggregate retracts it, a print sink shows it (-U); a projection into a keyed
        # sink has no use for it (Flink's DropUpdateBefore).
        frame = frame if source.retractions or source.row_kinds else frame.where(~update_before)
    if not source.row_kinds:
        frame, kinds = frame.drop(*kinds), []
    if source.retractions and registry.upsert_source(table):  # the old row of each key, to retract
        frame = normalize(frame, list(table.primary_key))
    visible = [c.name for c in table.columns if c.kind is not ColumnKind.COMPUTED]
    # upsert-kafka: a tombstone is a DELETE of its key; the flag travels with `SELECT *` to an upsert/print sink.
    deleted = [reading.DELETED] if reading.DELETED in frame.columns else []
    hidden = deleted + kinds + (list(PROVENANCE) if provenance else [])
    marker_only = [reading.OFFSET] if end_of_input and reading.OFFSET not in hidden else []  # finds the row
    hidden += marker_only
    computed = [c for c in table.columns if c.kind is ColumnKind.COMPUTED and c.expression is not None]
    if computed:
        raw_view = f"__raw_{source.view}"
        frame.createOrReplaceTempView(raw_view)
        select = exp.select(*[exp.column(n, quoted=True) for n in visible + hidden]).from_(raw_view)
        for col in computed:
            assert col.expression is not None
            select = select.select(exp.alias_(col.expression.copy(), col.name, quoted=True))
        frame = spark.sql(to_spark_sql(select))
        frame = frame.select(*[F.col(f"`{c.name}`") for c in table.columns], *hidden)
    else:
        frame = frame.select(*[F.col(f"`{n}`") for n in visible], *hidden)
    if table.watermark is not None:
        rowtime = table.watermark.column
        if isinstance(frame.schema[rowtime].dataType, TimestampNTZType):
            # Spark's event time must be TIMESTAMP; the session time zone is UTC unless 'table.local-time-zone'
            # says otherwise, so the wall-clock value of Flink's TIMESTAMP(3) is kept.
            frame = frame.withColumn(rowtime, F.col(f"`{rowtime}`").cast(TimestampType()))
        delay = watermark_delay(table.watermark.expression, rowtime)
        if end_of_input:
            # The end-of-input row gets the largest event time before the watermark and is dropped right after
            # it. Spark pushes filters below the watermark unless they name the event-time column or are
            # nondeterministic; this one is both, so it stays above the watermark, and the watermark sees the
            # row. The query's own filters, which the row would not pass, stay above it too: Spark neither
            # merges a filter with a nondeterministic one nor pushes one through it. `spark_partition_id() >= 0`
            # is the always-true nondeterministic part.
            is_marker = F.col(reading.OFFSET) == reading.END_OF_INPUT_OFFSET
            end_of_time = F.timestamp_millis(F.lit(END_OF_TIME_MS))
            frame = frame.withColumn(rowtime, F.when(is_marker, end_of_time).otherwise(F.col(f"`{rowtime}`")))
            frame = frame.withWatermark(rowtime, delay)
            barrier = F.spark_partition_id() >= 0
            frame = frame.where(~(is_marker & (F.col(f"`{rowtime}`") == end_of_time)) & barrier)
        else:
            frame = frame.withWatermark(rowtime, delay)
    return frame.drop(*marker_only)


def table_frame(spark: SparkSession, table: Table) -> DataFrame:
    """The rows of source table `table` as a query reads them; the session extension registers tables with it."""
    described = source_behaviour(table)
    plan = SourcePlan(table, table.name, described.bounded, described.words, described.rows, described.final_watermark)
    frame = _source_frame(spark, plan)
    spark.catalog.dropTempView(f"__raw_{table.name}")  # `frame` is analyzed: it no longer needs the raw view
    return frame


def _align(frame: DataFrame, sink: Table, columns: list[str] | None, keep: Sequence[str] = ()) -> DataFrame:
    """Rename and cast the query's columns, by position (Flink's INSERT maps them so, whatever their names, which
    may repeat), to the sink's persisted columns; `keep` columns of `frame` stay, last."""
    targets = [c for c in sink.columns if c.persisted]
    chosen = [sink.column(n) for n in columns] if columns else targets
    hidden = {reading.DELETED, *keep}
    positional = [c if c in hidden else f"__out_{i}" for i, c in enumerate(frame.columns)]
    frame = frame.toDF(*positional)
    produced = [c for c in positional if c not in hidden]
    by_target = {}
    for src, col in zip(produced, chosen, strict=False):
        if col is not None:
            by_target[col.name.lower()] = F.col(src)
    out = []
    keys = {k.lower() for k in sink.primary_key}
    for col in targets:
        value = by_target.get(col.name.lower(), F.lit(None))
        if col.data_type is not None:
            value = _fractional_seconds(value.cast(spark_type(col.data_type)), col.data_type)
        if not col.nullable or col.name.lower() in keys:  # Flink's sink NOT NULL enforcer (default ERROR)
            message = (
                f"Column '{col.name}' of table '{sink.name}' is NOT NULL, however, a null value is being written "
                "into it."
            )
            value = F.when(value.isNull(), F.raise_error(F.lit(message))).otherwise(value)
        out.append(value.alias(col.name))
    if reading.DELETED in frame.columns:
        out.append(F.col(reading.DELETED))
    return frame.select(*out, *[F.col(c) for c in keep if c in frame.columns])


def _fractional_seconds(value: Column, data_type: exp.DataType) -> Column:
    """A TIMESTAMP(p) / TIMESTAMP_LTZ(p) value cut to p fractional digits (Spark keeps 6): Flink writes a
    TIMESTAMP(3) column's value with milliseconds, e.g. `window_time` (window_end - 1 microsecond here)."""
    precision = timestamp_precision(data_type)
    if precision is None or precision >= 6:
        return value
    unit = 10 ** (6 - precision)
    micros = F.pmod((F.date_part(F.lit("SECOND"), value) * 1_000_000).cast("bigint"), F.lit(unit))
    return value - F.make_dt_interval(secs=(micros / F.lit(1_000_000)).cast("decimal(8,6)"))


# Spark settings under which a query's SQL behaves as Flink's: CAST from DOUBLE to an integer saturates, integer
# overflow wraps, a DECIMAL out of range is NULL, dates that do not parse are NULL (Java semantics, not ANSI
# errors); an integer literal in DECIMAL arithmetic is a DECIMAL(10, 0), as Flink types it, not the narrowest
# DECIMAL that holds it (DECIMAL(10, 2) / 3 keeps Flink's scale 13). Text that does not convert still fails the
# query in CAST, as in Flink (`connector.sql.rewrite.functions.builtins.spark_cast`).
_FLINK_ARITHMETIC = {
    "spark.sql.ansi.enabled": "false",
    "spark.sql.legacy.literal.pickMinimumPrecision": "false",
    "spark.sql.legacy.sizeOfNull": "false",  # CARDINALITY(NULL) is NULL, not -1
    # Expressions nest up to 100 levels (`connector.sql.dialect.nesting`); Spark's analyzer resolves about one level per
    # iteration, and its default of 100 iterations fails a query at that depth.
    "spark.sql.analyzer.maxIterations": "1000",
}


@contextlib.contextmanager
def flink_arithmetic(spark: SparkSession) -> Iterator[None]:
    """Queries analysed inside get Flink's arithmetic and cast semantics (`_FLINK_ARITHMETIC`); expressions keep
    the semantics they were analysed with, so only the pipeline's own SQL is affected, and `spark`'s settings are
    restored after."""
    previous = {key: spark.conf.get(key, None) for key in _FLINK_ARITHMETIC}
    for key, value in _FLINK_ARITHMETIC.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, earlier in previous.items():
            if earlier is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, earlier)


def start_query(
    spark: SparkSession, plan: PipelinePlan, query: QueryPlan, root: Path, gate: QualityGate | None = None
) -> StreamingQuery:
    """Start one query; with a `gate`, its rows carry their source position where the query allows it, and
    every micro-batch passes the gate before the sink writes it."""
    view_columns = {}
    functions = located_variants(plan.functions)
    for source in query.sources:
        if source.lookup:  # a static relation, read again by every micro-batch that joins it
            reading.lookup_dataframe(spark, source.table).createOrReplaceTempView(source.view)
            continue
        malformed = gate is not None and source.table in gate.malformed_sources
        source_rows = _source_frame(spark, source, malformed_rows=malformed, counted=True)
        source_rows.createOrReplaceTempView(source.view)
        if gate is not None or functions:  # the query reads either view: `with_provenance` and `located` choose
            view_columns[source.view] = source_rows.columns
            provenance_rows = _source_frame(spark, source, provenance=True, malformed_rows=malformed, counted=True)
            provenance_rows.createOrReplaceTempView(provenance_view(source.view))

    def located(sql: str) -> str:  # Python functions called on a source's rows name the row's record on failure
        return with_located_calls(sql, view_columns, functions)

    sql = query.spark_sql
    if gate is not None:
        sql = with_provenance(sql, view_columns) or sql
    sql = located(sql)
    with flink_arithmetic(spark):  # views capture the settings they are created with
        for name, view_sql in plan.views:
            spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW `{name}` AS {located(view_sql)}")
        for temporal in query.temporal_joins:  # event-time temporal joins: views both sides' rows define
            temporal_join(spark.table(temporal.left), spark.table(temporal.right), temporal).createOrReplaceTempView(
                temporal.view
            )
        for deduplication in query.deduplications:  # Flink's first row per key: Spark's dropDuplicates
            if deduplication.top is None:
                rows = spark.sql(located(deduplication.sql)).dropDuplicates(deduplication.keys)
            elif deduplication.aggregation is not None:  # a Top-N of a GROUP BY's rows: one operator does both
                grouped = spark.sql(located(deduplication.aggregation.sql))
                rows = top_n_of_aggregation(grouped, deduplication.aggregation, deduplication.keys, deduplication.top)
            else:  # a Top-N: the N first rows per key, what changes emitted with __deleted
                rows = top_n(spark.sql(located(deduplication.sql)), deduplication.keys, deduplication.top)
            rows.createOrReplaceTempView(deduplication.view)
        for over in query.over_aggregations:  # every row with aggregates over the rows before it
            over_aggregation(spark.sql(located(over.sql)), over).createOrReplaceTempView(over.view)
        for aggregation in query.changelog_aggregations:  # a GROUP BY's changes with their retractions
            changelog_aggregation(spark.sql(located(aggregation.sql)), aggregation).createOrReplaceTempView(
                aggregation.view
            )
        keep = (*(PROVENANCE if gate else ()), reading.UPDATE_BEFORE, reading.UPDATE_AFTER)  # those it has
        frame = _align(spark.sql(sql), query.sink, query.insert.columns, keep)
    if gate is not None:
        frame = gate.prepare(frame)
    _warn_if_input_ended(root / query.checkpoint, query)
    _clear_abandoned_first_batch(root / query.checkpoint)
    checkpoint = str(root / query.checkpoint)
    writer = (
        frame.writeStream.queryName(query.name).outputMode(query.output_mode).option("checkpointLocation", checkpoint)
    )
    if query.trigger.get("availableNow"):
        writer = writer.trigger(availableNow=True)
    else:
        writer = writer.trigger(processingTime=query.trigger["processingTime"])
    if gate is None:
        return writing.start(frame, query.sink, writer, query.output_mode, checkpoint=checkpoint)
    with quality_gate.gated_query_settings(spark):
        return writing.start(frame, query.sink, writer, query.output_mode, gate, checkpoint=checkpoint)


# A file Spark's checkpoint log was writing when its process died: it writes `.<name>.<uuid>.tmp` (and Hadoop's
# `..<name>.<uuid>.tmp.crc`), then renames it to `<name>`; only a crash leaves one behind.
_ABANDONED_WRITE = re.compile(r"\.\.?[^.]+\.[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}\.tmp(\.crc)?")


def _clear_abandoned_first_batch(checkpoint: Path) -> None:
    """Delete what a crash during the first batch's planning left in the checkpoint's offset and commit logs.

    With no batch in the offset log, Spark starts at batch 0 and refuses a checkpoint whose `offsets` or
    `commits` directory holds any file (STATE_STORE_CHECKPOINT_LOCATION_NOT_EMPTY): a kill while it wrote
    batch 0's offsets would leave the query unable to restart. Those temporary files were never renamed into
    the log, so nothing was read or committed under them."""
    offsets = checkpoint / "offsets"
    if not offsets.is_dir() or any(p.name.isdigit() for p in offsets.iterdir()):
        return
    for directory in (offsets, checkpoint / "commits"):
        for path in directory.iterdir() if directory.is_dir() else ():
            if _ABANDONED_WRITE.fullmatch(path.name):
                log.info("Deleting %s, an offset-log write a crash left unfinished", path)
                path.unlink()


def _warn_if_input_ended(checkpoint: Path, query: QueryPlan) -> None:
    """Warn when the checkpoint's watermark is the end-of-input one ('scan.bounded.end-watermark'): Spark
    restores it, so windows of this run would drop every new record as late."""
    logs = checkpoint / "offsets"
    batches = [int(p.name) for p in logs.iterdir() if p.name.isdigit()] if logs.is_dir() else []
    if not batches:
        return
    try:
        lines = (logs / str(max(batches))).read_text(encoding="utf-8").splitlines()
        watermark = int(json.loads(lines[1]).get("batchWatermarkMs", 0))
    except (OSError, IndexError, ValueError, AttributeError):
        return  # Spark reports an unreadable checkpoint itself
    if watermark > END_OF_TIME_MS - _END_OF_TIME_SLACK_MS:
        log.warning(
            "Query '%s': checkpoint %s is that of a bounded run that reached the end of its input, and Spark "
            "restores its watermark, which is at the end of time: event-time windows would drop every new "
            "record as late. Run with a new checkpoint (Flink starts each bounded job afresh), or set "
            "'scan.bounded.end-watermark' = 'false' on its sources.",
            query.name,
            checkpoint,
        )


def start_all(
    spark: SparkSession, plan: PipelinePlan, root: Path, pipeline: Pipeline | None = None
) -> list[RunningQuery]:
    """Start every planned query; on a failure, stop those already started and re-raise. `pipeline` (the
    catalog the plan was built from) is needed when a sink has data-quality expectations."""
    _require_pinned_threads(spark)
    for key, value in plan.spark_conf.items():
        spark.conf.set(key, value)
    register_functions(spark, plan.functions)
    running: list[RunningQuery] = []
    try:
        for query in plan.queries:
            gate = _gate(pipeline, query, root)
            running.append(RunningQuery(query, start_query(spark, plan, query, root, gate), gate))
    except BaseException:
        for r in running:
            r.query.stop()
        raise
    return running


def classic_context(spark: SparkSession) -> Any:
    """The session's SparkContext, whose JVM this process talks to through py4j; None for a Spark Connect session."""
    return spark.sparkContext if getattr(spark, "_jsparkSession", None) is not None else None


def _require_pinned_threads(spark: SparkSession) -> None:
    """The sinks and the quality gate read their streaming query's id from the local properties of the JVM thread
    that runs the micro-batch; its foreachBatch call sees them only through py4j's pinned threads (a ClientServer
    gateway, pyspark's default). With PYSPARK_PIN_THREAD=false the first batch failed with "Invalid UUID string"."""
    from py4j.clientserver import ClientServer

    context = classic_context(spark)
    if context is not None and not isinstance(context._gateway, ClientServer):
        raise RuntimeError(
            "kafka-sql needs pyspark's pinned-thread mode (its default), but this Spark session's JVM was started "
            f"with PYSPARK_PIN_THREAD={os.environ.get('PYSPARK_PIN_THREAD', '')!r}: unset PYSPARK_PIN_THREAD "
            "(or set it to 'true') and start the session again."
        )


def _gate(pipeline: Pipeline | None, query: QueryPlan, root: Path) -> QualityGate | None:
    if pipeline is None:
        if has_quality(query.sink):
            raise ValueError(f"the data-quality gate of '{query.sink.name}' needs the pipeline catalog")
        return None
    return quality_gate.for_query(pipeline, query, root)


# Records each source of a query read, observed where its rows enter the query. Spark's numInputRows is no count
# of records: it counts the rows of the rate source behind datagen ('number-of-rows' filters them), the
# end-of-input row of bounded scans, and every scan again when foreachBatch (the quality gate) runs the batch
# more than once.
_RECORDS_READ = "records_read_"
_MALFORMED = "malformed_records_"


def generated_input_done(running: RunningQuery, rows_read: int) -> bool:
    """Whether a row-limited query (datagen 'number-of-rows' or sequences) is complete: it read its rows and, when its
    sources end with the end-of-input row, a micro-batch ran at the end-of-time watermark, which fired every open
    window (Spark applies a new watermark from the batch after the one that moved it)."""
    limit = running.plan.row_limit
    if limit is None or rows_read < limit:
        return False
    if not any(s.final_watermark for s in running.plan.sources):
        return True
    last: dict[str, Any] = running.query.lastProgress or {}
    ran = "addBatch" in (last.get("durationMs") or {})
    return ran and _at_end_of_time((last.get("eventTime") or {}).get("watermark"))


def _at_end_of_time(watermark: str | None) -> bool:
    """Whether a progress report's watermark (ISO text) is the end-of-input one, less any watermark delay."""
    if not watermark:
        return False
    millis = datetime.fromisoformat(watermark).timestamp() * 1000
    return millis > END_OF_TIME_MS - _END_OF_TIME_SLACK_MS


def records_read(progress: Mapping[str, Any]) -> int:
    """Records one micro-batch (StreamingQueryProgress) consumed: rows its sources produced, with the malformed
    records skipped, or rows a generator made."""
    return sum(_observed_count(progress, prefix) for prefix in (_RECORDS_READ, _MALFORMED))


def malformed_records(progress: Mapping[str, Any]) -> int:
    """Malformed records one micro-batch skipped ('<format>.ignore-parse-errors')."""
    return _observed_count(progress, _MALFORMED)


def _observed_count(progress: Mapping[str, Any], prefix: str) -> int:
    total = 0
    for name, row in (progress.get("observedMetrics") or {}).items():
        if name.startswith(prefix):
            values = row.asDict() if hasattr(row, "asDict") else dict(row)
            total += int(values.get("records") or 0)
    return total


def kafka_source_metrics(progress: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The Kafka source metrics (reportLatestOffset) of one StreamingQueryProgress, parsed."""
    found = []
    for source in progress.get("sources", []):
        latest = source.get("latestOffset")
        if not latest:
            continue
        try:
            doc = json.loads(latest) if isinstance(latest, str) else latest
        except ValueError:
            continue
        if isinstance(doc, dict) and "latest" in doc:
            found.append(doc)
    return found


def commit_final_offsets(running: RunningQuery) -> None:
    """Commit the end offsets of the last batch a stopped query completed in this run (Spark never tells the
    source it completed). A run that completed no batch commits nothing: the offsets its checkpoint restored
    were the previous run's, and may no longer be the topic's (deleted and recreated since)."""
    ran = [p for p in running.query.recentProgress if "addBatch" in (p.get("durationMs") or {})]
    if not ran:
        return
    progress = ran[-1]
    kafka = [s for s in running.plan.sources if (f := registry.connector_factory(s.table)) and f.commits_offsets]
    for source_progress in progress.get("sources", []):
        end = source_progress.get("endOffset")
        try:
            offsets = json.loads(end) if isinstance(end, str) else end
        except ValueError:
            continue
        if not isinstance(offsets, dict) or not offsets:
            continue
        owner = next((s for s in kafka if _reads_topics(s.table, offsets.keys())), None)
        if owner is None:
            continue
        try:
            commit_offsets_now(kafka_reading.client_options(owner.table), json.dumps(offsets))
        except Exception as err:  # a failed commit never fails the run, as in Flink
            log.warning("Could not commit the final offsets of %s: %s", running.plan.name, err)


def _reads_topics(table: Table, topics: Iterable[str]) -> bool:
    listed = table.options.get("topic")
    pattern = table.options.get("topic-pattern")
    for topic in topics:
        if listed is not None and topic not in listed.split(";"):
            return False
        if pattern is not None and re.fullmatch(pattern, topic) is None:
            return False
    return True
