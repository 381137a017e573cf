"""Semantic checks of a loaded pipeline, the part of Flink's planner validation that needs no cluster.

Options and metadata are checked by the connector factories (`connector.options`); this module checks
what spans objects: columns referenced by watermarks, computed columns and queries exist; INSERT targets exist and the
query's columns line up with the sink's persisted columns in number and type.
"""

from __future__ import annotations

from connector.catalog.model import Pipeline, Table
from connector.connectors import registry
from connector.diagnostics import Diagnostic
from connector.planning import changes
from connector.planning.operators.lookups import lookup_tables
from connector.quality import expectations
from connector.sql.validate.checker import Checker, Locate
from connector.sql.validate.inserts import check_insert, columns_of_query


def validate(pipeline: Pipeline, locate: Locate | None = None) -> list[Diagnostic]:
    """All semantic diagnostics of a pipeline, in file order; `locate` maps query nodes to file positions."""
    checker = Checker(pipeline, locate)
    for insert in pipeline.inserts:
        target = pipeline.table(insert.target)
        if target is not None and target.columns_from_query and not target.columns:
            checker.diagnostics.extend(columns_of_query(pipeline, locate, target, insert))
    for table in pipeline.tables.values():
        checker.table(table)
    sources: dict[str, Table] = {}
    sinks: dict[str, Table] = {}
    for insert in pipeline.inserts:
        sources.update((t.name.lower(), t) for t in changes.read_tables(pipeline, insert.query))
        target = pipeline.table(insert.target)
        if target is not None:
            sinks[target.name.lower()] = target
    for top in pipeline.queries:  # a SELECT alone reads its tables as an INSERT's query does
        sources.update((t.name.lower(), t) for t in changes.read_tables(pipeline, top.query))
    for table in sources.values():
        checker.diagnostics.extend(registry.validate_source(table))
    for table in {t.name.lower(): t for i in pipeline.inserts for t in lookup_tables(pipeline, i.query)}.values():
        checker.diagnostics.extend(registry.validate_lookup(table))
    for table in sinks.values():
        checker.diagnostics.extend(registry.validate_sink(table))
    for view in pipeline.views.values():
        if checker.unsupported(view.query, view.position):
            continue
        checker.calls(view.query, view.position)
        checker.output_columns(view.query, view.position)
    for insert in pipeline.inserts:
        check_insert(checker, insert)
    for top in pipeline.queries:
        if not checker.unsupported(top.query, top.position):
            checker.calls(top.query, top.position)
            checker.output_columns(top.query, top.position)
    checker.diagnostics.extend(expectations.check(pipeline, sinks, checker.locate))
    return sorted(checker.diagnostics, key=lambda d: (d.file, d.line, d.column))
