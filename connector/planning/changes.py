"""What a query's changes ask of its sink: which queries update (aggregates, Top-N), what a changelog source
(upsert-kafka, CDC formats) may go through, and the upsert keys Flink requires of keyed sinks. `validate` reports
what these find; the planner asks `produces_updates` for the output mode and `read_tables` for the sources."""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from connector.catalog.model import Insert, Pipeline, Table
from connector.connectors import registry
from connector.planning.operators.changelog_aggregation import extract as extract_aggregation
from connector.planning.operators.lookups import is_lookup, is_versioned
from connector.planning.operators.over import groups_rows, has_over
from connector.planning.operators.retractions import aggregated_changelog, retraction_problem
from connector.planning.operators.top_n import is_top_n, top_n_key
from connector.planning.operators.windowed_rows import ViewQuery, no_views, propagated_window, windowed_rows
from connector.sql.dialect.expressions import WindowTVF
from connector.sql.rewrite.nodes import TranspileError, flink_sql

Report = Callable[[str, str], None]  # (code, message) of an error at the INSERT



def accepts_updates(table: Table) -> bool:
    """Whether the table's connector takes updates and deletes (its factory's `updates`)."""
    factory = registry.connector_factory(table)
    if factory is None:
        return False
    return factory.updates == "all" or (factory.updates == "with-primary-key" and bool(table.primary_key))


def updating_sinks() -> str:
    """The connectors that take updates, in words for errors: 'upsert-kafka, print, ..., jdbc with a PRIMARY KEY'."""
    factories = [f for f in registry.factories().values() if f.sink]
    keyed = [f.identifier for f in factories if f.updates == "with-primary-key"]
    words = [f.identifier for f in factories if f.updates == "all"]
    if keyed:
        alternatives = f"{', '.join(keyed[:-1])} or {keyed[-1]}" if len(keyed) > 1 else keyed[0]
        words.append(f"{alternatives} with a PRIMARY KEY")
    return ", ".join(words)


def is_windowed(select: exp.Select, view: ViewQuery = no_views) -> bool:
    """Whether `select` aggregates per window: over a window TVF's rows (directly, or through subqueries and views,
    `view`), or by a legacy group window."""
    from_ = select.args.get("from_")
    if from_ is not None and windowed_rows(from_.this, view) is not None:
        return True
    if propagated_window(select, view) is not None:  # a window aggregate's windows, aggregated again
        return True
    group = select.args.get("group")
    legacy = ("TUMBLE", "HOP", "SESSION")
    return group is not None and any(
        isinstance(g, exp.Anonymous) and g.name.upper() in legacy for g in group.expressions
    )


def produces_updates(pipeline: Pipeline, query: exp.Query) -> bool:
    """Whether a query emits updates (Flink: a GroupAggregate) rather than appends only.

    A grouped or global aggregate over a window (window TVF or legacy group window) is final when the
    window closes, so it appends; any other aggregate refines earlier results and needs an updating sink, and so
    does a Top-N.
    """
    proctimes = proctime_columns(pipeline, query)

    def view(name: str) -> exp.Expr | None:
        found = pipeline.view(name)
        return found.query if found is not None else None

    for node in queries_read(pipeline, query):
        for select in node.find_all(exp.Select):
            if is_updating_aggregate(select, view) or is_top_n(select, proctimes, view):
                return True
    return False


def is_updating_aggregate(select: exp.Select, view: ViewQuery = no_views) -> bool:
    """Whether `select` groups (GROUP BY, or a global aggregate) outside a window: its results are updated."""
    return groups_rows(select) and not is_windowed(select, view)


def proctime_columns(pipeline: Pipeline, query: exp.Query) -> set[str]:
    """The names of the processing-time attributes (computed columns AS PROCTIME()) of the tables `query` reads
    (only those: a file of many tables would otherwise scan them all for each query)."""
    return {
        c.name
        for t in read_tables(pipeline, query)
        for c in t.columns
        if isinstance(c.expression, exp.Anonymous) and c.expression.name.upper() == "PROCTIME"
    }


