"""The scope of one SELECT as validation reads it: its own nodes and column references (not those of nested
queries), its output names as Flink names them, and the columns a JOIN ... USING merges."""

from __future__ import annotations

from collections.abc import Iterable

from sqlglot import exp

from connector.sql.dialect.expressions import WindowTVF
from connector.sql.rewrite.annotate import infer_type


def output_name(sel: exp.Expr, index: int) -> str:
    """Flink's name of a projected expression: its alias, the column's name, else EXPR$<index>."""
    if isinstance(sel, exp.Alias):
        return sel.alias
    if isinstance(sel, (exp.Column, exp.Dot)):  # a ROW field access (`exp.Dot`) is named by its last field
        return sel.name
    return f"EXPR${index}"


def unique(name: str, taken: dict[str, exp.DataType | None]) -> str:
    """`name`, or Flink's renaming of a repeated output name (`v`, `v0`, `v1`, ...)."""
    lowered = {t.lower() for t in taken}
    if name.lower() not in lowered:
        return name
    suffix = 0
    while f"{name}{suffix}".lower() in lowered:
        suffix += 1
    return f"{name}{suffix}"


def using(select: exp.Select) -> set[str] | None:
    """The columns of JOIN ... USING (...), which are one column each (lower case); None with a NATURAL JOIN,
    which merges every column the sides share."""
    joins = select.args.get("joins") or []
    if any(str(j.args.get("method") or "").upper() == "NATURAL" for j in joins):
        return None
    return {i.name.lower() for j in joins for i in j.args.get("using") or []}


def own_nodes(select: exp.Select) -> Iterable[exp.Expr]:
    """The nodes of this SELECT, not of nested subqueries (those are checked on their own)."""
    return select.walk(prune=lambda n: n is not select and isinstance(n, (exp.Subquery, exp.Query)))


def own_columns(select: exp.Select) -> Iterable[exp.Column]:
    """Column references of this SELECT (`own_nodes`), but not a window TVF's DESCRIPTOR (checked against the
    TVF's input)."""
    for node in own_nodes(select):
        if isinstance(node, exp.Column) and not isinstance(node.this, exp.Star):
            if isinstance(node.parent, WindowTVF) and node.arg_key == "timecol":
                continue
            yield node


def values_columns(values: exp.Values) -> dict[str, exp.DataType | None]:
    rows = values.expressions
    if not rows:
        return {}
    first = rows[0]
    items = first.expressions if isinstance(first, exp.Tuple) else [first]
    return {f"EXPR${i}": infer_type(e, {}) for i, e in enumerate(items)}
