"""The execution plan of a pipeline: every decision about how it runs on Spark, made without Spark.

`explain` prints it and the engine executes it, so what a user reads is what runs: one Structured Streaming
query per INSERT (statement sets included), its checkpoint location (stable across runs: derived from
`pipeline.name` and the sink), its trigger (Flink's checkpoint interval; AvailableNow when every source is
bounded), its output mode, and its Spark SQL over one temporary view per source table (and per hinted use).
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from connector.catalog.model import (
    DELETED_COLUMN,
    UPDATE_AFTER_COLUMN,
    UPDATE_BEFORE_COLUMN,
    Function,
    Insert,
    Pipeline,
    Table,
)
from connector.connectors import registry
from connector.diagnostics import Diagnostic, PipelineError
from connector.formats import registry as formats
from connector.options.factory import SourceBehaviour
from connector.options.types import parse_duration
from connector.planning import changes
from connector.planning.operators.changelog_aggregation import ChangelogAggregation
from connector.planning.operators.deduplication import Deduplication
from connector.planning.operators.lookups import is_lookup
from connector.planning.operators.over import OverAggregation
from connector.planning.operators.retractions import aggregated_changelog, retract, retraction_problem
from connector.planning.operators.temporal import TemporalJoin
from connector.planning.transpile import SparkQuery, to_spark_query, to_spark_sql
from connector.secrets import mask_options
from connector.sql.dialect.expressions import WindowTVF
from connector.sql.dialect.statements import table_option_hints
from connector.sql.rewrite.intervals import watermark_delay
from connector.sql.rewrite.nodes import TranspileError

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
    final_watermark: bool = False  # a bounded scan ends with the end-of-input row (Flink's final watermark)
    lookup: bool = False  # looked up by a lookup join: a static relation of the connector's `lookup`
    retractions: bool = False  # the query's aggregates retract old rows: a CDC format's kept, upsert-kafka's normalized
    row_kinds: bool = False  # a CDC projection into print: UPDATE_BEFORE rows kept, both update flags carried along

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
    deduplications: list[Deduplication] = field(default_factory=list)  # views the SQL reads, defined first
    temporal_joins: list[TemporalJoin] = field(default_factory=list)  # views the SQL reads, defined first
    over_aggregations: list[OverAggregation] = field(default_factory=list)  # views the SQL reads, defined first
    changelog_aggregations: list[ChangelogAggregation] = field(default_factory=list)  # likewise

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
            **({"deduplications": [_ranked_view(d) for d in self.deduplications]} if self.deduplications else {}),
            **(
                {"temporal_joins": [dataclasses.asdict(t) for t in self.temporal_joins]}
                if self.temporal_joins
                else {}
            ),
            **(
                {"changelog_aggregations": [_aggregation_view(a) for a in self.changelog_aggregations]}
                if self.changelog_aggregations
                else {}
            ),
            **(
                {"over_aggregations": [_over_view(o) for o in self.over_aggregations]}
                if self.over_aggregations
                else {}
            ),
        }


@dataclass
class PipelinePlan:
    name: str
    spark_conf: dict[str, str]
    queries: list[QueryPlan]
    views: list[tuple[str, str]]  # (name, Spark SQL) in definition order; registered before each query
    warnings: list[Diagnostic] = field(default_factory=list)
    spark_packages: tuple[str, ...] = ()  # Spark modules the formats of its tables need ('group:artifact:version')
    functions: tuple[Function, ...] = ()  # Python functions the queries may call, registered before they start


def source_behaviour(table: Table) -> SourceBehaviour:
    """How the source table is read, from its connector's factory."""
    factory = registry.connector_factory(table)
    if factory is None or factory.describe_source is None:
        return SourceBehaviour(True, {"start": "-", "stop": "-"})
    return factory.describe_source(table, registry.resolve(table))


def sink_behaviour(table: Table) -> dict[str, str]:
    factory = registry.connector_factory(table)
    if factory is None or factory.describe_sink is None:
        return {}
    return factory.describe_sink(table, registry.resolve(table))