def queries_read(pipeline: Pipeline, query: exp.Query) -> list[exp.Query]:
    """`query` and the query of every view it reads, directly or through other views, each once, in first-use
    order."""
    found: list[exp.Query] = [query]
    seen: set[str] = set()
    for node in found:  # grows while it is read
        for ref in node.find_all(exp.Table):
            view = pipeline.view(ref.name)
            if view is not None and view.name.lower() not in seen:
                seen.add(view.name.lower())
                found.append(view.query)
    return found


def read_tables(pipeline: Pipeline, query: exp.Query) -> list[Table]:
    """The tables a query reads as streams, looking through views, in first-use order (not those it looks up)."""
    found: dict[str, Table] = {}
    for node in queries_read(pipeline, query):
        for ref in node.find_all(exp.Table):
            table = pipeline.table(ref.name)
            if table is not None and not is_lookup(ref, pipeline):
                found.setdefault(table.name.lower(), table)
    return list(found.values())


def versioned_tables(pipeline: Pipeline, query: exp.Query) -> set[str]:
    """The (lower-cased) names of the tables `query` reads only as the versioned side of a temporal join."""
    versioned: set[str] = set()
    streamed: set[str] = set()
    for node in queries_read(pipeline, query):
        for ref in node.find_all(exp.Table):
            (versioned if is_versioned(ref, pipeline) else streamed).add(ref.name.lower())
    return versioned - streamed


def changelog_sources(
    pipeline: Pipeline, insert: Insert, changelogs: list[Table], writes_changes: bool, report: Report
) -> None:
    """An upsert-kafka or CDC-format (debezium-json) source is a changelog: Flink retracts a key's previous
    row when it changes or is deleted, so filters, joins and aggregates see each key once. Spark's operators
    cannot retract, and would count every version: a plain projection of such a table is exact, and so are
    the aggregates `connector.planning.operators.retractions` rewrites, given the old rows (a CDC format's own, or an
    upsert-kafka
    key's previous row, kept by `connector.runtime.operators.normalize`). A sink that `writes_changes` (debezium-json)
    takes every old row and delete as a message: a filter of the changelog is exact too."""
    if not changelogs:
        return
    aggregated = aggregated_changelog(insert.query, lambda name: _reads_changelog(pipeline, name))
    if aggregated is not None:
        cdc = not any(registry.upsert_source(t) for t in changelogs)  # an upsert source's normalization is an operator
        problem = retraction_problem(aggregated, kept_values=cdc)
        if problem is not None:
            report(
                "changelog-source",
                f"This query aggregates the changelog table '{changelogs[0].name}' with {problem}: Flink "
                "retracts the old row of each update and delete from its group; here COUNT, SUM and AVG "
                "retract (their signed sums), and MIN and MAX over a CDC format (debezium-json, canal-json, "
                "maxwell-json, debezium-avro-confluent: not upsert-kafka, whose old rows take an operator of their "
                "own), other aggregates cannot. Aggregate with those, or read a topic of inserts.",
            )
        return
    kinds: dict[type[exp.Expr], str] = {
        exp.Where: "a filter (WHERE)",
        exp.Join: "a join",
        exp.Group: "a GROUP BY",
        exp.AggFunc: "an aggregate",
        exp.Distinct: "DISTINCT",
        exp.Window: "an OVER window",
        WindowTVF: "a window TVF",
    }
    if writes_changes:
        del kinds[exp.Where]
    for query in queries_read(pipeline, insert.query):
        for kind, words in kinds.items():
            if query.find(kind) is not None:
                names = ", ".join(f"'{t.name}'" for t in changelogs)
                report(
                    "changelog-source",
                    f"This query applies {words} to the changelog table {names}, whose updates and deletes "
                    "Flink retracts before; Spark Structured Streaming cannot retract rows, so the result "
                    "would count every version of a key. Supported: a projection of a changelog (SELECT columns "
                    "FROM it, into an upsert-kafka, print or jdbc table with a PRIMARY KEY), and COUNT, SUM and "
                    "AVG, with WHERE, GROUP BY and HAVING, over a changelog table read directly; read a topic of "
                    "inserts to do more.",
                )
                return
    if not writes_changes and insert.on_conflict is None:
        _upsert_key(pipeline, insert, changelogs, report)


