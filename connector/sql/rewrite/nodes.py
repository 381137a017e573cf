"""What the Flink-to-Spark rewrite is built from: its error and small sqlglot node helpers.

`transpile`, `windows`, `functions` and `intervals` all raise `TranspileError` and build Spark nodes the
same way; keeping both here lets those modules depend on one another without import cycles.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator

import sqlglot
from sqlglot import exp

from connector.errors import KafkaSqlError
from connector.sql.dialect.flink import Flink


class TranspileError(KafkaSqlError):
    """A Flink construct with no faithful Spark equivalent; `node` is where it is written."""

    def __init__(self, message: str, node: exp.Expr | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.node = node


def fn(name: str, *args: exp.Expr) -> exp.Anonymous:
    """A call of Spark function `name`, written as is."""
    return exp.Anonymous(this=name, expressions=list(args))


def from_template(spark_sql: str, **args: exp.Expr) -> exp.Expr:
    """The Spark SQL expression `spark_sql` with each placeholder `:name` replaced by a copy of `args[name]`."""
    return _template(spark_sql).copy().transform(
        lambda node: args[node.name].copy() if isinstance(node, exp.Placeholder) else node, copy=False
    )


@functools.cache
def _template(spark_sql: str) -> exp.Expr:
    return sqlglot.parse_one(spark_sql, read="spark")


def col(name: str, table: str | None = None) -> exp.Column:
    return exp.column(name, table=table)


def struct_field(struct: exp.Expr, field: str) -> exp.Dot:
    """`struct.field`, on a copy of `struct` so the same struct can be read several times."""
    return exp.Dot(this=struct.copy(), expression=exp.to_identifier(field))


def flink_sql(node: exp.Expr) -> str:
    """`node` as written in Flink SQL, for error messages."""
    return node.sql(dialect=Flink)


def call_name(node: exp.Expr) -> str:
    """The upper-case name a Flink function call is written with."""
    if isinstance(node, exp.Anonymous):
        return str(node.this).upper()
    return node.sql_name().upper() if isinstance(node, exp.Func) else ""


def call_args(node: exp.Expr) -> list[exp.Expr]:
    """The arguments of a function call, whether sqlglot parsed it as a typed node or left it anonymous."""
    return list(node.expressions) if isinstance(node, exp.Anonymous) else [node.this, *node.expressions]


def written_args(node: exp.Expr) -> list[exp.Expr]:
    """A typed call's arguments in their written order: sqlglot keeps some under names (start, end, key, ...) that
    `call_args` does not read."""
    found: list[exp.Expr] = []
    for key in node.arg_types:
        value = node.args.get(key)
        found.extend(v for v in (value if isinstance(value, list) else [value]) if isinstance(v, exp.Expr))
    return found


def star_select(source: exp.Expr, *extra: exp.Expr, exclude: tuple[str, ...] = ()) -> exp.Select:
    """`SELECT * [EXCEPT (exclude)], extra... FROM source`: a derived table that adds columns."""
    star = exp.Star(except_=[col(c) for c in exclude]) if exclude else exp.Star()
    return exp.Select(expressions=[star, *extra]).from_(source, copy=False)


def own_nodes(select: exp.Select, kind: type[exp.Expr]) -> Iterator[exp.Expr]:
    """Nodes of `kind` that belong to `select` itself, not to a nested query."""
    for node in list(select.find_all(kind)):
        if node.find_ancestor(exp.Select) is select:
            yield node
