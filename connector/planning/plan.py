"""The execution plan of a pipeline: every decision about how it runs on Spark, made without Spark.

`explain` prints it and the engine executes it, so what a user reads is what runs: one Structured Streaming
query per INSERT (statement sets included), its checkpoint location (stable across runs: derived from
`pipeline.name` and the sink), its trigger (Flink's checkpoint interval; AvailableNow when every source is
bounded), its output mode, and its Spark SQL over one temporary view per source table (and per hinted use).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlglot import exp

from connector.connectors.declarations import DatagenOptions, FilesystemOptions, KafkaOptions, PrintOptions
from connector.diagnostics import Diagnostic, PipelineError
from connector.options.framework import parse_duration, resolve
from connector.secrets import mask_options
from connector.sql import dialect, validation
from connector.sql.catalog import Insert, Pipeline, Table
from connector.sql.transpile import TranspileError, to_spark_sql, watermark_delay

# SET keys with a Spark meaning; every other key is reported once as ignored.
SPARK_SETTINGS = {
    "parallelism.default": "spark.sql.shuffle.partitions",
    "table.local-time-zone": "spark.sql.session.timeZone",
}
ENGINE_SETTINGS = ("pipeline.name", "execution.checkpointing.interval", "execution.runtime-mode")


@dataclass
class SourcePlan:
    """One table as read by one query: its Spark view, effective options and start/stop behaviour."""

    table: Table
    view: str
    bounded: bool  # finishes by itself (Kafka bounded mode, files): the query runs with Trigger.AvailableNow
    behaviour: dict[str, str]
    row_limit: int | None = None  # datagen 'number-of-rows': the runner stops the query after that many rows

    def to_json(self) -> dict[str, Any]:
        return {
            "table": self.table.name,
            "connector": self.table.connector,
            "view": self.view,
            "bounded": self.bounded,
            **self.behaviour,
            "options": mask_options(self.table.options),
        }


@dataclass
class QueryPlan:
    insert: Insert
    name: str
    checkpoint: str  # relative to the run's checkpoint root
    sink: Table
    sources: list[SourcePlan]
    spark_sql: str
    output_mode: str
    trigger: dict[str, Any]

    @property
    def bounded(self) -> bool:
        return all(s.bounded for s in self.sources)

    @property
    def row_limit(self) -> int | None:
        """Rows after which the query is complete: every source is bounded or row-limited, one row-limited."""
        limits = [s.row_limit for s in self.sources if s.row_limit is not None]
        if not limits or not all(s.bounded or s.row_limit is not None for s in self.sources):
            return None
        return sum(limits)

    def to_json(self) -> dict[str, Any]:
        pos = self.insert.position
        return {
            "query": self.name,
            "insert": f"{pos.file}:{pos.line}:{pos.column}",
            "statement_set": self.insert.statement_set,
            "sink": {"table": self.sink.name, "connector": self.sink.connector, **sink_behaviour(self.sink)},
            "sources": [s.to_json() for s in self.sources],
            "output_mode": self.output_mode,
            "trigger": self.trigger,
            "row_limit": self.row_limit,
            "checkpoint": self.checkpoint,
            "spark_sql": self.spark_sql,
        }


@dataclass
class PipelinePlan:
    name: str
    spark_conf: dict[str, str]
    queries: list[QueryPlan]
    views: list[tuple[str, str]]  # (name, Spark SQL) in definition order; registered before each query
    warnings: list[Diagnostic] = field(default_factory=list)


def _millis_text(ms: int) -> str:
    return f"{ms} ({datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat(timespec='milliseconds')})"


def kafka_behaviour(table: Table) -> tuple[bool, dict[str, str]]:
    """Flink's start/stop/commit behaviour of a kafka or upsert-kafka source, in words."""
    opts = resolve(table)
    group = opts.get(KafkaOptions.GROUP_ID)
    reset = opts.get(KafkaOptions.AUTO_OFFSET_RESET) or "none"
    mode = opts.get(KafkaOptions.SCAN_STARTUP_MODE)
    topic_list = opts.get(KafkaOptions.TOPIC)
    pattern = opts.get(KafkaOptions.TOPIC_PATTERN)
    subscription = f"topics {', '.join(topic_list)}" if topic_list else f"topics matching /{pattern}/"
    fallback = "fail naming them" if reset == "none" else f"{reset} offset"
    if mode == "earliest-offset":
        start = "earliest offset of every partition"
    elif mode == "latest-offset":
        start = "latest offset of every partition at the first start"
    elif mode == "group-offsets":
        start = (
            f"committed offsets of group '{group}'; partitions without one: {fallback} (properties.auto.offset.reset)"
        )
    elif mode == "timestamp":
        millis = opts.require(KafkaOptions.SCAN_STARTUP_TIMESTAMP_MILLIS)
        start = f"first record at or after {_millis_text(millis)}; partitions without one: latest offset"
    else:
        offsets = opts.require(KafkaOptions.SCAN_STARTUP_SPECIFIC_OFFSETS)
        listed = ", ".join(f"partition {p}: {o}" for p, o in sorted(offsets.items()))
        start = f"{listed}; other partitions: committed offset, else earliest (with a warning)"
    bounded_mode = opts.get(KafkaOptions.SCAN_BOUNDED_MODE)
    if bounded_mode == "unbounded":
        stop = "unbounded"
    elif bounded_mode == "latest-offset":
        stop = "latest offsets when the query starts, then finish"
    elif bounded_mode == "group-offsets":
        stop = f"committed offsets of group '{group}' when the query starts, then finish"
    elif bounded_mode == "timestamp":
        stop = f"records before {_millis_text(opts.require(KafkaOptions.SCAN_BOUNDED_TIMESTAMP_MILLIS))}, then finish"
    else:
        offsets = opts.require(KafkaOptions.SCAN_BOUNDED_SPECIFIC_OFFSETS)
        listed = ", ".join(f"partition {p}: {o}" for p, o in sorted(offsets.items()))
        stop = f"{listed} (exclusive); other partitions are not read; then finish"
    commit_on_checkpoint = opts.get(KafkaOptions.COMMIT_OFFSETS_ON_CHECKPOINT)
    auto_commit = opts.properties.get("enable.auto.commit", "false").lower() == "true"
    if group and commit_on_checkpoint:
        commit = f"ON_CHECKPOINTS: after each completed micro-batch, to group '{group}' (last processed + 1)"
    elif group and auto_commit:
        commit = "KAFKA_PERIODIC: left to the Kafka client's auto commit"
    else:
        commit = "DISABLED" + ("" if group else " (no properties.group.id)")
    interval = opts.get(KafkaOptions.PARTITION_DISCOVERY_INTERVAL)
    bounded = bounded_mode != "unbounded"
    if ends_with_final_watermark(table, bounded):
        stop += "; the watermark then moves to the end of time, firing every open window"
    if bounded or not interval or interval <= timedelta(0):
        discovery = "off: partitions fixed at start"
    else:
        discovery = f"every {_duration_words(interval)}; new partitions and topics read from earliest"
    return bounded, {
        "subscription": subscription,
        "start": start,
        "restore": "checkpointed offsets; partitions unknown to the checkpoint from earliest; "
        "partitions no longer subscribed dropped with a warning",
        "stop": stop,
        "commit": commit,
        "discovery": discovery,
    }