def changelog_problem(query: exp.Query, changelogs: list[Table]) -> str | None:
    """Why the updates of `query` cannot be written as a changelog format (Flink's retractions of each change),
    or None: its own GROUP BY of a stream of inserts, or of a CDC-format changelog (whose old rows it retracts), can
    (`connector.planning.operators.changelog_aggregation`), and so can a Top-N of a stream of inserts
    (`connector.runtime.operators.top_n`)."""
    keyed = [t for t in changelogs if registry.upsert_source(t)]
    if keyed:
        return (
            f"this query's updates come from the upsert-kafka table '{keyed[0].name}', whose old rows take an "
            "operator of their own (a CDC format's messages carry them)"
        )
    if not isinstance(query, exp.Select):
        return "this query's updates carry no old row here"
    try:
        if extract_aggregation(query.copy(), 1, retracting=bool(changelogs)) is None:
            selects = list(query.find_all(exp.Select))
            if not changelogs and any(is_top_n(s) for s in selects) and not any(groups_rows(s) for s in selects):
                return None  # a Top-N of inserts: each record's changes
            return "this query's updates (a Top-N of an aggregate, or an aggregate it reads) carry no old row here"
    except TranspileError as err:
        return err.message.rstrip(".")
    return None


def over_input(pipeline: Pipeline, insert: Insert, report: Report) -> None:
    """Flink's OVER aggregation takes a stream of inserts: over a query that updates its rows (an aggregate outside
    a window, a Top-N) its planner fails, and so does this."""
    for query in queries_read(pipeline, insert.query):
        for select in query.find_all(exp.Select):
            if not has_over(select):
                continue
            from_ = select.args.get("from_")
            relations = [from_.this] if from_ is not None else []
            relations += [j.this for j in select.args.get("joins") or []]
            for relation in relations:
                if produces_updates(pipeline, exp.select("*").from_(relation.copy())):
                    report(
                        "over-input",
                        "OverAggregate doesn't support consuming update changes: this OVER window reads "
                        f"{flink_sql(relation)[:80]}, which updates its rows (an aggregate outside a window, or a "
                        "Top-N). OVER aggregates need a stream of inserts: aggregate over a window TVF first.",
                    )
                    return


def aggregate_input(pipeline: Pipeline, insert: Insert, report: Report) -> None:
    """An aggregate outside a window over a query that updates its rows (an aggregate, a Top-N): Flink retracts
    the inner results as they change; Spark streams one aggregation of updates per query, and kafka-sql's changelog
    operator takes retractions from a CDC table only, so this refuses it (Nexmark q4) rather than fail in Spark."""
    def view(name: str) -> exp.Expr | None:
        found = pipeline.view(name)
        return found.query if found is not None else None

    for query in queries_read(pipeline, insert.query):
        for select in query.find_all(exp.Select):
            if not is_updating_aggregate(select, view):
                continue
            from_ = select.args.get("from_")
            relations = [from_.this] if from_ is not None else []
            relations += [j.this for j in select.args.get("joins") or []]
            for relation in relations:
                if produces_updates(pipeline, exp.select("*").from_(relation.copy())):
                    report(
                        "aggregate-input",
                        f"This GROUP BY aggregates {flink_sql(relation)[:80]}, which updates its rows (an aggregate "
                        "outside a window, or a Top-N). Flink retracts the old results as they change; Spark streams "
                        "one aggregation of updates per query, and kafka-sql retracts only the rows of a CDC-format "
                        "table. Aggregate per window (a window TVF) inside, or write the inner aggregate to an "
                        "upsert-kafka table and aggregate that table in another pipeline.",
                    )
                    return


def processing_time_windows(pipeline: Pipeline, insert: Insert, report: Report) -> None:
    """A window TVF over a processing-time attribute (Nexmark q12): Spark closes windows by a watermark, which a
    processing-time attribute has not, so its aggregate would never append; refused, saying so."""
    for query in queries_read(pipeline, insert.query):
        for tvf in query.find_all(WindowTVF):
            timecol = tvf.args.get("timecol")
            if timecol is None or not _is_proctime(pipeline, tvf, timecol.name):
                continue
            report(
                "proctime-window",
                f"{str(tvf.args.get('kind')).upper()} over DESCRIPTOR({timecol.name}), a processing-time attribute "
                "(PROCTIME()): kafka-sql runs windows by event time only (Spark closes a window when the "
                "watermark passes it). Window by an event-time attribute: a column with a WATERMARK.",
            )
            return


