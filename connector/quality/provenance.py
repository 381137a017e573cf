"""Provenance of rows: the source topic, partition and offset (`__topic`, `__partition`, `__offset`) that the
gate's quarantine records and failure reports name, and a failing Python function's error.

They are carried from the source when the query maps each output row to one row of a single source
(`with_provenance`); otherwise they are NULL. A Python function called on one source's rows gets its row's
position as three more arguments (`with_located_calls`).
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
    _read_provenance_view(tree, table, *by_name[table.name.lower()])
    alias = table.alias_or_name
    provenance = [exp.alias_(exp.column(c, table=alias, quoted=True), c, quoted=True) for c in PROVENANCE]
    tree.set("expressions", [*tree.selects, *provenance])
    return tree.sql(dialect="spark")


def with_located_calls(spark_sql: str, views: Mapping[str, Sequence[str]], functions: Mapping[str, str]) -> str:
    """`spark_sql` with each call of a Python function of `functions` (SQL name -> the name of its variant that
    takes the row's topic, partition and offset as three more arguments) replaced by its variant, where the call
    runs on rows of one source view of `views` (its columns, which expand `*`): a query block reading that view
    alone or joined with table functions' rows (`LATERAL f(x)`, themselves called so), switched to its provenance
    view or already reading it, the call outside aggregates or inside an aggregate's argument. Other calls are
    left as they are."""
    variants = {name.lower(): variant for name, variant in functions.items()}
    if not variants:
        return spark_sql
    try:
        tree = sqlglot.parse_one(spark_sql, read="spark")
    except sqlglot.errors.ParseError:
        return spark_sql
    by_name = {name.lower(): (name, columns) for name, columns in views.items()}
    read_with_provenance = {provenance_view(name).lower() for name in views}
    changed = False
    for block in list(tree.find_all(exp.Select)):
        calls = [
            call
            for call in block.find_all(exp.Anonymous)
            if call.name.lower() in variants and call.find_ancestor(exp.Select) is block
        ]
        from_ = block.args.get("from_")
        table = from_.this if from_ is not None else None
        joins = block.args.get("joins") or []
        if not calls or block.args.get("laterals") or not isinstance(table, exp.Table):
            continue
        # joined with table functions' rows only (LATERAL f(x)), each row still comes from one record
        star = any(isinstance(s, exp.Star) for s in block.selects)
        if joins and (star or not all(isinstance(j.this, exp.Lateral) for j in joins)):
            continue
        if table.db or (table.name.lower() not in by_name and table.name.lower() not in read_with_provenance):
            continue
        if block.args.get("group") or any(s.find(exp.AggFunc, exp.Window) for s in block.selects):
            # an aggregating block: only an aggregate's argument is evaluated per row
            calls = [c for c in calls if isinstance(c.find_ancestor(exp.AggFunc, exp.Select), exp.AggFunc)]
        if not calls:
            continue
        if table.name.lower() in by_name:
            _read_provenance_view(block, table, *by_name[table.name.lower()])
        position = [exp.column(c, table=table.alias_or_name, quoted=True) for c in PROVENANCE]
        replaced = {id(call) for call in calls}
        selects = []
        for select in block.selects:  # an unnamed result keeps the name Spark gives it
            if not isinstance(select, exp.Alias) and any(id(c) in replaced for c in select.find_all(exp.Anonymous)):
                select = exp.alias_(select, select.sql(dialect="spark"), quoted=True, copy=False)
            selects.append(select)
        block.set("expressions", selects)
        for call in calls:
            call.set("this", variants[call.name.lower()])
            call.set("expressions", [*call.expressions, *(p.copy() for p in position)])
        changed = True
    return tree.sql(dialect="spark") if changed else spark_sql


def _read_provenance_view(block: exp.Select, table: exp.Table, view: str, columns: Sequence[str]) -> None:
    """Make `block` read `table` (source view `view`) from its provenance view, under the same alias, its stars
    expanded into `columns` so that it returns the columns it returned."""
    alias = table.alias_or_name
    selects: list[exp.Expr] = []
    for select in block.selects:
        if isinstance(select, exp.Star) or (isinstance(select, exp.Column) and isinstance(select.this, exp.Star)):
            selects += [exp.column(c, table=alias, quoted=True) for c in columns]
        else:
            selects.append(select)
    block.set("expressions", selects)
    if not table.alias:
        table.set("alias", exp.TableAlias(this=exp.to_identifier(table.name, quoted=True)))
    table.set("this", exp.to_identifier(provenance_view(view), quoted=True))