def ends_with_final_watermark(table: Table, bounded: bool) -> bool:
    """A bounded Kafka scan of a table with a WATERMARK ends with the end-of-input row, which moves the
    watermark to the end of time ('scan.bounded.end-watermark': Flink's final watermark)."""
    return (
        table.connector in ("kafka", "upsert-kafka")
        and bounded
        and table.watermark is not None
        and resolve(table).get(KafkaOptions.BOUNDED_END_WATERMARK) is True
    )


def _duration_words(value: timedelta) -> str:
    seconds = value.total_seconds()
    for unit, size in (("h", 3600), ("min", 60), ("s", 1)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)} {unit}"
    return f"{int(seconds * 1000)} ms"


def source_behaviour(table: Table) -> tuple[bool, dict[str, str]]:
    connector = table.connector
    if connector in ("kafka", "upsert-kafka"):
        return kafka_behaviour(table)
    opts = resolve(table)
    if connector == "datagen":
        rows = opts.get(DatagenOptions.NUMBER_OF_ROWS)
        rate = opts.get(DatagenOptions.ROWS_PER_SECOND)
        stop = f"after {rows} rows" if rows else "unbounded"
        # Spark's rate source cannot run AvailableNow; the runner stops the query after the rows instead.
        return False, {"start": f"generated, {rate} rows per second", "stop": stop}
    if connector == "filesystem":
        monitor = opts.get(FilesystemOptions.SOURCE_MONITOR_INTERVAL)
        path = opts.get(FilesystemOptions.PATH)
        if monitor:
            return False, {"start": f"files under {path}", "stop": f"unbounded, new files every {monitor}"}
        return True, {"start": f"files under {path}", "stop": "the files present at start, then finish"}
    return True, {"start": "-", "stop": "-"}