def _is_proctime(pipeline: Pipeline, tvf: WindowTVF, name: str) -> bool:
    """Whether `name` is a PROCTIME() attribute of the TVF's input: a computed column or a view's projection."""
    if name.lower() in {p.lower() for p in proctime_columns(pipeline, exp.select("*").from_(tvf.this.copy()))}:
        return True
    for query in queries_read(pipeline, exp.select("*").from_(tvf.this.copy())):
        for projection in query.find_all(exp.Alias):
            value = projection.this
            named = projection.alias.lower() == name.lower()
            if named and isinstance(value, exp.Anonymous) and value.name.upper() == "PROCTIME":
                return True
    return False


def top_n_sink_key(pipeline: Pipeline, insert: Insert, target: Table, report: Report) -> None:
    """Flink writes a Top-N to a sink with a PRIMARY KEY only when that key is the Top-N's upsert key: its
    PARTITION BY columns and the rank, selected."""
    query = insert.query
    sink_names = insert.columns or [c.name for c in target.columns if c.persisted]
    proctimes = proctime_columns(pipeline, query)
    positions = top_n_key(query, proctimes, sink_names) if isinstance(query, exp.Select) else None
    if positions is None or not target.primary_key:
        return
    key = {sink_names[i].lower() for i in positions if i < len(sink_names)}
    if key != {k.lower() for k in target.primary_key}:
        shown = ", ".join(sorted(key)) or "none"
        report(
            "upsert-key",
            f"The query has an upsert key that differs from the primary key of the sink table '{target.name}'. "
            f"Primary key: [{', '.join(target.primary_key)}], upsert key: {shown}. A Top-N's upsert key is its "
            "PARTITION BY columns and its rank, selected; Flink refuses other keys too (it asks for an ON "
            "CONFLICT clause).",
        )


def _upsert_key(pipeline: Pipeline, insert: Insert, changelogs: list[Table], report: Report) -> None:
    """Flink writes a changelog projection to a sink with a PRIMARY KEY only when the query's upsert key (the
    source's PRIMARY KEY, selected as it is) is the sink's key; otherwise it refuses, asking for ON CONFLICT."""
    target = pipeline.table(insert.target)
    if target is None or not target.primary_key:
        return
    source = changelogs[0]
    query = insert.query
    names: list[str | None] = []
    if isinstance(query, exp.Select) and not any(isinstance(e, exp.Star) for e in query.selects):
        names = [e.unalias().name if isinstance(e.unalias(), exp.Column) else None for e in query.selects]
    elif isinstance(query, exp.Select):
        names = [c.name for c in source.physical_columns]
    sink_names = insert.columns or [c.name for c in target.columns if c.persisted]
    selected = {sink.lower(): (name or "").lower() for sink, name in zip(sink_names, names, strict=False)}
    upsert_key = {selected.get(k.lower(), "") for k in target.primary_key}
    if source.primary_key and upsert_key == {k.lower() for k in source.primary_key}:
        return
    source_key = ", ".join(source.primary_key) if source.primary_key else "none"
    report(
        "upsert-key",
        f"The query has an upsert key that differs from the primary key of the sink table '{target.name}'. "
        f"Primary key: [{', '.join(target.primary_key)}], upsert key: {source_key} (the PRIMARY KEY of the "
        f"changelog table '{source.name}', selected as it is into the sink's key). Flink refuses this too "
        f"(it asks for an ON CONFLICT clause); declare the changelog's key on '{source.name}' (PRIMARY KEY "
        "(...) NOT ENFORCED) and select it into the sink's PRIMARY KEY columns.",
    )


def _reads_changelog(pipeline: Pipeline, name: str) -> bool:
    table = pipeline.table(name)
    return table is not None and registry.reads_changelog(table)
