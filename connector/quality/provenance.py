"""Provenance of the gate's rows: the source topic, partition and offset (`__topic`, `__partition`,
`__offset`) that quarantine records and failure reports name.

They are carried from the source when the query maps each output row to one row of a single source
(`with_provenance`); otherwise they are NULL.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import sqlglot
from sqlglot import exp

from connector.connectors import reading

PROVENANCE = (reading.TOPIC, reading.PARTITION, reading.OFFSET)


def provenance_view(view: str) -> str:
    """Name of the temporary view of `view`'s rows with the provenance columns."""
    return f"__dq_{view}"


def with_provenance(spark_sql: str, views: Mapping[str, Sequence[str]]) -> str | None:
    """`spark_sql` reading its source view through `provenance_view(...)` and returning the provenance columns
    last, when each output row comes from one row of one source view (a projection / filter of one source);
    None otherwise. `views` maps each source view to its columns, which expand `*`."""
    try:
        tree = sqlglot.parse_one(spark_sql, read="spark")
    except sqlglot.errors.ParseError:
        return None
    if not isinstance(tree, exp.Select) or any(
        tree.args.get(key) for key in ("joins", "group", "having", "distinct", "with_", "laterals", "windows")
    ):
        return None
    if any(s.find(exp.AggFunc, exp.Window) is not None for s in tree.selects):
        return None
    from_ = tree.args.get("from_")
    table = from_.this if from_ is not None else None
    by_name = {name.lower(): (name, columns) for name, columns in views.items()}
    if not isinstance(table, exp.Table) or table.db or table.name.lower() not in by_name:
        return None
    view, columns = by_name[table.name.lower()]
    alias = table.alias_or_name
    selects: list[exp.Expr] = []
    for select in tree.selects:
        if isinstance(select, exp.Star) or (isinstance(select, exp.Column) and isinstance(select.this, exp.Star)):
            selects += [exp.column(c, table=alias, quoted=True) for c in columns]
        else:
            selects.append(select)
    selects += [exp.alias_(exp.column(c, table=alias, quoted=True), c, quoted=True) for c in PROVENANCE]
    tree.set("expressions", selects)
    if not table.alias:
        table.set("alias", exp.TableAlias(this=exp.to_identifier(table.name, quoted=True)))
    table.set("this", exp.to_identifier(provenance_view(view), quoted=True))
    return tree.sql(dialect="spark")
