"""The data-quality gate: every micro-batch of a query is checked against its sink table's expectations before
the sink writes it, and the batch's offsets commit only when the checks allow.

The gate is the query's foreachBatch function (`sinks.start(..., gate=...)`):

1. `prepare` adds one boolean column per rule with per-row violations to the streaming rows (the rules
   compiled to Spark expressions by `connector.quality.expectations`) and observes every figure the verdicts need
   (`quality_<table>`: rows, violations, non-NULL counts, min / max / mean), so all checks are computed in
   the one pass that reads the batch; Spark reports the same figures in StreamingQueryProgress.
2. Per batch: a sink that stages its writes (files, blackhole) gets the rows no row-level rule rejects in
   that same pass, and the staged batch is published or discarded once the verdicts are known. Other sinks
   (Kafka, print), and uniqueness checks, need the verdicts before anything is written: the batch is read
   into memory once, then checked and written from there. Row-level rules act on their violating rows; a
   failed batch-level rule acts on the whole batch. Quarantine wins over drop: nothing meant for the
   quarantine table is lost.
3. A failing rule whose action is `fail` raises `QualityGateError` before anything is written: the query
   stops, the batch's offsets are not committed, and a restart processes the same records again. The report
   names the rule, the observed value and a sample of failing rows with topic, partition and offset.
4. Otherwise quarantined rows go to the quarantine table (`sinks.batch_writer`, with the failed rule names
   and their provenance), the rest to the sink, and one JSON record per batch is written to the results
   directory: batch id, offsets, lag, rows checked / passed / dropped / quarantined per rule, and the
   great-expectations validation result (`kafka-sql dq-report DIR` renders them). With staged writes,
   quarantining rows and sampling violations read the batch again (only batches that have them).

Provenance (`__topic`, `__partition`, `__offset`) is carried from the source when the query maps each output
row to one row of a single source (`with_provenance`); otherwise it is NULL.

With 'quality.quarantine.malformed' = 'true' the records the query's sources skip as malformed are
quarantined too, in the same write as the batch's other quarantined rows: the sources collect them in
their malformed-records observation (`sources.source_dataframe(..., malformed_rows=True)`), read here
with the gate's own figures.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from functools import reduce
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlglot
from sqlglot import exp

from connector.connectors import sinks, sources
from connector.connectors.declarations import QualityOptions
from connector.diagnostics import Diagnostic, PipelineError
from connector.quality import expectations
from connector.quality.expectations import Action, Outcome, Rule
from connector.sql.catalog import Pipeline, Table
from connector.sql.types import spark_type

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, Row, SparkSession
    from pyspark.sql.streaming import StreamingQueryManager
    from pyspark.sql.types import StructType

    from connector.planning.plan import QueryPlan

log = logging.getLogger(__name__)

PROVENANCE = (sources.TOPIC, sources.PARTITION, sources.OFFSET)
_FLAG = "__dq_{}"
# Per row: some row-level rule with this action rejects it (computed once, read by the observation and the filter).
_REJECTED = {Action.QUARANTINE: "__dq_quarantine", Action.DROP: "__dq_drop"}
_QUARANTINED, _DROPPED = "__quarantined", "__dropped"  # rows row-level rules quarantine / drop (not quarantine)
_MALFORMED_ROWS = "__malformed_rows"  # the skipped malformed source records of the batch (Rows)


def _dropped_by(rule: Rule) -> str:
    return f"__dropped {rule.name}"
_REPORT_ROWS = 5


class QualityGateError(Exception):
    """A micro-batch failed an expectation whose action is `fail`; the message is the report."""


@dataclass
class RuleFigures:
    """What one rule found and did in one batch."""

    name: str
    type: str
    action: str
    scope: str  # "row" or "batch"
    success: bool
    checked: int
    failed: int  # rows violating it (row-level, uniqueness), or every row when a batch-level rule fails
    dropped: int
    quarantined: int
    observed_value: Any = None
    sample: list[dict[str, Any]] = field(default_factory=list)

    @property
    def passed(self) -> int:
        return self.checked - self.failed


@dataclass
class BatchFigures:
    """One batch through the gate: row totals (after overlaps between rules) and per-rule figures."""

    batch_id: int
    status: str  # passed | warned (violations kept) | filtered (rows dropped or quarantined) | failed
    rows: int
    written: int
    dropped: int
    quarantined: int
    rules: list[RuleFigures]
    duration_ms: int = 0
    malformed: int = 0  # malformed source records quarantined (not among `rows`)


@dataclass
class Totals:
    """Figures summed over the batches of a run, for the progress display."""

    batches: int = 0
    rows: int = 0
    written: int = 0
    dropped: int = 0
    quarantined: int = 0
    failed: int = 0
    malformed: int = 0

    def add(self, figures: BatchFigures) -> None:
        self.batches += 1
        self.rows += figures.rows
        self.written += figures.written
        self.dropped += figures.dropped
        self.quarantined += figures.quarantined
        self.malformed += figures.malformed
        self.failed += figures.status == "failed"


@dataclass
class _WrittenAtOnce:
    """A sink without staging, for batches no verdict can reject as a whole: written as they are checked."""

    write: sinks.BatchWriter

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        self.write(batch, batch_id)

    def stage(self, batch: DataFrame, batch_id: int) -> sinks.Staged:
        self.write(batch, batch_id)
        return sinks.NOTHING_STAGED


@dataclass(frozen=True)
class Verdict:
    """What the gate does with one batch: `stop` lists the failed rules whose action is `fail`; a failed
    batch-level rule quarantines or drops the whole batch; row totals count overlapping rules once."""

    rows: int
    batch_failed: list[bool]  # per rule: a batch-level rule that failed
    stop: list[int]
    quarantine_all: bool
    drop_all: bool
    quarantined: int
    dropped: int

    @property
    def written(self) -> int:
        return self.rows - self.quarantined - self.dropped


def provenance_view(view: str) -> str:
    """Name of the temporary view of `view`'s rows with the provenance columns."""
    return f"__dq_{view}"