def sink_behaviour(table: Table) -> dict[str, str]:
    connector = table.connector
    opts = resolve(table)
    if connector == "kafka":
        topics = opts.get(KafkaOptions.TOPIC)
        return {
            "topic": ";".join(topics) if topics else "from the 'topic' metadata column",
            "delivery": str(opts.get(KafkaOptions.DELIVERY_GUARANTEE)),
            "partitioner": str(opts.get(KafkaOptions.SINK_PARTITIONER)),
        }
    if connector == "upsert-kafka":
        topics = opts.get(KafkaOptions.TOPIC)
        return {
            "topic": ";".join(topics or []),
            "key": ", ".join(table.primary_key),
            "delivery": str(opts.get(KafkaOptions.DELIVERY_GUARANTEE)),
            "deletes": "tombstones",
        }
    if connector == "filesystem":
        return {
            "path": str(opts.get(FilesystemOptions.PATH)),
            "format": str(opts.get(FilesystemOptions.FORMAT)),
            "delivery": "exactly-once (Spark file sink log)",
        }
    if connector == "print":
        ident = opts.get(PrintOptions.PRINT_IDENTIFIER)
        err = opts.get(PrintOptions.STANDARD_ERROR)
        return {"to": ("stderr" if err else "stdout") + (f", prefix '{ident}> '" if ident else "")}
    return {}


def _view_name(table: str, ordinal: int) -> str:
    return table if ordinal == 0 else f"{table}__hint{ordinal}"


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "pipeline"