def _proctime_columns(table: Table) -> list[str]:
    """The table's processing-time attributes: computed columns `AS PROCTIME()`."""
    return [
        c.name
        for c in table.columns
        if isinstance(c.expression, exp.Anonymous) and c.expression.name.upper() == "PROCTIME"
    ]


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
        factory = registry.connector_factory(table)
        if factory is not None and factory.commits_offsets and group:
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
        described = source_behaviour(effective)
        return SourcePlan(
            effective, view, described.bounded, described.words, described.rows, described.final_watermark
        )

    def lookup_plan(table: Table, view: str) -> SourcePlan:
        words = {"lookup": f"{table.options.get('table-name', table.name)}, read again every micro-batch"}
        return SourcePlan(table, view, True, words, lookup=True)

    watermarks = {t.name: t.watermark.column for t in pipeline.tables.values() if t.watermark}
    proctimes = {t.name: c for t in pipeline.tables.values() for c in _proctime_columns(t)}
    views: list[tuple[str, str]] = []
    inlined = _views_to_inline(pipeline)
    cut = _views_to_inline(pipeline, windows=False)  # the others are Spark views too, for spark.sql's readers
    for view in pipeline.views.values():
        if view.name.lower() in cut:
            continue
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
        query = _inline_views(insert.query.copy(), pipeline, inlined)
        plans: dict[tuple[str, tuple[tuple[str, str], ...], bool], SourcePlan] = {}
        for ref in query.find_all(exp.Table):
            read = pipeline.table(ref.name)
            if read is None:
                continue
            hints = table_option_hints(ref)
            looked_up = is_lookup(ref, pipeline)
            ref_key = (read.name.lower(), tuple(sorted(hints.items())), looked_up)
            if ref_key not in plans:
                ordinal = sum(1 for k in plans if k[0] == ref_key[0])
                named = _view_name(read.name, ordinal)
                plans[ref_key] = lookup_plan(read, named) if looked_up else source_plan(read, hints, named, query_name)
            plan = plans[ref_key]
            if plan.view != read.name:
                if not ref.alias:
                    ref.set("alias", exp.TableAlias(this=exp.to_identifier(read.name)))
                ref.set("this", exp.to_identifier(plan.view))
            ref.set("hints", None)
        for table in changes.read_tables(pipeline, insert.query):  # tables read through views
            if not any(k[0] == table.name.lower() for k in plans):
                plans[(table.name.lower(), (), False)] = source_plan(table, {}, table.name, query_name)
        query_watermarks = dict(watermarks)
        query_watermarks.update((p.view, p.table.watermark.column) for p in plans.values() if p.table.watermark)
        versioned = changes.versioned_tables(pipeline, insert.query)  # a temporal join's versions: no changelog out
        changelog = any(
            registry.reads_changelog(p.table) and p.table.name.lower() not in versioned for p in plans.values()
        )
        aggregated = aggregated_changelog(query, functools.partial(_reads_changelog, plans))
        if aggregated is not None or (changelog and registry.writes_changelog(sink)):
            # The old rows of updates (and for upsert-kafka, of deletes): the aggregates retract them, a changelog
            # format's sink writes them.
            plans = {k: dataclasses.replace(p, retractions=True) for k, p in plans.items()}
        # A print sink shows a CDC format's rows with Flink's kinds: +I, -U, +U, -D.
        sink_factory = registry.connector_factory(sink)
        shows_kinds = sink_factory is not None and sink_factory.shows_row_kinds
        row_kinds = changelog and aggregated is None and shows_kinds and isinstance(query, exp.Select)
        row_kinds = row_kinds and not any(registry.upsert_source(p.table) for p in plans.values())
        if row_kinds:
            plans = {k: dataclasses.replace(p, row_kinds=True) for k, p in plans.items()}
        query_proctimes = dict(proctimes)
        query_proctimes.update((p.view, c) for p in plans.values() for c in _proctime_columns(p.table))
        updating = changes.produces_updates(pipeline, insert.query)
        lookups = [p.view for p in plans.values() if p.lookup]
        # A print sink shows a GROUP BY's or a Top-N's changes row by row, as Flink prints them (+I, then -U and +U,
        # -D): the changelog operator and the Top-N's compute them. Where the changelog operator cannot (an
        # aggregate it lacks, a second stateful operator such as an upsert-kafka source's normalization), Spark's
        # aggregation shows each group's latest row per micro-batch, as +U.
        attempts = [True, False] if shows_kinds and updating else [False]
        spark: SparkQuery | None = None
        for printed in attempts:
            attempt = query.copy() if printed else query
            aggregated = aggregated_changelog(attempt, functools.partial(_reads_changelog, plans))
            # The operator retracts MIN/MAX (validated: over a CDC format), and anything written as a changelog or
            # printed, which needs each update's old row; Spark's aggregation retracts the rest with signed sums.
            by_operator = aggregated is not None and (
                retraction_problem(aggregated) is not None or registry.writes_changelog(sink) or printed
            )
            projects = isinstance(attempt, exp.Select) and not any(isinstance(c, exp.Star) for c in attempt.selects)
            if aggregated is not None:
                attempt = attempt if by_operator else retract(aggregated)
            elif changelog and projects and isinstance(attempt, exp.Select):
                # A projection of a changelog (validation allows no more): tombstones stay deletes of their key.
                attempt = attempt.select(exp.column(DELETED_COLUMN), copy=False)
                if row_kinds:
                    kinds = (exp.column(UPDATE_BEFORE_COLUMN), exp.column(UPDATE_AFTER_COLUMN))
                    attempt = attempt.select(*kinds, copy=False)
            try:
                candidate = to_spark_query(
                    attempt,
                    watermarks=query_watermarks,
                    proctimes=query_proctimes,
                    owned=True,
                    lookups=lookups,
                    changelog=updating and (registry.writes_changelog(sink) or printed),
                    retracting=by_operator,
                    kinds=printed,
                )
            except TranspileError as err:
                if not printed:
                    diagnostics.append(Diagnostic.at(insert.position, "unsupported", err.message))
                continue
            operators = _stateful_operators(candidate, plans.values())
            if len(operators) > 1 and not printed:
                diagnostics.append(
                    Diagnostic.at(
                        insert.position,
                        "unsupported",
                        f"This query needs {len(operators)} stateful operators ({', '.join(operators)}); Spark "
                        "Structured Streaming runs one per query (applyInPandasWithState). Split it: write the first "
                        "step to a topic and read that in a second INSERT.",
                    )
                )
            if len(operators) <= 1:
                spark = candidate
                break
        if spark is None:
            continue
        query_trigger = {"availableNow": True} if all(p.bounded for p in plans.values()) else trigger
        queries.append(
            QueryPlan(
                insert=insert,
                name=query_name,
                checkpoint=f"{_safe(name)}/{_safe(sink.name)}{suffix}",
                sink=sink,
                sources=list(plans.values()),
                spark_sql=spark.sql,
                # A Top-N's or a changelog GROUP BY's operator emits its changes as rows (and __deleted): appended,
                # as Spark requires of it.
                output_mode=(
                    "update"
                    if updating and not any(d.top for d in spark.deduplications) and not spark.changelog_aggregations
                    else "append"
                ),
                trigger=query_trigger,
                deduplications=spark.deduplications,
                temporal_joins=spark.temporal_joins,
                over_aggregations=spark.over_aggregations,
                changelog_aggregations=spark.changelog_aggregations,
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
    return PipelinePlan(
        name, conf, queries, views, warnings, _spark_packages(queries), tuple(pipeline.functions.values())
    )


def _ranked_view(view: Deduplication) -> dict[str, Any]:
    """A deduplicated or Top-N view, for the plan's JSON."""
    found: dict[str, Any] = {"view": view.view, "keys": view.keys, "spark_sql": view.sql}
    if view.aggregation is not None:  # ranked by the operator that aggregates: it reads the GROUP BY's input
        found["group_by"] = _aggregation_view(view.aggregation)
        found["spark_sql"] = view.aggregation.sql
    if view.top is not None:
        top = view.top
        found["top"] = {f.name: getattr(top, f.name) for f in dataclasses.fields(top) if f.name != "aggregated"}
    return found


def _views_to_inline(pipeline: Pipeline, windows: bool = True) -> set[str]:
    """The (lower-cased) views that each INSERT reads as subqueries instead of as Spark views: those the transpiler
    cuts operators out of (OVER windows: aggregations, Top-N, deduplication; SELECT DISTINCT; temporal joins), which
    exist per query, with `windows` those of window TVFs (a window aggregation or Top-N over them needs their rows'
    Spark window), and the views that read them."""
    inlined: set[str] = set()
    changed = True
    while changed:
        changed = False
        for view in pipeline.views.values():
            name = view.name.lower()
            tables = list(view.query.find_all(exp.Table))
            cut = (
                view.query.find(exp.Window) is not None
                or (windows and view.query.find(WindowTVF) is not None)
                or any(s.args.get("distinct") for s in view.query.find_all(exp.Select))
                or any(t.args.get("version") is not None for t in tables)
            )
            if name not in inlined and (cut or any(t.name.lower() in inlined for t in tables)):
                inlined.add(name)
                changed = True
    return inlined


def _inline_views(query: exp.Query, pipeline: Pipeline, inlined: set[str]) -> exp.Query:
    """`query` with each view of `inlined` it reads replaced by the view's query (a subquery under its name)."""
    for ref in list(query.find_all(exp.Table)):
        view = pipeline.view(ref.name) if ref.name.lower() in inlined else None
        if view is None:
            continue
        body = _inline_views(view.query.copy(), pipeline, inlined)
        columns = [exp.to_identifier(c) for c in view.columns or []]
        alias = exp.TableAlias(this=exp.to_identifier(ref.alias or view.name), columns=columns or None)
        ref.replace(exp.Subquery(this=body, alias=alias))
    return query


def _stateful_operators(spark: SparkQuery, sources: Iterable[SourcePlan]) -> list[str]:
    """The Python stateful operators a query runs, in words."""
    found = [f"the {p.table.connector} normalization of '{p.table.name}'" for p in sources
             if p.retractions and registry.upsert_source(p.table)]  # fmt: skip
    found += [f"an event-time temporal join of {t.right}" for t in spark.temporal_joins]
    found += ["a Top-N" if d.aggregation is None else "a Top-N over a GROUP BY" for d in spark.deduplications if d.top]
    found += ["an OVER aggregation" for _ in spark.over_aggregations]
    found += ["a GROUP BY written as a changelog" for _ in spark.changelog_aggregations]
    return found


def _aggregation_view(view: ChangelogAggregation) -> dict[str, Any]:
    """A changelog GROUP BY's view, for the plan's JSON."""
    aggregates = [dataclasses.asdict(a) for a in view.aggregates]
    found = {"view": view.view, "keys": view.keys, "aggregates": aggregates, "spark_sql": view.sql}
    return found | ({"retracting": True} if view.retracting else {})


def _over_view(view: OverAggregation) -> dict[str, Any]:
    """An OVER aggregation's view, for the plan's JSON."""
    return {
        "view": view.view,
        "keys": view.keys,
        "frame": dataclasses.asdict(view.frame),
        "aggregates": [dataclasses.asdict(a) for a in view.aggregates],
        "spark_sql": view.sql,
    }


def _reads_changelog(plans: Mapping[Any, SourcePlan], view: str) -> bool:
    """Whether the query's relation `view` is the source view of a changelog table (`registry.reads_changelog`)."""
    return any(p.view.lower() == view.lower() and registry.reads_changelog(p.table) for p in plans.values())


def _spark_packages(queries: list[QueryPlan]) -> tuple[str, ...]:
    """The Spark modules (and drivers) the connectors and formats of the tables the queries read and write need."""
    needed: set[str] = set()
    for query in queries:
        for table in [query.sink, *(source.table for source in query.sources)]:
            factory = registry.connector_factory(table)
            needed.update(factory.spark_packages if factory is not None else ())
            for role in ("key", "value"):
                found = registry.format_options(table, role)
                declared = formats.get(found[0]) if found is not None else None
                if declared is not None and declared.codec is not None:
                    needed.update(declared.codec.spark_packages)
    return tuple(sorted(needed))