def with_provenance(spark_sql: str, views: Mapping[str, Sequence[str]]) -> str | None:
    """`spark_sql` reading its source view through `provenance_view(...)` and returning the provenance columns
    last, when each output row comes from one row of one source view (a projection / filter of one source);
    None otherwise. `views` maps each source view to its columns, which expand `*`."""
    try:
        tree = sqlglot.parse_one(spark_sql, read="spark")
    except sqlglot.errors.ParseError:
        return None
    if not isinstance(tree, exp.Select) or any(
        tree.args.get(key) for key in ("joins", "group", "having", "distinct", "with_", "laterals", "windows")
    ):
        return None
    if any(s.find(exp.AggFunc, exp.Window) is not None for s in tree.selects):
        return None
    from_ = tree.args.get("from_")
    table = from_.this if from_ is not None else None
    by_name = {name.lower(): (name, columns) for name, columns in views.items()}
    if not isinstance(table, exp.Table) or table.db or table.name.lower() not in by_name:
        return None
    view, columns = by_name[table.name.lower()]
    alias = table.alias_or_name
    selects: list[exp.Expr] = []
    for select in tree.selects:
        if isinstance(select, exp.Star) or (isinstance(select, exp.Column) and isinstance(select.this, exp.Star)):
            selects += [exp.column(c, table=alias, quoted=True) for c in columns]
        else:
            selects.append(select)
    selects += [exp.alias_(exp.column(c, table=alias, quoted=True), c, quoted=True) for c in PROVENANCE]
    tree.set("expressions", selects)
    if not table.alias:
        table.set("alias", exp.TableAlias(this=exp.to_identifier(table.name, quoted=True)))
    table.set("this", exp.to_identifier(provenance_view(view), quoted=True))
    return tree.sql(dialect="spark")


_CONSTRAINT_PROPAGATION = "spark.sql.constraintPropagation.enabled"


@contextmanager
def planned_without_constraints(spark: SparkSession) -> Iterator[None]:
    """Queries started inside plan without constraint propagation; `spark`'s own setting is restored after.

    A gated query's plan has a rule flag per expectation, each an alias over the source's filters, and Spark
    re-derives constraints through every alias of every micro-batch's plans (the streaming one, and the
    batch plans in foreachBatch, which take over its constraints): about 100 ms per batch for a 10-rule
    suite, measured (`bench/quality_gate.py`), the case Spark's documentation of the setting names. It only
    infers filters (such as IS NOT NULL before a join); results do not change. Spark copies a session's
    settings into a query's own session when it starts, so only the gated query is affected."""
    previous = spark.conf.get(_CONSTRAINT_PROPAGATION, None)
    spark.conf.set(_CONSTRAINT_PROPAGATION, "false")
    try:
        yield
    finally:
        if previous is None:
            spark.conf.unset(_CONSTRAINT_PROPAGATION)
        else:
            spark.conf.set(_CONSTRAINT_PROPAGATION, previous)


def for_query(pipeline: Pipeline, query: QueryPlan, root: Path) -> QualityGate | None:
    """The gate of a planned query, or None when its sink declares no expectations."""
    sink = query.sink
    if not expectations.has_quality(sink):
        return None
    rules = expectations.rules_of(sink, pipeline.file)
    quarantine = None
    name = sink.options.get(QualityOptions.QUARANTINE_TABLE.key)
    if name is not None:
        quarantine = pipeline.table(name)
        if quarantine is None:
            raise PipelineError(
                [
                    Diagnostic.at(
                        sink.option_position(QualityOptions.QUARANTINE_TABLE.key),
                        "quarantine",
                        f"Quarantine table '{name}' of '{sink.name}' is not defined.",
                    )
                ]
            )
    chosen = sink.options.get(QualityOptions.RESULTS_PATH.key)
    # One directory per query: several INSERTs may write the same table.
    results = f"{chosen.rstrip('/')}/{_safe(query.name)}" if chosen else str(root / query.checkpoint / "quality")
    kafka_sources = [s.table for s in query.sources if s.table.connector in ("kafka", "upsert-kafka")]
    malformed = [s.table for s in query.sources] if expectations.quarantines_malformed(sink) else []
    return QualityGate(
        sink, rules, query.name, results, str(root / query.checkpoint), quarantine, kafka_sources, malformed
    )


