"""Lookup joins: `JOIN dim FOR SYSTEM_TIME AS OF s.proc_time AS d ON ...`, Flink's processing-time temporal join.

Flink looks each stream row up in the table (a LookupTableSource, e.g. jdbc) when the row arrives. Here the table
is a static relation of a stream-static join, which Spark reads again for every micro-batch: each row sees the
table as it was when its micro-batch ran, which is processing time at micro-batch granularity. The time given must
be a processing-time attribute (a computed column `AS PROCTIME()`) of the joined stream. AS OF a changelog table
is an event-time temporal join instead (`connector.planning.operators.temporal`).
"""

from __future__ import annotations

from sqlglot import exp

from connector.catalog.model import Pipeline, Table
from connector.connectors import registry


def is_lookup(ref: exp.Table, pipeline: Pipeline) -> bool:
    """Whether the table reference is the looked-up side of a lookup join (FOR SYSTEM_TIME AS OF a table that is
    no changelog; a changelog's is an event-time temporal join, `connector.planning.operators.temporal`)."""
    return ref.args.get("version") is not None and not is_versioned(ref, pipeline)


def is_versioned(ref: exp.Table, pipeline: Pipeline) -> bool:
    """Whether the table reference is the versioned side of an event-time temporal join: FOR SYSTEM_TIME AS OF a
    changelog table (upsert-kafka, a CDC format)."""
    table = pipeline.table(ref.name) if ref.args.get("version") is not None else None
    return table is not None and registry.reads_changelog(table)


def lookup_tables(pipeline: Pipeline, query: exp.Query) -> list[Table]:
    """The tables `query` looks up (not through views: a view's query cannot look up here)."""
    found: dict[str, Table] = {}
    for ref in query.find_all(exp.Table):
        table = pipeline.table(ref.name)
        if table is not None and is_lookup(ref, pipeline):
            found.setdefault(table.name.lower(), table)
    return list(found.values())


def lookup_problem(pipeline: Pipeline, ref: exp.Table) -> str | None:
    """Why the lookup join of `ref` cannot run here, or None."""
    version = ref.args["version"]
    time = version.expression
    join = ref.parent
    if not isinstance(join, exp.Join) or join.side not in ("", "LEFT") or join.kind not in ("", "INNER", "OUTER"):
        return f"FOR SYSTEM_TIME AS OF on '{ref.name}': a lookup join is a JOIN or LEFT JOIN ... ON."
    if not isinstance(time, exp.Column) or not _is_proctime(pipeline, ref, time):
        return (
            f"FOR SYSTEM_TIME AS OF {time.sql(dialect='flink')}: only a processing-time attribute of the joined "
            f"stream (a column AS PROCTIME()) makes a lookup join of '{ref.name}'; an event-time temporal join "
            "(AS OF the stream's rowtime) is against a versioned table: a changelog (upsert-kafka, a CDC format) "
            "with a PRIMARY KEY and a WATERMARK."
        )
    return None


def _is_proctime(pipeline: Pipeline, ref: exp.Table, time: exp.Column) -> bool:
    select = ref.find_ancestor(exp.Select)
    if select is None:
        return False
    for other in select.find_all(exp.Table):
        if other is ref or other.args.get("version") is not None:
            continue
        if time.table and time.table.lower() not in (other.alias_or_name.lower(), other.name.lower()):
            continue
        table = pipeline.table(other.name)
        column = table.column(time.name) if table is not None else None
        expression = column.expression if column is not None else None
        if isinstance(expression, exp.Anonymous) and expression.name.upper() == "PROCTIME":
            return True
    return False
