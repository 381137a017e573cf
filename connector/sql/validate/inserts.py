"""What an INSERT asks of its sink table, checked as Flink's planner checks it: the changes the sink takes (appends,
updates, a changelog format's retractions), the query's columns against the sink's, and a CREATE TABLE AS SELECT's
columns from its query."""

from __future__ import annotations

import functools

from sqlglot import exp

from connector.catalog.model import Column, ColumnKind, Insert, Pipeline, Table
from connector.catalog.types import assignable, flink_sql
from connector.connectors import registry
from connector.diagnostics import Diagnostic, did_you_mean
from connector.planning import changes, sink_keys
from connector.planning.operators.lookups import is_lookup, is_versioned, lookup_problem
from connector.planning.operators.temporal import temporal_problem
from connector.sql.validate.checker import Checker, Locate


def check_insert(checker: Checker, insert: Insert) -> None:
    """What an INSERT asks of its sink: changes it takes, upsert keys, lookup and temporal joins, and the query's
    columns lined up with the sink's writable ones in number and type."""
    if checker.unsupported(insert.query, insert.position):
        return
    target = checker.pipeline.table(insert.target)
    if target is None:
        if checker.pipeline.view(insert.target):
            checker.error(insert.position, "insert", f"Cannot INSERT INTO view '{insert.target}'; only tables.")
        else:
            checker.relation(insert.target, insert.position)
        return
    versioned_only = changes.versioned_tables(checker.pipeline, insert.query)  # temporal joins read them as versions
    changelogs = [
        t
        for t in changes.read_tables(checker.pipeline, insert.query)
        if registry.reads_changelog(t) and t.name.lower() not in versioned_only
    ]
    writes_changes = registry.writes_changelog(target)
    unwritable = changes.changelog_problem(insert.query, changelogs) if writes_changes else None
    if unwritable is not None and changes.produces_updates(checker.pipeline, insert.query):
        checker.error(
            insert.position,
            "insert-changelog",
            f"Table sink '{target.name}' writes a changelog format, in which Flink writes each update as a "
            f"delete of the old row and an insert of the new one; {unwritable}. Write it to a sink that accepts "
            f"updates ({changes.updating_sinks()}); a GROUP BY of a stream of inserts or of a CDC-format "
            "changelog (COUNT, SUM, AVG, MIN, MAX), a projection or filter of a changelog, or a query of inserts, "
            "can be written in this format.",
        )
    elif not changes.accepts_updates(target) and not writes_changes and changelogs:
        checker.error(
            insert.position,
            "insert-changelog",
            f"Table sink '{target.name}' ({target.connector}) doesn't support consuming update and delete "
            f"changes, which this query reads from the changelog table '{changelogs[0].name}'. Write to a sink "
            f"that accepts updates: {changes.updating_sinks()}.",
        )
    elif (
        not changes.accepts_updates(target)
        and not writes_changes
        and changes.produces_updates(checker.pipeline, insert.query)
    ):
        checker.error(
            insert.position,
            "insert-changelog",
            f"Table sink '{target.name}' ({target.connector}) doesn't support consuming update changes, which "
            f"this query produces (an aggregate outside a window, or a Top-N). Aggregate over a window TVF, or "
            f"write to a sink that accepts updates: {changes.updating_sinks()}.",
        )
    checker.calls(insert.query, insert.position)
    report = functools.partial(checker.error, insert.position)
    changes.changelog_sources(checker.pipeline, insert, changelogs, writes_changes, report)
    if insert.on_conflict is None:
        changes.top_n_sink_key(checker.pipeline, insert, target, report)
    sink_keys.upsert_conflicts(checker.pipeline, insert, target, report)
    changes.over_input(checker.pipeline, insert, report)
    changes.aggregate_input(checker.pipeline, insert, report)
    changes.processing_time_windows(checker.pipeline, insert, report)
    for ref in insert.query.find_all(exp.Table):
        problem = lookup_problem(checker.pipeline, ref) if is_lookup(ref, checker.pipeline) else None
        if is_versioned(ref, checker.pipeline):
            problem = temporal_problem(checker.pipeline, ref)
        if problem is not None:
            checker.error(insert.position, "lookup-join", problem)
    produced = checker.output_columns(insert.query, insert.position)
    sink_cols: list[Column] = [c for c in target.columns if c.persisted]
    if insert.columns:
        chosen = []
        for name in insert.columns:
            col = target.column(name)
            if col is None or not col.persisted:
                checker.error(
                    insert.position,
                    "unknown-column",
                    f"INSERT column '{name}' is not a writable column of '{target.name}'."
                    + did_you_mean(name, [c.name for c in sink_cols])
                    + f" Writable columns: {', '.join(c.name for c in sink_cols)}.",
                )
                return
            chosen.append(col)
        sink_cols = chosen
    if not produced or (target.columns_from_query and not target.columns):  # `ctas-columns` said why
        return
    if len(produced) != len(sink_cols):
        checker.error(
            insert.position,
            "insert-columns",
            f"Column count mismatch inserting into '{target.name}': the query produces {len(produced)} "
            f"columns ({', '.join(produced)}) but the sink has {len(sink_cols)} writable columns "
            f"({', '.join(c.name for c in sink_cols)}).",
        )
        return
    for i, ((qname, qtype), col) in enumerate(zip(produced.items(), sink_cols, strict=True), start=1):
        if qtype is None or col.data_type is None:
            continue
        if not assignable(qtype, col.data_type):
            checker.error(
                insert.position,
                "insert-types",
                f"Incompatible types for sink column '{col.name}' at position {i} of '{target.name}': "
                f"the query gives {qtype.sql(dialect='flink')} ('{qname}'), the sink expects {col.type_sql}. "
                f"Add a CAST.",
            )


def columns_of_query(pipeline: Pipeline, locate: Locate | None, table: Table, insert: Insert) -> list[Diagnostic]:
    """Give a `CREATE TABLE ... AS SELECT` table without columns its query's columns, as Flink does; an error when
    a type is not evident here. The query's own errors are reported with its INSERT, so a scratch checker reads it."""
    columns = Checker(pipeline, locate).output_columns(insert.query, insert.position)
    if not columns:
        return []
    unknown = [name for name, data_type in columns.items() if data_type is None]
    if unknown:
        declared = ", ".join(f"{n} {flink_sql(t) if t is not None else '<type>'}" for n, t in columns.items())
        return [
            Diagnostic.at(
                table.position,
                "ctas-columns",
                f"CREATE TABLE {table.name} AS SELECT: kafka-sql cannot tell the type of {', '.join(unknown)} from "
                f"the query; declare the table's columns: CREATE TABLE {table.name} ({declared}) WITH (...) AS "
                "SELECT ...",
            )
        ]
    table.columns = [
        Column(name=name, kind=ColumnKind.PHYSICAL, position=table.position, data_type=t, type_sql=flink_sql(t))
        for name, t in columns.items()
        if t is not None
    ]
    return []
