"""The checker of a pipeline's queries and tables: what each FROM item lets a query see (tables, views, CTEs,
window TVFs, table functions), column references and their types, casts and calls. `validator` runs it over every
statement; `inserts` adds what an INSERT asks of its sink."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from sqlglot import exp

from connector.catalog.model import ColumnKind, Function, Pipeline, Table
from connector.catalog.types import (
    NUMERIC_RANK,
    TYPE_FAMILIES,
    CastSupport,
    assignable,
    cast_support,
    flink_sql,
    type_family,
)
from connector.connectors import registry
from connector.diagnostics import Diagnostic, Position, did_you_mean
from connector.sql.dialect.expressions import WindowTVF
from connector.sql.rewrite import annotate
from connector.sql.rewrite.annotate import infer_type
from connector.sql.rewrite.functions.builtins import no_paren_call
from connector.sql.rewrite.nodes import call_name
from connector.sql.validate import row_fields
from connector.sql.validate.calls import miscounted_calls, spark_only_calls, unknown_calls
from connector.sql.validate.scope import output_name, own_columns, own_nodes, unique, using, values_columns

Locate = Callable[[exp.Expr, Position], Position]
Columns = dict[str, exp.DataType | None]

WINDOW_COLUMNS = ("window_start", "window_end", "window_time")


@dataclass
class Relation:
    """Columns visible from one FROM item, with types where known."""

    name: str
    columns: dict[str, exp.DataType | None]
    # Names (lower case) it has twice: a window TVF's window columns over an input that has them already.
    twice: frozenset[str] = frozenset()


class Checker:
    """One validation's state: the pipeline, where nodes are in the file, the diagnostics so far."""

    def __init__(self, pipeline: Pipeline, locate: Locate | None) -> None:
        self.pipeline = pipeline
        self.locate: Locate = locate or (lambda _node, fallback: fallback)
        self.diagnostics: list[Diagnostic] = []
        self.ctes: dict[str, Relation] = {}

    def error(self, where: Position, code: str, message: str) -> None:
        self.diagnostics.append(Diagnostic.at(where, code, message))

    def warning(self, where: Position, code: str, message: str) -> None:
        self.diagnostics.append(Diagnostic.at(where, code, message, "warning"))

    # -- tables -----------------------------------------------------------------------------------------
    def table(self, table: Table) -> None:
        self.diagnostics.extend(registry.validate_table(table))
        names = [c.name for c in table.columns]
        seen: set[str] = set()
        for col in table.columns:
            if col.name.lower() in seen:
                self.error(col.position, "duplicate", f"Column '{col.name}' is declared twice in '{table.name}'.")
            seen.add(col.name.lower())
            if col.kind is ColumnKind.COMPUTED and col.expression is not None:
                self.calls(col.expression, col.position)
                usable = [c for c in table.columns if c.kind is not ColumnKind.COMPUTED]
                holder = exp.Paren(this=col.expression)  # a ROW field access may be the whole expression
                scope = [(table.name, {c.name: c.data_type for c in usable})]
                refused = self.row_fields(holder.find_all(exp.Column), scope, col.position)
                col.expression = holder.this
                self.references(
                    col.expression, [c.name for c in usable], col.position, f"computed column '{col.name}'", refused
                )
                self.casts(col.expression.find_all(exp.Cast), {c.name: c.data_type for c in usable}, col.position)
        for key in table.primary_key:
            if table.column(key) is None:
                self.error(
                    table.position,
                    "unknown-column",
                    f"PRIMARY KEY column '{key}' does not exist in '{table.name}'."
                    + did_you_mean(key, names)
                    + f" Columns: {', '.join(names)}.",
                )
        wm = table.watermark
        if wm is not None:
            rowtime = table.column(wm.column)
            if rowtime is None:
                self.error(
                    wm.position,
                    "unknown-column",
                    f"WATERMARK FOR '{wm.column}': no such column in '{table.name}'."
                    + did_you_mean(wm.column, names)
                    + f" Columns: {', '.join(names)}.",
                )
                return  # the expression's references to the same name would only repeat this error
            if rowtime.data_type is not None and rowtime.data_type.this not in (
                TYPE_FAMILIES["timestamp"] | TYPE_FAMILIES["timestamp_ltz"]
            ):
                self.error(
                    wm.position,
                    "watermark",
                    f"WATERMARK FOR '{wm.column}': the rowtime column must be TIMESTAMP(3) or TIMESTAMP_LTZ(3), "
                    f"but it is {rowtime.type_sql}.",
                )
            self.references(wm.expression, names, wm.position, f"the watermark of '{table.name}'")

    def references(
        self, expr: exp.Expr, names: list[str], where: Position, what: str, reported: set[int] | None = None
    ) -> None:
        lowered = {n.lower() for n in names}
        for column in expr.find_all(exp.Column):
            if no_paren_call(column) is not None:  # LOCALTIMESTAMP, CURRENT_TIMESTAMP: calls without parentheses
                continue
            if column.name.lower() not in lowered and id(column) not in (reported or set()):
                self.error(
                    self.pos_of(column, where),
                    "unknown-column",
                    f"Column '{column.name}' used in {what} does not exist."
                    + did_you_mean(column.name, names)
                    + f" Columns: {', '.join(names)}.",
                )

    def casts(self, casts: Iterable[exp.Cast], columns: dict[str, exp.DataType | None], where: Position) -> None:
        """Explicit CASTs Flink rejects (its cast matrix, `connector.catalog.types.cast_support`), where the type of
        the value cast is evident; reported at that value."""
        for cast in casts:
            source = infer_type(cast.this, columns)
            if source is None or cast_support(source, cast.to) is not CastSupport.UNSUPPORTED:
                continue
            target = flink_sql(cast.to)
            hint = ""
            if source.this in NUMERIC_RANK and type_family(cast.to) in ("timestamp", "timestamp_ltz"):
                hint = " Use TO_TIMESTAMP_LTZ(value, precision) for epoch seconds or milliseconds."
            self.error(
                self.pos_of(cast, where),
                "cast",
                f"Flink cannot cast {flink_sql(source)} to {target} in '{cast.sql(dialect='flink')}'.{hint}",
            )

    def python_calls(self, calls: Iterable[exp.Expr], columns: dict[str, exp.DataType | None], where: Position) -> None:
        """Calls of the pipeline's Python functions (innermost first, so that a call's result types the call
        around it): as many arguments as the function takes, each assignable to its parameter's annotated type
        where both are evident; each call marked with its result type (`annotate.RESULT_TYPE`)."""
        for call in reversed(list(calls)):
            function = self.pipeline.functions.get(call.name.lower())
            if function is None:
                continue
            self.python_call(call, function, columns, where)
            if not function.table:
                call.meta[annotate.RESULT_TYPE] = function.result_type

    def python_call(
        self, call: exp.Expr, function: Function, columns: dict[str, exp.DataType | None], where: Position
    ) -> None:
        arguments = list(call.expressions)
        types = [infer_type(a, columns) for a in arguments]
        shown = f"{function.name}({', '.join('?' if t is None else flink_sql(t) for t in types)})"
        names = ", ".join(n for n, _ in function.parameters) + (", *args" if function.variadic else "")
        count, least, most = len(arguments), function.required, len(function.parameters)
        if count < least or (count > most and not function.variadic):
            takes = f"at least {least}" if function.variadic else f"{least}" if least == most else f"{least} to {most}"
            self.error(
                self.pos_of(call, where),
                "invalid-call",
                f"Invalid function call: {shown}: Python function '{function.identifier}' takes {takes} "
                f"argument{'' if takes == '1' else 's'} ({names}), the call gives {count}.",
            )
            return
        for i, ((name, annotated), given) in enumerate(zip(function.parameters, types, strict=False), start=1):
            if annotated is None or given is None:
                continue
            expected = exp.DataType.build(annotated, dialect="flink")
            if not assignable(given, expected):
                self.error(
                    self.pos_of(call.expressions[i - 1], where),
                    "invalid-call",
                    f"Invalid function call: {shown}: argument {i} is {flink_sql(given)}, but parameter '{name}' of "
                    f"Python function '{function.identifier}' takes {annotated} (its annotation). Add a CAST.",
                )

    # -- queries ----------------------------------------------------------------------------------------
    def relation(self, name: str, where: Position) -> Relation | None:
        if name.lower() in self.ctes:
            return self.ctes[name.lower()]
        table = self.pipeline.table(name)
        if table is not None:
            return Relation(table.name, {c.name: c.data_type for c in table.columns})
        view = self.pipeline.view(name)
        if view is not None:
            cols = self.output_columns(view.query, view.position)
            if view.columns:
                cols = dict(zip(view.columns, cols.values(), strict=False))
            return Relation(view.name, cols)
        known = [t.name for t in self.pipeline.tables.values()] + [v.name for v in self.pipeline.views.values()]
        self.error(
            where,
            "unknown-table",
            f"Table or view '{name}' is not defined."
            + did_you_mean(name, known)
            + (f" Defined: {', '.join(sorted(known))}." if known else ""),
        )
        return None

    def source_relations(self, select: exp.Select, where: Position) -> list[tuple[str, Relation]] | None:
        """(alias, relation) for each FROM/JOIN item of one SELECT; None when some source is unknown."""
        items: list[exp.Expr] = []
        from_ = select.args.get("from_")
        if from_ is not None:
            items.append(from_.this)
        items.extend(j.this for j in select.args.get("joins") or [])
        out: list[tuple[str, Relation]] = []
        ok = True
        for item in items:
            rel = self.from_item(item, where)
            if rel is None:
                ok = False
                continue
            named = (exp.Table, exp.Subquery, exp.Unnest, exp.Lateral)
            alias = item.alias_or_name if isinstance(item, named) else (item.alias or rel.name)  # a TVF's AS t
            out.append((alias or rel.name, rel))
        return out if ok else None

    def from_item(self, item: exp.Expr, where: Position) -> Relation | None:
        tvf = item if isinstance(item, WindowTVF) else None
        if tvf is not None:
            inner = tvf.this
            base = self.from_item(inner, where) if inner is not None else None
            if base is None:
                return None
            cols = dict(base.columns)
            timecol = tvf.args.get("timecol")
            # Flink: window_start and window_end TIMESTAMP(3), window_time the time attribute's type
            rowtime = next((t for n, t in base.columns.items() if timecol is not None and n == timecol.name), None)
            for name in WINDOW_COLUMNS:
                cols[name] = exp.DataType.build("TIMESTAMP(3)")
            cols["window_time"] = rowtime or cols["window_time"]
            if timecol is not None and timecol.name not in base.columns:
                self.error(
                    self.pos_of(timecol, where),
                    "unknown-column",
                    f"DESCRIPTOR({timecol.name}): no such column in '{base.name}'."
                    + did_you_mean(timecol.name, list(base.columns))
                    + f" Columns: {', '.join(base.columns)}.",
                )
            twice = frozenset(n for n in WINDOW_COLUMNS if n in {c.lower() for c in base.columns})
            return Relation(base.name, cols, twice)
        if isinstance(item, exp.Table) and isinstance(item.this, exp.Identifier):
            return self.relation(item.name, self.pos_of(item, where))
        if isinstance(item, exp.Subquery) and isinstance(item.this, exp.Query):
            return Relation(item.alias_or_name or "subquery", self.output_columns(item.this, where))
        if isinstance(item, exp.Values):
            alias = item.args.get("alias")
            inferred = list(values_columns(item).items())
            if alias is not None and alias.columns:
                inferred = [(c.name, t) for c, (_, t) in zip(alias.columns, inferred, strict=False)]
            return Relation(item.alias_or_name or "values", dict(inferred))
        if isinstance(item, exp.Unnest):
            alias = item.args.get("alias")
            names = [c.name for c in alias.columns] if alias is not None and alias.columns else ["col"]
            return Relation(item.alias_or_name or "unnest", dict.fromkeys(names))
        if isinstance(item, exp.Lateral) and isinstance(item.this, exp.TableFromRows):
            return self.table_function(item, item.this.this, where)
        return Relation("?", {})

    def table_function(self, item: exp.Lateral, call: exp.Expr, where: Position) -> Relation | None:
        """The columns of `LATERAL TABLE(f(...)) [AS T(a, b)]`: the table function's (f0, f1, ... unless named)."""
        function = self.pipeline.functions.get(call.name.lower()) if isinstance(call, exp.Anonymous) else None
        if function is None and any(unknown_calls(call, self.pipeline.functions)):
            return None  # no function of that name at all: `calls` says so
        if function is None or not function.table:
            self.error(
                self.pos_of(call, where),
                "unknown-function",
                f"LATERAL TABLE needs a table function: '{call.name or call_name(call)}' is not one. Declare a Python "
                "generator that yields rows with CREATE FUNCTION name AS 'module.function' LANGUAGE PYTHON.",
            )
            return None
        fields = [(f.name, f.args.get("kind")) for f in function.result_type.expressions]
        alias = item.args.get("alias")
        names = [c.name for c in alias.columns] if alias is not None and alias.columns else [n for n, _ in fields]
        if len(names) != len(fields):
            self.error(
                self.pos_of(item, where),
                "invalid-alias",
                f"List of column aliases must have same degree as table; table function '{function.name}' has "
                f"{len(fields)} columns ({', '.join(n for n, _ in fields)}), whereas the alias list has "
                f"{len(names)}.",
            )
            return None
        types = {
            name: kind if isinstance(kind, exp.DataType) else None
            for name, (_, kind) in zip(names, fields, strict=True)
        }
        return Relation(item.alias_or_name or function.name, types)

    def calls(self, tree: exp.Expr, where: Position) -> None:
        """Every function `tree` calls is one kafka-sql runs, and one of Flink's (`connector.sql.validate.calls`), with
        as many arguments as Flink's takes."""
        for call, message in unknown_calls(tree, self.pipeline.functions):
            self.error(self.pos_of(call, where), "unknown-function", message)
        for miscounted, message in miscounted_calls(tree, self.pipeline.functions):
            self.error(self.pos_of(miscounted, where), "argument-count", message)
        for spark_only, message in spark_only_calls(tree, self.pipeline.functions):
            self.warning(self.pos_of(spark_only, where), "spark-only-function", message)

    def pos_of(self, node: exp.Expr, fallback: Position) -> Position:
        return self.locate(node, fallback)

    def output_columns(self, query: exp.Query, where: Position) -> dict[str, exp.DataType | None]:
        """Check a query's references and return its output columns with inferred types."""
        outer = dict(self.ctes)
        try:
            # A WITH item is visible in its query only (and shadows a table of the same name there).
            for cte in query.ctes:
                self.ctes[cte.alias.lower()] = Relation(cte.alias, self.output_columns(cte.this, where))
            if isinstance(query, exp.SetOperation):
                left = self.output_columns(query.left, where)
                self.output_columns(query.right, where)
                return left
            if isinstance(query, exp.Subquery):
                return self.output_columns(query.this, where)
            if isinstance(query, exp.Values):
                return values_columns(query)
            if isinstance(query, exp.Select):
                return self.select_columns(query, where)
            return {}
        finally:
            self.ctes = outer

    def select_columns(self, query: exp.Select, where: Position) -> dict[str, exp.DataType | None]:
        sources = self.source_relations(query, where)
        if sources is None:
            return {}
        visible: dict[str, exp.DataType | None] = {}
        for _, rel in sources:
            visible.update(rel.columns)
        by_alias = {alias.lower(): rel for alias, rel in sources}
        aliases = {s.alias.lower() for s in query.selects if isinstance(s, exp.Alias)}
        refused = self.row_fields(own_columns(query), [(alias, rel.columns) for alias, rel in sources], where)
        for column in own_columns(query):
            if id(column) in refused:
                continue
            qualifier = column.table
            if qualifier:
                qualified = by_alias.get(qualifier.lower())
                if qualified is None:
                    self.error(
                        self.pos_of(column, where),
                        "unknown-table",
                        f"Unknown table alias '{qualifier}' in '{column.sql()}'.",
                    )
                    continue
                if column.name.lower() not in {c.lower() for c in qualified.columns}:
                    self.error(
                        self.pos_of(column, where),
                        "unknown-column",
                        f"Column '{column.name}' not found in '{qualifier}'."
                        + did_you_mean(column.name, list(qualified.columns))
                        + f" Columns: {', '.join(qualified.columns)}.",
                    )
                elif column.name.lower() in qualified.twice:
                    self.ambiguous(column, [qualifier], where)
                continue
            if column.name.lower() in aliases:
                continue
            if column.name.lower() in {c.lower() for c in visible}:
                holders = [a for a, rel in sources if column.name.lower() in {c.lower() for c in rel.columns}]
                twice = any(column.name.lower() in rel.twice for _, rel in sources)
                merged = using(query)
                if twice or (len(holders) > 1 and merged is not None and column.name.lower() not in merged):
                    self.ambiguous(column, holders, where)
                continue
            if no_paren_call(column) is not None:  # LOCALTIMESTAMP, PI: Flink's calls without parentheses
                continue
            self.error(
                self.pos_of(column, where),
                "unknown-column",
                f"Column '{column.name}' not found in any table of the FROM clause."
                + did_you_mean(column.name, list(visible))
                + (f" Columns: {', '.join(visible)}." if visible else ""),
            )
        self.casts((n for n in own_nodes(query) if isinstance(n, exp.Cast)), visible, where)
        self.python_calls((n for n in own_nodes(query) if isinstance(n, exp.Anonymous)), visible, where)
        annotate.mark(own_nodes(query), visible)
        out: dict[str, exp.DataType | None] = {}
        for i, sel in enumerate(query.selects):
            if isinstance(sel, exp.Star):
                repeated = sorted(name for _, rel in sources for name in rel.twice)
                if repeated:
                    self.ambiguous(exp.column(repeated[0]), [], self.pos_of(sel, where))
                out.update(visible)
                continue
            if isinstance(sel, exp.Column) and isinstance(sel.this, exp.Star):
                star_source = by_alias.get(sel.table.lower())
                out.update(star_source.columns if star_source else {})
                continue
            out[unique(output_name(sel, i), out)] = infer_type(sel.unalias(), visible)
        return out

    def ambiguous(self, column: exp.Column, holders: list[str], where: Position) -> None:
        """Flink refuses a column name two FROM items have (or a window TVF over an input with window columns)."""
        qualify = f"; qualify it: {', '.join(f'{h}.{column.name}' for h in holders)}" if len(holders) > 1 else ""
        self.error(
            self.pos_of(column, where),
            "ambiguous-column",
            f"Column '{column.name}' is ambiguous{qualify}." if qualify else f"Column '{column.name}' is ambiguous: "
            "the window TVF adds it to an input that has it already; rename the input's column.",
        )

    def row_fields(self, columns: Iterable[exp.Column], scope: list[tuple[str, Columns]], where: Position) -> set[int]:
        """Resolve the dotted names among `columns` as Flink does (`connector.sql.validate.row_fields`), rewriting each
        ROW
        field access into its canonical form; the ids of the columns of names Flink refuses (reported here)."""
        refused: set[int] = set()
        for reference in row_fields.references(list(columns)):
            try:
                access = row_fields.resolve(reference, scope)
            except row_fields.ResolutionError as err:
                self.error(self.pos_of(reference, where), err.code, str(err))
                refused.update(id(c) for c in reference.find_all(exp.Column))
                continue
            if access is not None:
                row_fields.canonicalize(reference, access)
        return refused

    def unsupported(self, query: exp.Expr, where: Position) -> bool:
        """Report a clause kafka-sql cannot run, once, instead of the misleading errors the other checks would give
        for it (MATCH_RECOGNIZE's pattern variables are no tables, its output columns are its measures)."""
        match = query.find(exp.MatchRecognize)
        if match is None:
            return False
        self.error(
            self.pos_of(match, where),
            "unsupported",
            "MATCH_RECOGNIZE (Flink's row pattern recognition) is not supported by kafka-sql: Spark SQL has no row "
            "pattern matching. Rewrite the pattern with OVER windows (LAG, LEAD) or a Python function.",
        )
        return True