class QualityGate:
    """The foreachBatch gate of one query (see the module notes). `failure` is the report of the batch that
    stopped the query; `last` and `totals` feed the progress display."""

    def __init__(
        self,
        table: Table,
        rules: Sequence[Rule],
        query_name: str,
        results_dir: str,
        checkpoint: str,
        quarantine: Table | None = None,
        kafka_sources: Sequence[Table] = (),
        malformed_sources: Sequence[Table] = (),
    ) -> None:
        self.table = table
        self.rules = list(rules)
        self.query_name = query_name
        self.results_dir = results_dir.rstrip("/")
        self.checkpoint = checkpoint.rstrip("/")
        self.quarantine = quarantine
        self.kafka_sources = list(kafka_sources)
        self.malformed_sources = list(malformed_sources)  # sources whose skipped records are quarantined
        self.metric_name = f"quality_{table.name}"
        self.failure: str | None = None
        self.last: BatchFigures | None = None
        self.totals = Totals()
        self._quarantine_writer: sinks.BatchWriter | None = None
        self._streams: StreamingQueryManager | None = None
        self._suite_name = f"{table.name}_expectations"
        self._fs: sinks.HadoopFs | None = None
        # The current batch's offsets and lag, asked for while Spark runs the batch (`_ask_positions`).
        self._positions: Future[tuple[dict[str, Any], dict[str, dict[str, int]] | None]] | None = None

    # -- the streaming side --------------------------------------------------------------------------------

    def prepare(self, frame: DataFrame) -> DataFrame:
        """The query's rows with the provenance columns (NULL when the query cannot carry them), one
        violation flag per rule that has one and, per action of row-level rules (drop, quarantine), whether
        one of them rejects the row; and the observation `quality_<table>` of every figure the
        verdicts need (but uniqueness), computed in the pass that reads the batch; Spark reports it in the
        query's progress too."""
        from pyspark.sql import functions as F
        from pyspark.sql.types import IntegerType, LongType, StringType

        nulls = {sources.TOPIC: StringType(), sources.PARTITION: IntegerType(), sources.OFFSET: LongType()}
        for column, data_type in nulls.items():
            if column not in frame.columns:
                frame = frame.withColumn(column, F.lit(None).cast(data_type))
        upsert = sinks.DELETED in frame.columns
        flags = []
        for index, rule in enumerate(self.rules):
            if rule.has_violations:
                violated = rule.violation()
                if upsert:  # a delete of a key is not a row to check
                    violated = violated & ~F.coalesce(F.col(sinks.DELETED), F.lit(False))
                flags.append(violated.alias(_FLAG.format(index)))
        rejected = []
        for action, column in _REJECTED.items():
            if chosen := self._flags(action):
                rejected.append(reduce(lambda a, b: a | b, [F.col(flag) for flag in chosen]).alias(column))
        frame = frame.select("*", *flags).select("*", *rejected).observe(self.metric_name, *self._aggregates())
        self._streams = frame.sparkSession.streams  # foreachBatch gets a clone of the session, without them
        if self.quarantine is not None:
            template = self._quarantine_rows(frame, F.array().cast("array<string>"), -1)
            self._quarantine_writer = sinks.batch_writer(template, self.quarantine)
        return frame

    # -- one micro-batch -----------------------------------------------------------------------------------

    def __call__(self, batch: DataFrame, batch_id: int, write: sinks.BatchWriter) -> None:
        """Check one micro-batch, then write what passes (or raise QualityGateError before writing anything).

        A sink that stages its writes (files, blackhole) gets the batch in one pass that also computes every
        figure; the staged batch is published or discarded once the verdicts are known. So does any sink when
        no rule can stop or reject the whole batch (every rule decides per row, or only records). Otherwise,
        and for uniqueness checks, the verdicts come before anything is written: the batch is read into
        memory once, then checked and written from there."""
        from pyspark import StorageLevel

        started = time.monotonic()
        if not any(r.type == expectations.UNIQUE for r in self.rules):
            if isinstance(write, sinks.StagingWriter):
                self._check_staged(batch, batch_id, write, started)
                return
            if not any(r.action is Action.FAIL or not (r.row_level or r.action is Action.KEEP) for r in self.rules):
                self._check_staged(batch, batch_id, _WrittenAtOnce(write), started)
                return
        cached = batch.persist(StorageLevel.MEMORY_AND_DISK)
        self._ask_positions(batch, batch_id)
        try:
            cached.count()  # reads the batch into memory, computing the observation on the way
            values = {**self._observed(batch), **self._unique_counts(cached)}
            outcomes = [rule.outcome(int(values["rows"]), values, batch.schema) for rule in self.rules]
            verdict = self._verdict(values, outcomes)
            self._stop_if_failed(cached, batch_id, values, outcomes, verdict, started)
            self._quarantine(cached, batch_id, verdict, values[_MALFORMED_ROWS])
            if verdict.written:
                write(self._kept(cached), batch_id)
            self._finish(cached, batch_id, values, outcomes, verdict, started)
        finally:
            cached.unpersist()

    def _check_staged(self, batch: DataFrame, batch_id: int, write: sinks.StagingWriter, started: float) -> None:
        kept = self._kept(batch)
        self._ask_positions(batch, batch_id)  # after the last JVM calls before the job: they share the GIL
        staged = write.stage(kept, batch_id)
        values = self._observed(batch)
        outcomes = [rule.outcome(int(values["rows"]), values, batch.schema) for rule in self.rules]
        verdict = self._verdict(values, outcomes)
        if verdict.stop or verdict.quarantine_all or verdict.drop_all:
            staged.discard()
        self._stop_if_failed(batch, batch_id, values, outcomes, verdict, started)
        if not (verdict.quarantine_all or verdict.drop_all):
            staged.publish()
        self._quarantine(batch, batch_id, verdict, values[_MALFORMED_ROWS])  # reads the batch again if it writes
        self._finish(batch, batch_id, values, outcomes, verdict, started)

    def _data_columns(self, frame: DataFrame) -> list[str]:
        return [c for c in frame.columns if c not in PROVENANCE and not c.startswith("__dq_")]

    def _kept(self, frame: DataFrame) -> DataFrame:
        """The sink's columns of the rows no row-level rule drops or quarantines. Built from SQL text: every
        Column built in Python is a call into the JVM, which a running micro-batch keeps busy (40 ms for
        this DataFrame built from Columns, measured)."""
        removed = [f"`{column}`" for action, column in _REJECTED.items() if self._flags(action)]
        kept = frame.where(f"NOT ({' OR '.join(removed)})") if removed else frame
        return kept.selectExpr(*[f"`{c.replace('`', '``')}`" for c in self._data_columns(frame)])

    def _verdict(self, values: Mapping[str, Any], outcomes: Sequence[Outcome]) -> Verdict:
        rows = int(values["rows"])
        batch_failed = [not o.success and not r.row_level for r, o in zip(self.rules, outcomes, strict=True)]
        stop = [
            i
            for i, (rule, outcome) in enumerate(zip(self.rules, outcomes, strict=True))
            if rule.action is Action.FAIL and not outcome.success
        ]

        def batch_level(action: Action) -> bool:
            return any(failed and r.action is action for r, failed in zip(self.rules, batch_failed, strict=True))

        quarantine_all, drop_all = batch_level(Action.QUARANTINE), batch_level(Action.DROP)
        quarantined = rows if quarantine_all else int(values.get(_QUARANTINED) or 0)
        dropped = 0 if quarantine_all else (rows - quarantined if drop_all else int(values.get(_DROPPED) or 0))
        return Verdict(rows, batch_failed, stop, quarantine_all, drop_all, quarantined, dropped)

    def _stop_if_failed(
        self,
        frame: DataFrame,
        batch_id: int,
        values: Mapping[str, Any],
        outcomes: Sequence[Outcome],
        verdict: Verdict,
        started: float,
    ) -> None:
        """Raise QualityGateError, with the report, when a rule whose action is `fail` failed."""
        if not verdict.stop:
            return
        samples = self._samples(frame, outcomes)
        figures = self._figures(batch_id, "failed", verdict, values, outcomes, samples, started)
        report = self._report(batch_id, figures, verdict.stop, outcomes)
        self._write_record(frame, batch_id, figures, outcomes, samples, report)
        self._done(figures)
        self.failure = report
        raise QualityGateError(report)

    def _quarantine(self, frame: DataFrame, batch_id: int, verdict: Verdict, malformed: Sequence[Row]) -> None:
        """One write of the batch's quarantined rows and of its sources' skipped malformed records."""
        from pyspark.sql import functions as F

        parts = []
        if verdict.quarantined:
            chosen = F.lit(True) if verdict.quarantine_all else self._any(Action.QUARANTINE)
            names = self._failed_names(verdict.batch_failed)
            parts.append(self._quarantine_rows(frame.where(chosen), names, batch_id))
        if malformed:
            records = frame.sparkSession.createDataFrame(list(malformed), _malformed_schema())
            names = F.array(F.lit(expectations.MALFORMED_RECORD))
            parts.append(self._quarantine_rows(records, names, batch_id))
        if parts:
            assert self._quarantine_writer is not None, "validation requires a quarantine table"
            self._quarantine_writer(reduce(lambda a, b: a.union(b), parts), batch_id)

    def _finish(
        self,
        frame: DataFrame,
        batch_id: int,
        values: Mapping[str, Any],
        outcomes: Sequence[Outcome],
        verdict: Verdict,
        started: float,
    ) -> None:
        samples = self._samples(frame, outcomes)  # reads the batch again, only when rules have violations
        violated = any(o.unexpected_count or not o.success for o in outcomes)
        removed = verdict.quarantined or verdict.dropped or values[_MALFORMED_ROWS]
        status = "filtered" if removed else ("warned" if violated else "passed")
        figures = self._figures(batch_id, status, verdict, values, outcomes, samples, started)
        self._write_record(frame, batch_id, figures, outcomes, samples, None)
        self._done(figures)

    def _done(self, figures: BatchFigures) -> None:
        self.last = figures
        self.totals.add(figures)

    def evaluate(self, batch: DataFrame) -> tuple[dict[str, Any], list[Outcome]]:
        """The figures and every rule's verdict for a DataFrame outside a stream, rows as `prepare` gives them."""
        values = self._aggregate(batch)
        rows = int(values["rows"])
        return values, [rule.outcome(rows, values, batch.schema) for rule in self.rules]

    def _aggregate(self, frame: DataFrame) -> dict[str, Any]:
        """Every figure the verdicts need, in one aggregate over `frame` (plus one per unique column)."""
        values = frame.agg(*self._aggregates()).first()
        assert values is not None
        return {**values.asDict(), **self._unique_counts(frame)}

    def _unique_counts(self, frame: DataFrame) -> dict[str, int]:
        """Per uniqueness rule: the rows whose value other rows share (great-expectations' unexpected rows)."""
        from pyspark.sql import functions as F

        found = {}
        for rule in self.rules:
            if rule.type == expectations.UNIQUE:
                column = F.col(f"`{rule.column}`")
                duplicates = frame.where(column.isNotNull()).groupBy(column).count().where(F.col("count") > 1)
                total = duplicates.agg(F.sum("count")).first()
                found[rule.name] = int((total[0] if total is not None else 0) or 0)
        return found

    def _observed(self, batch: DataFrame) -> dict[str, Any]:
        """This micro-batch's `quality_<table>` observation, once an action ran it. foreachBatch runs the
        micro-batch's own physical plan, so its CollectMetrics node then holds the batch's figures: they are
        read from the query's current execution, where Spark takes them for StreamingQueryProgress too."""
        from pyspark.serializers import CPickleSerializer

        context = batch.sparkSession.sparkContext
        assert self._streams is not None, "prepare() comes first"
        query = self._streams.get(context.getLocalProperty("sql.streaming.queryId") or "")
        assert query is not None, "the gate runs inside a streaming query"
        metrics = query._jsq.streamingQuery().lastExecution().observedMetrics()
        utils = getattr(context._jvm, "org.apache.spark.sql.api.python.PythonSQLUtils")

        def metric(name: str) -> dict[str, Any] | None:
            found = metrics.get(name)
            if found.isEmpty():
                return None
            values: dict[str, Any] = CPickleSerializer().loads(utils.toPyRow(found.get())).asDict(recursive=False)
            return values

        observed = metric(self.metric_name)
        if observed is None:
            raise RuntimeError(f"the figures '{self.metric_name}' of the micro-batch are missing")
        malformed: list[Row] = []
        for table in self.malformed_sources:
            collected = metric(sources.malformed_metric(table))
            malformed += (collected or {}).get("rows") or []
        observed[_MALFORMED_ROWS] = malformed
        return observed

    def _aggregates(self) -> list[Column]:
        """The aggregates of every figure but uniqueness: rows, violations, non-NULL counts, min / max / mean,
        and the rows row-level rules quarantine or drop."""
        from pyspark.sql import functions as F

        aggregates: list[Column] = [F.count(F.lit(1)).alias("rows")]
        for index, rule in enumerate(self.rules):
            if rule.has_violations:
                aggregates.append(F.sum(F.col(_FLAG.format(index)).cast("long")).alias(rule.name))
            observed = rule.aggregate()
            if observed is not None:
                aggregates.append(observed)
        for column in dict.fromkeys(r.column for r in self.rules if r.counts_nonnull and r.column):
            aggregates.append(F.count(F.col(f"`{column}`")).alias(expectations.nonnull_count(column)))
        quarantining = any(r.row_level and r.action is Action.QUARANTINE for r in self.rules)
        quarantine, drop = self._any(Action.QUARANTINE), self._any(Action.DROP)
        if quarantining:
            aggregates.append(F.sum(quarantine.cast("long")).alias(_QUARANTINED))
        if any(r.row_level and r.action is Action.DROP for r in self.rules):
            aggregates.append(F.sum((drop & ~quarantine).cast("long")).alias(_DROPPED))
        for index, rule in enumerate(self.rules):
            if quarantining and rule.row_level and rule.action is Action.DROP:  # rows not quarantined instead
                dropped = F.col(_FLAG.format(index)) & ~quarantine
                aggregates.append(F.sum(dropped.cast("long")).alias(_dropped_by(rule)))
        return aggregates

    def _flags(self, action: Action) -> list[str]:
        """The violation flag columns of the row-level rules with `action`."""
        return [_FLAG.format(i) for i, r in enumerate(self.rules) if r.row_level and r.action is action]

    def _any(self, action: Action) -> Column:
        """True for rows a row-level rule with `action` rejects."""
        from pyspark.sql import functions as F

        return F.col(_REJECTED[action]) if self._flags(action) else F.lit(False)

    def _failed_names(self, batch_failed: Sequence[bool]) -> Column:
        """Per row: the names of the rules it violates (row-level flags, failed batch-level rules)."""
        from pyspark.sql import functions as F

        names = []
        for index, (rule, failed) in enumerate(zip(self.rules, batch_failed, strict=True)):
            if rule.row_level:
                names.append(F.when(F.col(_FLAG.format(index)), F.lit(rule.name)))
            elif failed:
                names.append(F.lit(rule.name))
        return F.filter(F.array(*names), lambda name: name.isNotNull()) if names else F.array().cast("array<string>")

    def _quarantine_rows(self, frame: DataFrame, failed: Column, batch_id: int) -> DataFrame:
        """`frame`'s rows as the quarantine table's columns, matched by name and cast to their types."""
        from pyspark.sql import functions as F

        assert self.quarantine is not None
        fields: dict[str, Column] = {c.lower(): F.col(f"`{c}`") for c in self._data_columns(frame)}
        fields.update(
            {
                expectations.FAILED_EXPECTATIONS: failed,
                "source_topic": F.col(sources.TOPIC),
                "source_partition": F.col(sources.PARTITION),
                "source_offset": F.col(sources.OFFSET),
                "batch_id": F.lit(batch_id).cast("bigint"),
                "gated_table": F.lit(self.table.name),
            }
        )
        selected = []
        for column in self.quarantine.columns:
            if not column.persisted:
                continue
            value = fields.get(column.name.lower(), F.lit(None))
            if column.data_type is not None:
                target = spark_type(column.data_type)
                if column.name.lower() == expectations.FAILED_EXPECTATIONS and target.typeName() == "string":
                    value = F.array_join(value, ", ")
                value = value.cast(target)
            selected.append(value.alias(column.name))
        return frame.select(*selected)

    def _samples(self, frame: DataFrame, outcomes: Sequence[Outcome]) -> dict[int, list[Row]]:
        """The first 20 violating rows (by source position, with it) of each rule that has violations, in one
        job that reads the whole batch: a read that stopped early would leave partial figures in the query's
        progress, which takes them from the batch's last execution."""
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        rules = zip(self.rules, outcomes, strict=True)
        wanted = [i for i, (rule, outcome) in enumerate(rules) if rule.has_violations and outcome.unexpected_count]
        unique_rules = [i for i, rule in enumerate(self.rules) if rule.type == expectations.UNIQUE]
        if not wanted and not any(outcomes[i].unexpected_count for i in unique_rules):
            return {}  # nothing to sample: no job at all
        data = [F.col(f"`{c}`") for c in self._data_columns(frame) if c != sinks.DELETED]
        provenance = [F.col(c) for c in PROVENANCE]
        parts = []
        if wanted:
            violated = F.array(*[F.when(F.col(_FLAG.format(i)), F.lit(i)) for i in wanted])
            parts.append(
                frame.select(F.explode(F.filter(violated, lambda i: i.isNotNull())).alias("__rule"), *data, *provenance)
            )
        for index, rule in enumerate(self.rules):
            if rule.type == expectations.UNIQUE and outcomes[index].unexpected_count:
                column = F.col(f"`{rule.column}`")
                duplicated = frame.where(column.isNotNull()).groupBy(column).count().where(F.col("count") > 1)
                keys = duplicated.select(column.alias("__key"))
                rows = frame.join(keys, column == F.col("__key"), "left_semi")
                parts.append(rows.select(F.lit(index).alias("__rule"), *data, *provenance))
        found: dict[int, list[Row]] = {}
        if parts:
            order = Window.partitionBy("__rule").orderBy(*provenance)
            ranked = reduce(lambda a, b: a.unionByName(b), parts).withColumn("__rank", F.row_number().over(order))
            for row in ranked.where(F.col("__rank") <= expectations.SAMPLE_SIZE).collect():
                found.setdefault(int(row["__rule"]), []).append(row)
        return {rule: sorted(rows, key=lambda row: int(row["__rank"])) for rule, rows in found.items()}

    # -- figures, records, reports ---------------------------------------------------------------------------

    def _figures(
        self,
        batch_id: int,
        status: str,
        verdict: Verdict,
        values: Mapping[str, Any],
        outcomes: Sequence[Outcome],
        samples: Mapping[int, list[Row]],
        started: float,
    ) -> BatchFigures:
        """Per rule: rows it rejects, and of those the ones it dropped (quarantine wins over drop: a row a
        quarantining rule also rejects is quarantined) or quarantined."""
        rows = verdict.rows
        per_rule = []
        for index, (rule, outcome) in enumerate(zip(self.rules, outcomes, strict=True)):
            failed = (outcome.unexpected_count or 0) if rule.row_level else (rows if verdict.batch_failed[index] else 0)
            acted = 0 if status == "failed" else failed
            if rule.action is Action.DROP and acted:
                key = _dropped_by(rule) if _dropped_by(rule) in values else rule.name
                acted = int(values[key] or 0) if rule.row_level else rows - verdict.quarantined
            per_rule.append(
                RuleFigures(
                    name=rule.name,
                    type=rule.type,
                    action=rule.action.value,
                    scope="row" if rule.row_level else "batch",
                    success=outcome.success,
                    checked=rows,
                    failed=failed,
                    dropped=acted if rule.action is Action.DROP else 0,
                    quarantined=acted if rule.action is Action.QUARANTINE else 0,
                    observed_value=_observed(rule, outcome),
                    sample=[_row_record(r) for r in samples.get(index, [])[:_REPORT_ROWS]],
                )
            )
        duration = int((time.monotonic() - started) * 1000)
        if status == "failed":
            return BatchFigures(batch_id, status, rows, 0, 0, 0, per_rule, duration)
        malformed = len(values.get(_MALFORMED_ROWS) or ())
        return BatchFigures(
            batch_id, status, rows, verdict.written, verdict.dropped, verdict.quarantined, per_rule, duration, malformed
        )

    def _report(self, batch_id: int, figures: BatchFigures, stop: Sequence[int], outcomes: Sequence[Outcome]) -> str:
        lines = [
            f"Data-quality gate stopped query '{self.query_name}' at batch {batch_id} (table '{self.table.name}', "
            f"{figures.rows} rows): nothing of the batch was written and its offsets were not committed."
        ]
        for index in stop:
            rule, outcome, rule_figures = self.rules[index], outcomes[index], figures.rules[index]
            lines.append(f"  expectation '{rule.name}' ({rule.describe()}): {_verdict(rule, outcome)}")
            for sample in rule_figures.sample:
                values = ", ".join(f"{k}={v!r}" for k, v in sample.items() if k != "provenance")
                lines.append(f"    {values}  ({sample['provenance']})")
        lines.append(
            f"Fix the expectation or the data and run again: the same records are processed again. "
            f"Details: {self._record_path(batch_id)}"
        )
        return "\n".join(lines)

    def _record_path(self, batch_id: int) -> str:
        return f"{self.results_dir}/batch-{batch_id:012d}.json"

    def _write_record(
        self,
        cached: DataFrame,
        batch_id: int,
        figures: BatchFigures,
        outcomes: Sequence[Outcome],
        samples: Mapping[int, list[Row]],
        failure: str | None,
    ) -> None:
        """One JSON record per batch (replaced when the batch runs again): figures, offsets, lag and the
        great-expectations validation result."""
        assert self._positions is not None, "asked for when the batch came in"
        offsets, lag = self._positions.result()
        record = {
            "query": self.query_name,
            "table": self.table.name,
            "batch_id": batch_id,
            "status": figures.status,
            "timestamp": datetime.now(UTC).isoformat(timespec="milliseconds"),
            "duration_ms": figures.duration_ms,
            "offsets": offsets,
            "lag": lag,
            "rows": {
                "checked": figures.rows,
                "passed": figures.written,
                "dropped": figures.dropped,
                "quarantined": figures.quarantined,
                "malformed_quarantined": figures.malformed,
            },
            "quarantine_table": self.quarantine.name if self.quarantine is not None else None,
            "expectations": [{**asdict(r), "passed": r.passed} for r in figures.rules],
            "failure": failure,
            "validation_result": self._validation_result(batch_id, outcomes, samples, figures),
        }
        self._results_fs(cached).write_text(self._record_path(batch_id), json.dumps(record, indent=2, default=str))

    def _results_fs(self, frame: DataFrame) -> sinks.HadoopFs:
        if self._fs is None:
            self._fs = sinks.HadoopFs(frame.sparkSession, self.results_dir)
        return self._fs

    def _ask_positions(self, batch: DataFrame, batch_id: int) -> None:
        """Start reading the batch's offsets from the checkpoint (written before the batch runs) and asking
        Kafka for the lag behind them, on the gate's side thread, so that neither waits for the other nor
        adds to the batch's time: the Spark job that reads the batch takes far longer."""
        fs = self._results_fs(batch)
        found: Future[tuple[dict[str, Any], dict[str, dict[str, int]] | None]] = Future()

        def positions() -> None:
            try:
                offsets = self._offsets(fs, batch_id)
                found.set_result((offsets, self._lag(offsets["end"])))
            except BaseException as error:  # raised where the record needs them
                found.set_exception(error)

        threading.Thread(target=positions, name=f"quality-gate-{self.table.name}", daemon=True).start()
        self._positions = found

    def _validation_result(
        self, batch_id: int, outcomes: Sequence[Outcome], samples: Mapping[int, list[Row]], figures: BatchFigures
    ) -> dict[str, Any]:
        """The batch's great-expectations ExpectationSuiteValidationResult, as JSON."""
        from great_expectations.core import ExpectationSuiteValidationResult, ExpectationValidationResult
        from great_expectations.expectations.expectation_configuration import ExpectationConfiguration

        results = []
        for index, (rule, outcome) in enumerate(zip(self.rules, outcomes, strict=True)):
            partial = [row[rule.column] for row in samples.get(index, [])] if rule.column else []
            results.append(
                ExpectationValidationResult(
                    success=outcome.success,
                    expectation_config=ExpectationConfiguration(**rule.configuration()),
                    result=outcome.gx_result(rule, partial),
                    meta={"scope": "row" if rule.row_level else "batch", "action": rule.action.value},
                )
            )
        successful = sum(1 for o in outcomes if o.success)
        suite_result = ExpectationSuiteValidationResult(
            success=successful == len(outcomes),
            results=results,
            suite_name=self._suite_name,
            statistics={
                "evaluated_expectations": len(outcomes),
                "successful_expectations": successful,
                "unsuccessful_expectations": len(outcomes) - successful,
                "success_percent": successful / len(outcomes) * 100 if outcomes else None,
            },
            meta={"query": self.query_name, "table": self.table.name, "batch_id": batch_id, "status": figures.status},
        )
        document: dict[str, Any] = suite_result.to_json_dict()
        return document

    def _offsets(self, fs: sinks.HadoopFs, batch_id: int) -> dict[str, Any]:
        """Start and end offsets of the batch, per source, from the checkpoint's offset log."""

        def read(index: int) -> list[Any] | None:
            if index < 0:
                return None
            text = fs.read_text(f"{self.checkpoint}/offsets/{index}")
            if text is None:
                return None
            found = []
            for line in text.splitlines()[2:]:
                try:
                    found.append(json.loads(line) if line.strip() != "-" else None)
                except ValueError:
                    found.append(line)
            return found

        return {"start": read(batch_id - 1), "end": read(batch_id)}

    def _lag(self, end: list[Any] | None) -> dict[str, dict[str, int]] | None:
        """Records behind the batch's end offsets per Kafka partition, asked from the broker as the batch
        starts."""
        if not end or not self.kafka_sources:
            return None
        from confluent_kafka import Consumer, KafkaException, TopicPartition

        from connector.connectors.kafka.offsets import SourceSettings

        lag: dict[str, dict[str, int]] = {}
        for offsets in end:
            if not isinstance(offsets, dict):
                continue
            table = next((t for t in self.kafka_sources if _reads(t, offsets)), None)
            if table is None:
                continue
            try:
                settings = SourceSettings.from_options(table.options)
                consumer = Consumer(
                    {**settings.client_config("quality-gate"), "group.id": "kafka-sql-quality-gate",
                     "enable.auto.commit": False}
                )
            except Exception as error:  # lag is informative: never fail a batch for it
                log.warning("Cannot ask Kafka for the lag of %s: %s", self.query_name, error)
                continue
            try:
                for topic, partitions in offsets.items():
                    for partition, offset in partitions.items():
                        high = consumer.get_watermark_offsets(TopicPartition(topic, int(partition)), timeout=5)[1]
                        lag.setdefault(topic, {})[str(partition)] = max(0, int(high) - int(offset))
            except (KafkaException, TypeError, ValueError) as error:
                log.warning("Cannot ask Kafka for the lag of %s: %s", self.query_name, error)
            finally:
                consumer.close()
        return lag or None


