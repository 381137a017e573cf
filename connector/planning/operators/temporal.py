"""Event-time temporal joins: `FROM s AS o [LEFT] JOIN v FOR SYSTEM_TIME AS OF o.rowtime AS r ON o.k = r.k`.

Flink joins each row of the stream `s` with the version of the versioned table `v` (a changelog with a PRIMARY KEY
and a watermark: upsert-kafka, a CDC format) that was valid at the row's event time: the latest version of its key
at or before it, none when that version is a delete. It emits a row once the watermarks of both inputs pass its
time. Spark has no such join: the transpiler cuts the join out as a view `__temporal_<n>` whose columns are both
sides' columns named `<alias>__<column>`, and the engine defines it with a stateful operator
(`connector.runtime.operators.temporal`). The query must name its columns with their side's alias, and join on
equalities
that cover the versioned table's PRIMARY KEY.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from connector.catalog.model import Pipeline
from connector.sql.rewrite.nodes import TranspileError


@dataclass
class TemporalJoin:
    """The stream `left` (its rowtime `left_time`) joined with the versioned `right` (rowtime `right_time`) on
    `keys` (left column, right column), read by the query as view `view`."""

    view: str
    left: str
    left_alias: str
    left_time: str
    right: str
    right_alias: str
    right_time: str
    keys: list[tuple[str, str]]
    outer: bool


def column_name(alias: str, column: str) -> str:
    """The view's name of a side's column."""
    return f"{alias}__{column}"


def temporal_problem(pipeline: Pipeline, ref: exp.Table) -> str | None:
    """Why the event-time temporal join of the versioned table `ref` cannot run here, or None."""
    table = pipeline.table(ref.name)
    join, select = ref.parent, ref.find_ancestor(exp.Select)
    if table is None or not isinstance(join, exp.Join) or select is None:
        return None
    if join.side not in ("", "LEFT") or join.kind not in ("", "INNER", "OUTER"):
        return f"FOR SYSTEM_TIME AS OF on '{ref.name}': a temporal join is a JOIN or LEFT JOIN ... ON."
    source = select.args["from_"].this if select.args.get("from_") else None
    stream = pipeline.table(source.name) if isinstance(source, exp.Table) else None
    if stream is None or not isinstance(source, exp.Table) or len(select.args.get("joins") or []) != 1:
        return f"A temporal join of '{ref.name}' is supported joining one table read directly (FROM t AS o JOIN ...)."
    time = ref.args["version"].expression
    rowtime = stream.watermark.column.lower() if stream.watermark is not None else None
    if not isinstance(time, exp.Column) or time.name.lower() != rowtime:
        return (
            f"FOR SYSTEM_TIME AS OF {time.sql(dialect='flink')}: an event-time temporal join of '{ref.name}' is "
            f"AS OF the rowtime (the WATERMARK column) of '{stream.name}'."
        )
    if not table.primary_key or table.watermark is None:
        return (
            f"The versioned table '{table.name}' of a temporal join needs a PRIMARY KEY and a WATERMARK, as in Flink."
        )
    aliases = {source.alias_or_name.lower(), ref.alias_or_name.lower()}
    unqualified = [c.name for c in select.find_all(exp.Column) if (c.table or "").lower() not in aliases]
    if unqualified:
        return (
            f"Name the columns of a temporal join with their table's alias ({', '.join(sorted(aliases))}): "
            f"{', '.join(unqualified)}."
        )
    keys = join_keys(join, source.alias_or_name, ref.alias_or_name)
    if keys is None or not {k.lower() for k in table.primary_key} <= {r.lower() for _, r in keys}:
        return (
            f"A temporal join's ON is equalities between the two tables' columns that cover the PRIMARY KEY of "
            f"'{table.name}' ({', '.join(table.primary_key)}), as in Flink."
        )
    return None


def join_keys(join: exp.Join, left: str, right: str) -> list[tuple[str, str]] | None:
    """(left column, right column) of each `l.x = r.y` of the ON condition; None when it holds anything else."""
    on = join.args.get("on")
    conditions = list(on.flatten()) if isinstance(on, exp.And) else [on]
    keys = []
    for condition in conditions:
        if not isinstance(condition, exp.EQ):
            return None
        a, b = condition.this, condition.expression
        if not (isinstance(a, exp.Column) and isinstance(b, exp.Column)):
            return None
        if a.table.lower() == right.lower():
            a, b = b, a
        if a.table.lower() != left.lower() or b.table.lower() != right.lower():
            return None
        keys.append((a.name, b.name))
    return keys or None


def extract(select: exp.Select, watermarks: dict[str, str], number: int) -> TemporalJoin | None:
    """Cut the temporal join (validated by `temporal_problem`) out of `select`, which then reads view
    `__temporal_<number>`; None when `select` has none. `watermarks` maps relations to their rowtime."""
    joins = select.args.get("joins") or []
    ref = joins[0].this if len(joins) == 1 else None
    if not isinstance(ref, exp.Table) or ref.args.get("version") is None or ref.name.lower() not in watermarks:
        return None
    source = select.args["from_"].this
    left_alias, right_alias = source.alias_or_name, ref.alias_or_name
    keys = join_keys(joins[0], left_alias, right_alias)
    if not isinstance(source, exp.Table) or keys is None or source.name.lower() not in watermarks:
        raise TranspileError("This temporal join cannot run here.", joins[0])
    view = f"__temporal_{number}"
    join = TemporalJoin(
        view, source.name, left_alias, watermarks[source.name.lower()], ref.name, right_alias,
        watermarks[ref.name.lower()], keys, joins[0].side == "LEFT",
    )  # fmt: skip
    for column in list(select.find_all(exp.Column)):
        if column.table.lower() in (left_alias.lower(), right_alias.lower()):
            side = left_alias if column.table.lower() == left_alias.lower() else right_alias
            column.replace(exp.column(column_name(side, column.name), quoted=True))
    select.set("joins", None)
    select.set("from_", exp.From(this=exp.Table(this=exp.to_identifier(view))))
    return join
