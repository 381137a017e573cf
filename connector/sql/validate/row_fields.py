"""ROW field access, resolved as Flink's validator (Calcite) resolves a dotted name.

sqlglot reads `a.b.c.d` as a column `d` of table `c` in schema `b` of catalog `a` (and longer names as `exp.Dot`
over such a column); Flink reads the same name against the FROM clause's scope:

* when its first part names a FROM item (alias, or table name when not aliased) that has a column named by the
  second part, that column of that item and the rest as its fields (`s.info.addr.city`);
* else, when that FROM item has a column named like the item itself, that column and the rest as fields (table
  `addr` with a ROW column `addr`: `addr.city`);
* else, when the first part names a FROM item, an error: the item has no such column;
* else the first part is a column of one FROM item and the rest are its fields (`info.addr.city`).

Checked against Flink 2.3 (`tests/conformance/cases/row_fields*.sql`). A resolved access is rewritten into one
canonical form, the column qualified by its FROM item where the name gave one and an `exp.Dot` per field, so that
every later layer (planning, the transpiler, Spark's analyzer) sees the same column and fields Flink saw.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from sqlglot import exp

from connector.diagnostics import did_you_mean
from connector.errors import KafkaSqlError

Columns = Mapping[str, exp.DataType | None]


@dataclass(frozen=True)
class FieldAccess:
    """A ROW column (of FROM item `qualifier`, when the name gave it) and the fields read from it, outermost first."""

    qualifier: exp.Identifier | None
    column: exp.Identifier
    fields: tuple[exp.Identifier, ...]

    def expression(self) -> exp.Expr:
        """The canonical tree: `qualifier.column` and one `exp.Dot` per field."""
        node: exp.Expr = exp.Column(this=self.column.copy(), table=self.qualifier.copy() if self.qualifier else None)
        for field in self.fields:
            node = exp.Dot(this=node, expression=field.copy())
        return node


class ResolutionError(KafkaSqlError):
    """A dotted name Flink would not resolve; the message says why, as Flink's validator does."""

    def __init__(self, message: str, code: str = "unknown-column") -> None:
        super().__init__(message)
        self.code = code


def references(nodes: Iterable[exp.Expr]) -> list[exp.Expr]:
    """The dotted names among `nodes`: a column of two or more parts, or the outermost `exp.Dot` chain over a
    column (five or more parts)."""
    found: list[exp.Expr] = []
    for node in nodes:
        if not isinstance(node, exp.Column) or isinstance(node.this, exp.Star):
            continue
        top: exp.Expr = node
        while isinstance(top.parent, exp.Dot) and top.arg_key == "this":
            top = top.parent
        if top is not node or node.table:
            found.append(top)
    return found


def parts(reference: exp.Expr) -> list[exp.Identifier]:
    """The identifiers of a dotted name, first to last."""
    if isinstance(reference, exp.Dot):
        inner = parts(reference.this)
        field = reference.expression
        return [*inner, field if isinstance(field, exp.Identifier) else exp.to_identifier(field.name)]
    assert isinstance(reference, exp.Column)
    names = [reference.args.get(key) for key in ("catalog", "db", "table", "this")]
    return [n if isinstance(n, exp.Identifier) else exp.to_identifier(n.name) for n in names if n is not None]


def _lookup(columns: Columns, name: str) -> str | None:
    return next((c for c in columns if c.lower() == name.lower()), None)


def resolve(reference: exp.Expr, relations: Sequence[tuple[str, Columns]]) -> FieldAccess | None:
    """How Flink reads the dotted name `reference` in a scope of FROM items (alias, their columns); None when it
    is no ROW field access (`t.col`); ResolutionError when Flink would refuse it."""
    names = parts(reference)
    first, rest = names[0], names[1:]
    holder = next((cols for alias, cols in relations if alias.lower() == first.name.lower()), None)
    if holder is not None:
        if rest and _lookup(holder, rest[0].name) is not None:
            access, columns = FieldAccess(first, rest[0], tuple(rest[1:])), holder
        elif _lookup(holder, first.name) is not None:
            access, columns = FieldAccess(first, first, tuple(rest)), holder
        elif len(rest) < 2:
            return None  # `t.col` of an unknown column: the caller reports it as for any qualified column
        else:
            raise ResolutionError(
                f"Column '{rest[0].name}' not found in table '{first.name}'."
                + did_you_mean(rest[0].name, list(holder))
                + f" Columns: {', '.join(holder)}."
            )
    else:
        holders = [(alias, cols) for alias, cols in relations if _lookup(cols, first.name) is not None]
        if not holders and len(names) > 2:
            raise ResolutionError(
                f"Unknown table alias or column '{first.name}' in '{'.'.join(n.name for n in names)}'.", "unknown-table"
            )
        if not holders:
            return None  # not a column either: the caller reports the unknown table alias
        if len(holders) > 1:
            qualify = ", ".join(f"{alias}.{'.'.join(n.name for n in names)}" for alias, _ in holders)
            raise ResolutionError(f"Column '{first.name}' is ambiguous; qualify it: {qualify}.")
        access, columns = FieldAccess(None, first, tuple(rest)), holders[0][1]
    if not access.fields:
        return None
    name = _lookup(columns, access.column.name)
    assert name is not None
    field_type(columns[name], [name], access.fields)
    return access


def field_type(
    row: exp.DataType | None, path: list[str], fields: Sequence[exp.Identifier]
) -> exp.DataType | None:
    """The type of `fields` read from a value of type `row` (named `path`); None when a type along the way is
    unknown; ResolutionError when a field does not exist or a value read from is no ROW."""
    current = row
    walked = list(path)
    for field in fields:
        if current is None:
            return None
        if current.this != exp.DataType.Type.STRUCT:
            raise ResolutionError(
                f"'{'.'.join(walked)}' is {current.sql(dialect='flink')}, not a ROW: it has no field '{field.name}'."
            )
        members = {member.name: member for member in current.expressions}
        found = next((m for n, m in members.items() if n.lower() == field.name.lower()), None)
        if found is None:
            raise ResolutionError(
                f"Field '{field.name}' not found in ROW column '{'.'.join(walked)}'."
                + did_you_mean(field.name, list(members))
                + f" Fields: {', '.join(members)}."
            )
        walked.append(field.name)
        kind = found.args.get("kind")
        current = kind if isinstance(kind, exp.DataType) else None
    return current


def canonicalize(reference: exp.Expr, access: FieldAccess) -> exp.Expr:
    """Replace `reference` in its tree by the canonical form of `access`; the new node."""
    canonical = access.expression()
    canonical.meta.update(reference.meta)
    if reference.parent is None:
        return canonical
    return reference.replace(canonical)