def _malformed_schema() -> StructType:
    """The shape of a collected malformed record (`sources.MALFORMED_FIELDS`)."""
    from pyspark.sql.types import BinaryType, IntegerType, LongType, StringType, StructField
    from pyspark.sql.types import StructType as Struct

    types = (StringType(), IntegerType(), LongType(), BinaryType(), BinaryType())
    return Struct([StructField(n, t) for n, t in zip(sources.MALFORMED_FIELDS, types, strict=True)])


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)


def _reads(table: Table, offsets: Mapping[str, Any]) -> bool:
    listed = table.options.get("topic")
    pattern = table.options.get("topic-pattern")
    for topic in offsets:
        if listed is not None and topic not in listed.split(";"):
            return False
        if pattern is not None and re.fullmatch(pattern, topic) is None:
            return False
    return True


def _row_record(row: Row) -> dict[str, Any]:
    values = row.asDict()
    values.pop("__rule", None)
    values.pop("__rank", None)
    topic, partition, offset = (values.pop(c, None) for c in PROVENANCE)
    if topic is None:
        where = "no source position"
    elif partition is None:
        where = f"file {topic}"
    else:
        where = f"topic {topic}, partition {partition}, offset {offset}"
    return {**{k: expectations.json_value(v) for k, v in values.items()}, "provenance": where}


def _observed(rule: Rule, outcome: Outcome) -> Any:
    if rule.type == expectations.INLINE_TYPE or outcome.unexpected_count is not None:
        return outcome.unexpected_count
    return expectations.json_value(outcome.observed)


def _verdict(rule: Rule, outcome: Outcome) -> str:
    if outcome.unexpected_count is not None:
        text = f"{outcome.unexpected_count} of {outcome.element_count} rows violate it"
        if rule.mostly < 1:
            text += f" (mostly={rule.mostly} allows {int(outcome.element_count * (1 - rule.mostly))})"
        return text
    return f"observed {outcome.observed!r}"
