"""The data-quality gate: every micro-batch of a query is checked against its sink table's expectations before
the sink writes it, and the batch's offsets commit only when the checks allow.

The gate is the query's foreachBatch function (`writing.start(..., gate=...)`):

1. `prepare` adds one boolean column per rule with per-row violations to the streaming rows (the rules
   compiled to Spark expressions by `connector.quality.rules`) and observes every figure the verdicts need
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
4. Otherwise quarantined rows go to the quarantine table (`writing.batch_writer`, with the failed rule names
   and their provenance, `connector.quality.provenance`), the rest to the sink, and one JSON record per batch
   is written to the results directory (`connector.quality.results`). With staged writes, quarantining rows
   and sampling violations read the batch again (only batches that have them).

With 'quality.quarantine.malformed' = 'true' the records the query's sources skip as malformed are
quarantined too, in the same write as the batch's other quarantined rows: the sources collect them in
their malformed-records observation (`reading.source_dataframe(..., malformed_rows=True)`), read here
with the gate's own figures.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import reduce
from pathlib import Path
from typing import TYPE_CHECKING, Any

from connector.catalog.model import Pipeline, Table
from connector.connectors import reading, registry, writing
from connector.diagnostics import Diagnostic, PipelineError
from connector.errors import KafkaSqlError
from connector.quality import expectations
from connector.quality.figures import (
    DROPPED,
    MALFORMED_ROWS,
    QUARANTINED,
    BatchFigures,
    Totals,
    Verdict,
    batch_figures,
    decide,
    dropped_by,
    failure_report,
)
from connector.quality.options import QualityOptions
from connector.quality.provenance import PROVENANCE
from connector.quality.results import ResultsWriter
from connector.quality.rules import SAMPLE_SIZE, UNIQUE, Action, Outcome, Rule, nonnull_count

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, Row, SparkSession
    from pyspark.sql.streaming import StreamingQueryManager
    from pyspark.sql.types import StructType

    from connector.planning.plan import QueryPlan

_FLAG = "__dq_{}"
# Per row: some row-level rule with this action rejects it (computed once, read by the observation and the filter).
_REJECTED = {Action.QUARANTINE: "__dq_quarantine", Action.DROP: "__dq_drop"}


class QualityGateError(KafkaSqlError):
    """A micro-batch failed an expectation whose action is `fail`; the message is the report."""


@dataclass
class _WrittenAtOnce:
    """A sink without staging, for batches no verdict can reject as a whole: written as they are checked."""

    write: writing.BatchWriter

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        self.write(batch, batch_id)

    def stage(self, batch: DataFrame, batch_id: int) -> writing.Staged:
        self.write(batch, batch_id)
        return writing.NOTHING_STAGED


# Settings of a gated query's own session (Spark copies a session's settings into a query's session when it starts,
# so the user's session keeps its own):
# - constraint propagation off: a gated plan has a rule flag per expectation, each an alias over the source's
#   filters, and Spark re-derives constraints through every alias of every micro-batch's plans (the streaming
#   one, and the batch plans in foreachBatch, which take over its constraints): about 100 ms per batch for a
#   10-rule suite, measured (`bench/quality_gate.py`), the case Spark's documentation of the setting names. It
#   only infers filters (such as IS NOT NULL before a join); results do not change.
# - the batch cache (sinks that need the verdicts before writing) without Spark's column encodings: the cache
#   lives for one batch, and the encodings cost more CPU than the memory they save (measured with a Kafka sink,
#   500k rows per batch: CPU per batch 1.41-1.49x ungated -> 1.28-1.31x).
_GATED_QUERY_SETTINGS = {
    "spark.sql.constraintPropagation.enabled": "false",
    "spark.sql.inMemoryColumnarStorage.compressed": "false",
}


@contextmanager
def gated_query_settings(spark: SparkSession) -> Iterator[None]:
    """Queries started inside run with `_GATED_QUERY_SETTINGS`; `spark`'s own settings are restored after."""
    previous = {key: spark.conf.get(key, None) for key in _GATED_QUERY_SETTINGS}
    for key, value in _GATED_QUERY_SETTINGS.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, kept in previous.items():
            if kept is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, kept)


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
    factories = {s.table.name: registry.connector_factory(s.table) for s in query.sources}
    kafka_sources = [s.table for s in query.sources if (f := factories[s.table.name]) and f.record_provenance]
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
        self.quarantine = quarantine
        self.malformed_sources = list(malformed_sources)  # sources whose skipped records are quarantined
        self.metric_name = f"quality_{table.name}"
        self.failure: str | None = None
        self.last: BatchFigures | None = None
        self.totals = Totals()
        self._quarantine_writer: writing.BatchWriter | None = None
        self._streams: StreamingQueryManager | None = None
        self.checkpoint = checkpoint
        self._results = ResultsWriter(query_name, table, self.rules, results_dir, checkpoint, quarantine, kafka_sources)

    # -- the streaming side --------------------------------------------------------------------------------

    def prepare(self, frame: DataFrame) -> DataFrame:
        """The query's rows with the provenance columns (NULL when the query cannot carry them), one
        violation flag per rule that has one and, per action of row-level rules (drop, quarantine), whether
        one of them rejects the row; and the observation `quality_<table>` of every figure the
        verdicts need (but uniqueness), computed in the pass that reads the batch; Spark reports it in the
        query's progress too."""
        from pyspark.sql import functions as F
        from pyspark.sql.types import IntegerType, LongType, StringType

        nulls = {reading.TOPIC: StringType(), reading.PARTITION: IntegerType(), reading.OFFSET: LongType()}
        for column, data_type in nulls.items():
            if column not in frame.columns:
                frame = frame.withColumn(column, F.lit(None).cast(data_type))
        upsert = writing.DELETED in frame.columns
        flags = []
        for index, rule in enumerate(self.rules):
            if rule.has_violations:
                violated = rule.violation()
                if upsert:  # a delete of a key is not a row to check
                    violated = violated & ~F.coalesce(F.col(writing.DELETED), F.lit(False))
                flags.append(violated.alias(_FLAG.format(index)))
        rejected = []
        for action, column in _REJECTED.items():
            if chosen := self._flags(action):
                rejected.append(reduce(lambda a, b: a | b, [F.col(flag) for flag in chosen]).alias(column))
        frame = frame.select("*", *flags).select("*", *rejected).observe(self.metric_name, *self._aggregates())
        self._streams = frame.sparkSession.streams  # foreachBatch gets a clone of the session, without them
        if self.quarantine is not None:
            template = self._quarantine_rows(frame, F.array().cast("array<string>"), -1)
            self._quarantine_writer = writing.batch_writer(template, self.quarantine, checkpoint=self.checkpoint)
        return frame

    # -- one micro-batch -----------------------------------------------------------------------------------

    def __call__(self, batch: DataFrame, batch_id: int, write: writing.BatchWriter) -> None:
        """Check one micro-batch, then write what passes (or raise QualityGateError before writing anything).

        A sink that stages its writes (files, blackhole) gets the batch in one pass that also computes every
        figure; the staged batch is published or discarded once the verdicts are known. So does any sink when
        no rule can stop or reject the whole batch (every rule decides per row, or only records). Otherwise,
        and for uniqueness checks, the verdicts come before anything is written: the batch is read into
        memory once, then checked and written from there."""
        from pyspark import StorageLevel

        started = time.monotonic()
        if not any(r.type == UNIQUE for r in self.rules):
            if isinstance(write, writing.StagingWriter):
                self._check_staged(batch, batch_id, write, started)
                return
            if not any(r.action is Action.FAIL or not (r.row_level or r.action is Action.KEEP) for r in self.rules):
                self._check_staged(batch, batch_id, _WrittenAtOnce(write), started)
                return
        # the cache lives for this batch; it is kept without column encodings (`_GATED_QUERY_SETTINGS`)
        cached = batch.persist(StorageLevel.MEMORY_AND_DISK)
        self._results.ask_positions(batch, batch_id)
        try:
            cached.count()  # reads the batch into memory, computing the observation on the way
            values = {**self._observed(batch), **self._unique_counts(cached)}
            outcomes = [rule.outcome(int(values["rows"]), values, batch.schema) for rule in self.rules]
            verdict = decide(self.rules, values, outcomes)
            self._stop_if_failed(cached, batch_id, values, outcomes, verdict, started)
            self._quarantine(cached, batch_id, verdict, values[MALFORMED_ROWS])
            if verdict.written:
                write(self._kept(cached), batch_id)
            self._finish(cached, batch_id, values, outcomes, verdict, started)
        finally:
            cached.unpersist()

    def _check_staged(self, batch: DataFrame, batch_id: int, write: writing.StagingWriter, started: float) -> None:
        kept = self._kept(batch)
        self._results.ask_positions(batch, batch_id)  # after the last JVM calls before the job: they share the GIL
        staged = write.stage(kept, batch_id)
        values = self._observed(batch)
        outcomes = [rule.outcome(int(values["rows"]), values, batch.schema) for rule in self.rules]
        verdict = decide(self.rules, values, outcomes)
        if verdict.stop or verdict.quarantine_all or verdict.drop_all:
            staged.discard()
        self._stop_if_failed(batch, batch_id, values, outcomes, verdict, started)
        if not (verdict.quarantine_all or verdict.drop_all):
            staged.publish()
        self._quarantine(batch, batch_id, verdict, values[MALFORMED_ROWS])  # reads the batch again if it writes
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
        figures = batch_figures(self.rules, batch_id, "failed", verdict, values, outcomes, samples, started)
        report = failure_report(
            self.query_name, self.table.name, self.rules, figures, verdict.stop, outcomes, self._results.path(batch_id)
        )
        self._results.write(frame, batch_id, figures, outcomes, samples, report)
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
        removed = verdict.quarantined or verdict.dropped or values[MALFORMED_ROWS]
        status = "filtered" if removed else ("warned" if violated else "passed")
        figures = batch_figures(self.rules, batch_id, status, verdict, values, outcomes, samples, started)
        self._results.write(frame, batch_id, figures, outcomes, samples, None)
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
            if rule.type == UNIQUE:
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
            collected = metric(reading.malformed_metric(table))
            malformed += (collected or {}).get("rows") or []
        observed[MALFORMED_ROWS] = malformed
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
            aggregates.append(F.count(F.col(f"`{column}`")).alias(nonnull_count(column)))
        quarantining = any(r.row_level and r.action is Action.QUARANTINE for r in self.rules)
        quarantine, drop = self._any(Action.QUARANTINE), self._any(Action.DROP)
        if quarantining:
            aggregates.append(F.sum(quarantine.cast("long")).alias(QUARANTINED))
        if any(r.row_level and r.action is Action.DROP for r in self.rules):
            aggregates.append(F.sum((drop & ~quarantine).cast("long")).alias(DROPPED))
        for index, rule in enumerate(self.rules):
            if quarantining and rule.row_level and rule.action is Action.DROP:  # rows not quarantined instead
                dropped = F.col(_FLAG.format(index)) & ~quarantine
                aggregates.append(F.sum(dropped.cast("long")).alias(dropped_by(rule)))
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

        from connector.catalog.spark_types import spark_type

        assert self.quarantine is not None
        fields: dict[str, Column] = {c.lower(): F.col(f"`{c}`") for c in self._data_columns(frame)}
        fields.update(
            {
                expectations.FAILED_EXPECTATIONS: failed,
                "source_topic": F.col(reading.TOPIC),
                "source_partition": F.col(reading.PARTITION),
                "source_offset": F.col(reading.OFFSET),
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
        unique_rules = [i for i, rule in enumerate(self.rules) if rule.type == UNIQUE]
        if not wanted and not any(outcomes[i].unexpected_count for i in unique_rules):
            return {}  # nothing to sample: no job at all
        data = [F.col(f"`{c}`") for c in self._data_columns(frame) if c != writing.DELETED]
        provenance = [F.col(c) for c in PROVENANCE]
        parts = []
        if wanted:
            violated = F.array(*[F.when(F.col(_FLAG.format(i)), F.lit(i)) for i in wanted])
            parts.append(
                frame.select(F.explode(F.filter(violated, lambda i: i.isNotNull())).alias("__rule"), *data, *provenance)
            )
        for index, rule in enumerate(self.rules):
            if rule.type == UNIQUE and outcomes[index].unexpected_count:
                column = F.col(f"`{rule.column}`")
                duplicated = frame.where(column.isNotNull()).groupBy(column).count().where(F.col("count") > 1)
                keys = duplicated.select(column.alias("__key"))
                rows = frame.join(keys, column == F.col("__key"), "left_semi")
                parts.append(rows.select(F.lit(index).alias("__rule"), *data, *provenance))
        found: dict[int, list[Row]] = {}
        if parts:
            order = Window.partitionBy("__rule").orderBy(*provenance)
            ranked = reduce(lambda a, b: a.unionByName(b), parts).withColumn("__rank", F.row_number().over(order))
            for row in ranked.where(F.col("__rank") <= SAMPLE_SIZE).collect():
                found.setdefault(int(row["__rule"]), []).append(row)
        return {rule: sorted(rows, key=lambda row: int(row["__rank"])) for rule, rows in found.items()}


def _malformed_schema() -> StructType:
    """The shape of a collected malformed record (`reading.MALFORMED_FIELDS`)."""
    from pyspark.sql.types import BinaryType, IntegerType, LongType, StringType, StructField
    from pyspark.sql.types import StructType as Struct

    types = (StringType(), IntegerType(), LongType(), BinaryType(), BinaryType())
    return Struct([StructField(n, t) for n, t in zip(reading.MALFORMED_FIELDS, types, strict=True)])


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)

