"""Lookup joins: `JOIN dim FOR SYSTEM_TIME AS OF s.proc_time AS d ON ...`, Flink's processing-time temporal join.

Flink looks each stream row up in the table (a LookupTableSource, e.g. jdbc) when the row arrives. Here the table
is a static relation of a stream-static join, which Spark reads again for every micro-batch: each row sees the
table as it was when its micro-batch ran, which is processing time at micro-batch granularity. The time given must
be a processing-time attribute (a computed column `AS PROCTIME()`) of the joined stream; an event-time temporal
join (against a versioned table) is not supported yet.
"""

from __future__ import annotations

from sqlglot import exp

from connector.sql.catalog import Pipeline, Table


def is_lookup(ref: exp.Table) -> bool:
    """Whether the table reference is the looked-up side of a temporal join (FOR SYSTEM_TIME AS OF)."""
    return ref.args.get("version") is not None


def lookup_tables(pipeline: Pipeline, query: exp.Query) -> list[Table]:
    """The tables `query` looks up (not through views: a view's query cannot look up here)."""
    found: dict[str, Table] = {}
    for ref in query.find_all(exp.Table):
        table = pipeline.table(ref.name)
        if table is not None and is_lookup(ref):
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
            "(against a versioned table) is not supported yet."
        )
    return None


def _is_proctime(pipeline: Pipeline, ref: exp.Table, time: exp.Column) -> bool:
    select = ref.find_ancestor(exp.Select)
    if select is None:
        return False
    for other in select.find_all(exp.Table):
        if other is ref or is_lookup(other):
            continue
        if time.table and time.table.lower() not in (other.alias_or_name.lower(), other.name.lower()):
            continue
        table = pipeline.table(other.name)
        column = table.column(time.name) if table is not None else None
        expression = column.expression if column is not None else None
        if isinstance(expression, exp.Anonymous) and expression.name.upper() == "PROCTIME":
            return True
    return False