def build(pipeline: Pipeline, default_name: str) -> PipelinePlan:
    """Plan every INSERT of a validated pipeline. Raises PipelineError for what Spark cannot run."""
    name = pipeline.setting("pipeline.name") or default_name
    diagnostics: list[Diagnostic] = []
    warnings: list[Diagnostic] = []
    conf: dict[str, str] = {}
    trigger: dict[str, Any] = {"processingTime": "0 seconds"}
    for key, setting in pipeline.settings.items():
        if key in SPARK_SETTINGS:
            conf[SPARK_SETTINGS[key]] = setting.value
        elif key == "execution.checkpointing.interval":
            try:
                interval = parse_duration(setting.value, key)
            except ValueError as err:
                diagnostics.append(Diagnostic.at(setting.position, "invalid-setting", str(err)))
                continue
            trigger = {"processingTime": f"{int(interval.total_seconds() * 1000)} milliseconds"}
        elif key not in ENGINE_SETTINGS:
            warnings.append(
                Diagnostic.at(
                    setting.position,
                    "ignored-setting",
                    f"SET '{key}' has no meaning on Spark and is ignored. Keys with a meaning: "
                    f"{', '.join(sorted((*SPARK_SETTINGS, *ENGINE_SETTINGS)))}.",
                    severity="warning",
                )
            )
    committing: dict[tuple[str, str], str] = {}  # (bootstrap, group) -> the query that commits for it

    def source_plan(table: Table, hints: dict[str, str], view: str, query_name: str) -> SourcePlan:
        options = {**table.options, **hints}
        group = options.get("properties.group.id")
        if table.connector in ("kafka", "upsert-kafka") and group:
            key = (options.get("properties.bootstrap.servers", ""), group)
            owner = committing.setdefault(key, query_name)
            if owner != query_name and options.get("properties.commit.offsets.on.checkpoint", "true") != "false":
                options["properties.commit.offsets.on.checkpoint"] = "false"
                warnings.append(
                    Diagnostic.at(
                        table.position,
                        "shared-group",
                        f"Query '{query_name}' reads '{table.name}' with group '{group}', which query "
                        f"'{owner}' already commits to; only '{owner}' commits offsets for that group.",
                        severity="warning",
                    )
                )
        effective = dataclasses.replace(table, options=options)
        bounded, behaviour = source_behaviour(effective)
        rows = resolve(effective).get(DatagenOptions.NUMBER_OF_ROWS) if table.connector == "datagen" else None
        return SourcePlan(effective, view, bounded, behaviour, rows)

    watermarks = {t.name: t.watermark.column for t in pipeline.tables.values() if t.watermark}
    views: list[tuple[str, str]] = []
    for view in pipeline.views.values():
        try:
            views.append((view.name, to_spark_sql(view.query, watermarks=watermarks)))
        except TranspileError as err:
            diagnostics.append(Diagnostic.at(view.position, "unsupported", err.message))
    queries: list[QueryPlan] = []
    used_names: dict[str, int] = {}
    for insert in pipeline.inserts:
        sink = pipeline.table(insert.target)
        if sink is None:
            continue
        count = used_names.get(sink.name.lower(), 0) + 1
        used_names[sink.name.lower()] = count
        suffix = "" if count == 1 else f"-{count}"
        query_name = f"{name}.{sink.name}{suffix}"
        query = insert.query.copy()
        plans: dict[tuple[str, tuple[tuple[str, str], ...]], SourcePlan] = {}
        for ref in query.find_all(exp.Table):
            read = pipeline.table(ref.name)
            if read is None:
                continue
            hints = dialect.table_option_hints(ref)
            ref_key = (read.name.lower(), tuple(sorted(hints.items())))
            if ref_key not in plans:
                ordinal = sum(1 for k in plans if k[0] == ref_key[0])
                plans[ref_key] = source_plan(read, hints, _view_name(read.name, ordinal), query_name)
            plan = plans[ref_key]
            if plan.view != read.name:
                if not ref.alias:
                    ref.set("alias", exp.TableAlias(this=exp.to_identifier(read.name)))
                ref.set("this", exp.to_identifier(plan.view))
            ref.set("hints", None)
        for table in validation.read_tables(pipeline, insert.query):  # tables read through views
            if not any(k[0] == table.name.lower() for k in plans):
                plans[(table.name.lower(), ())] = source_plan(table, {}, table.name, query_name)
        query_watermarks = dict(watermarks)
        query_watermarks.update((p.view, p.table.watermark.column) for p in plans.values() if p.table.watermark)
        try:
            spark_sql = to_spark_sql(query, watermarks=query_watermarks)
        except TranspileError as err:
            diagnostics.append(Diagnostic.at(insert.position, "unsupported", err.message))
            continue
        updating = validation.produces_updates(pipeline, insert.query)
        query_trigger = {"availableNow": True} if all(p.bounded for p in plans.values()) else trigger
        queries.append(
            QueryPlan(
                insert=insert,
                name=query_name,
                checkpoint=f"{_safe(name)}/{_safe(sink.name)}{suffix}",
                sink=sink,
                sources=list(plans.values()),
                spark_sql=spark_sql,
                output_mode="update" if updating else "append",
                trigger=query_trigger,
            )
        )
    for table in pipeline.tables.values():
        if table.watermark is not None:
            try:
                watermark_delay(table.watermark.expression, table.watermark.column)
            except TranspileError as err:
                diagnostics.append(Diagnostic.at(table.watermark.position, "unsupported", err.message))
    if diagnostics:
        raise PipelineError(diagnostics)
    return PipelinePlan(name, conf, queries, views, warnings)
