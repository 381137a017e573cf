"""Turn a rendered pipeline file into a `Pipeline` catalog.

Statement semantics follow Flink's SQL client running a script: statements apply in order (SET/RESET change the
session, DROP removes, `CREATE TABLE ... LIKE` merges the source table in), and every object remembers where it was
written in the *original* file (positions are mapped back through the Jinja template).

One difference: Flink submits each INSERT as its statement runs, while kafka-sql plans a file's INSERTs together
from the catalog the whole file leaves. So dropping or renaming a table or view that an earlier INSERT uses is an
error at the DROP or RENAME (the INSERT would otherwise lose its table), not something that quietly works.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeVar

from sqlglot import exp

from connector.catalog import python_udfs
from connector.catalog.model import (
    Column,
    ColumnKind,
    Expectation,
    Function,
    Insert,
    Pipeline,
    Setting,
    Table,
    TopLevelQuery,
    View,
    Watermark,
)
from connector.catalog.namespaces import Catalogs
from connector.diagnostics import Diagnostic, PipelineError, Position
from connector.sql.dialect import reserved
from connector.sql.dialect.expressions import AlterReset, ExpectConstraint, MetadataColumnConstraint, StatementSet
from connector.sql.dialect.script import ParsedStatement, node_position, parse_statements
from connector.sql.dialect.statements import reset_of, setting_of, table_option_hints

PositionMapper = Callable[[int, int], tuple[int, int]]
E = TypeVar("E", bound=exp.Expr)


def _identity(line: int, column: int) -> tuple[int, int]:
    return line, column


class _Loader:
    def __init__(self, text: str, file: str, mapper: PositionMapper) -> None:
        self.text = text
        self.file = file
        self.mapper = mapper
        self.pipeline = Pipeline(file=file)
        self.diagnostics: list[Diagnostic] = []
        self._statement_set = 0
        self.catalogs = Catalogs(self.error)

    def pos(self, line: int, column: int) -> Position:
        line, column = self.mapper(line, column)
        return Position(self.file, line, column)

    def node_pos(self, node: exp.Expr, fallback: Position) -> Position:
        found = node_position(node, self.text)
        return self.pos(*found) if found else fallback

    def locator(self) -> Callable[[exp.Expr, Position], Position]:
        return self.node_pos

    def error(self, where: Position, code: str, message: str) -> None:
        self.diagnostics.append(Diagnostic.at(where, code, message))

    # -- statements -------------------------------------------------------------------------------------
    def load(self, statements: Iterable[ParsedStatement]) -> None:
        for st in statements:
            where = self.pos(st.line, st.column)
            for identifier in reserved.unquoted_reserved(st.expression):
                at = self.node_pos(identifier, where)
                self.diagnostics.append(Diagnostic.at(at, "reserved-word", reserved.message(identifier), "warning"))
            self.statement(st.expression, where)

    def statement(self, node: exp.Expr, where: Position) -> None:
        setting = setting_of(node)
        if setting is not None:
            key, value = setting
            self.pipeline.settings[key] = Setting(key, value, where)
            return
        reset = reset_of(node)
        if reset is ...:
            self.pipeline.settings.clear()
            return
        if reset is not None:
            self.pipeline.settings.pop(reset, None)
            return
        if isinstance(node, StatementSet):
            self._statement_set += 1
            for insert in node.expressions:
                self.insert(insert, self.node_pos(insert, where), self._statement_set)
            return
        if isinstance(node, exp.Create):
            kind = (node.args.get("kind") or "").upper()
            if kind == "TABLE":
                self.create_table(node, where)
                return
            if kind == "VIEW":
                self.create_view(node, where)
                return
            if kind == "FUNCTION":
                self.create_function(node, where)
                return
            if kind == "CATALOG":
                self.catalogs.create_catalog(node, where, lambda n: self.node_pos(n, where))
                return
            if kind in ("DATABASE", "SCHEMA"):
                self.catalogs.create_database(node, where)
                return
        if isinstance(node, exp.Use):
            self.catalogs.use(node, where)
            return
        if isinstance(node, exp.Insert):
            self.insert(node, where, None)
            return
        if isinstance(node, exp.Query):
            self.top_level_query(node, where)
            return
        if isinstance(node, exp.Drop):
            self.drop(node, where)
            return
        if isinstance(node, exp.Alter) and (node.args.get("kind") or "").upper() in ("TABLE", "VIEW"):
            self.alter(node, where)
            return
        self.ignored(node, where)

    def top_level_query(self, node: exp.Query, where: Position) -> None:
        """A SELECT alone: Flink's SQL client shows its rows; here it is validated as an INSERT's query is (so a
        table it names must exist, as Flink requires) and not run, which a warning says."""
        self.pipeline.queries.append(TopLevelQuery(node, where))
        self.diagnostics.append(
            Diagnostic.at(
                where,
                "select-not-run",
                "A SELECT alone is checked as Flink checks it, but kafka-sql does not run it (Flink's SQL client "
                "shows its rows): to see them, INSERT INTO a table WITH ('connector' = 'print').",
                severity="warning",
            )
        )

    def ignored(self, node: exp.Expr, where: Position) -> None:
        """A statement that changes nothing a pipeline runs (SHOW, DESCRIBE, a bare SELECT, USE, functions)."""
        words = " ".join(node.sql(dialect="flink").split()[:2]).upper()
        self.diagnostics.append(
            Diagnostic.at(
                where,
                "ignored-statement",
                f"'{words} ...' has no effect in a kafka-sql pipeline and is ignored: only SET, RESET, "
                "CREATE/ALTER/DROP TABLE and VIEW, CREATE FUNCTION, CREATE CATALOG and DATABASE, USE, and INSERT "
                "(alone or in a STATEMENT SET) are run.",
                severity="warning",
            )
        )

    def create_function(self, node: exp.Create, where: Position) -> None:
        name = node.this.name
        properties = node.args.get("properties")
        language = next(
            (str(p.this.name).upper() for p in (properties.expressions if properties else [])
             if isinstance(p, exp.LanguageProperty)),
            "JAVA",
        )  # fmt: skip
        if language != "PYTHON":
            self.error(
                where,
                "unsupported",
                f"Function '{name}' is written in {language.title()}: kafka-sql runs Python functions only "
                "(CREATE FUNCTION ... AS 'module.function' LANGUAGE PYTHON); Java and Scala functions are classes of "
                "Flink's JVM.",
            )
            return
        if name.lower() in self.pipeline.functions:
            if not node.args.get("exists"):
                self.error(where, "duplicate", f"Function '{name}' is already declared.")
            return
        identifier = node.expression.name if isinstance(node.expression, exp.Literal) else ""
        directory = Path(self.file).resolve().parent if Path(self.file).is_file() else Path.cwd()
        try:
            function = python_udfs.resolve(identifier, [directory])
            columns = python_udfs.table_result_types(function)
            result = python_udfs.result_type(function) if columns is None else (
                f"ROW<{', '.join(f'f{i} {t}' for i, t in enumerate(columns))}>"
            )  # fmt: skip
            result_type = exp.DataType.build(result, dialect="flink")
        except python_udfs.FunctionError as err:
            self.error(where, "function", f"Function '{name}': {err}.")
            return
        except Exception as err:  # sqlglot's ParseError for a result type that is no Flink type
            self.error(where, "function", f"Function '{name}': result type is not a Flink type: {err}.")
            return
        typed, required, variadic = python_udfs.parameters(function)
        self.pipeline.functions[name.lower()] = Function(
            name, identifier, result_type, str(directory), where, columns is not None, typed, required, variadic
        )

    def create_table(self, node: exp.Create, where: Position) -> None:
        schema = node.this
        table_expr = schema.this if isinstance(schema, exp.Schema) else schema
        name = table_expr.name
        where = self.node_pos(table_expr, where)
        if self.pipeline.table(name) or self.pipeline.view(name):
            if not node.args.get("exists"):
                self.error(where, "duplicate", f"Table or view '{name}' is already defined in this file.")
            return
        table = Table(name=name, position=where)
        props = node.args.get("properties")
        like_source: Table | None = None
        like_options: list[tuple[str, str]] = []
        for prop in props.expressions if props else []:
            if isinstance(prop, exp.TemporaryProperty):
                table.temporary = True
            elif isinstance(prop, exp.SchemaCommentProperty):
                table.comment = prop.this.name
            elif isinstance(prop, exp.PartitionedByProperty):
                cols = prop.this.expressions if isinstance(prop.this, exp.Schema) else [prop.this]
                table.partitioned_by = [c.name for c in cols]
            elif isinstance(prop, exp.LikeProperty):
                src_name = prop.this.name
                like_source = self.pipeline.table(src_name)
                if like_source is None:
                    self.error(
                        self.node_pos(prop.this, where),
                        "unknown-table",
                        f"LIKE source table '{src_name}' is not defined before '{name}'." + _known(self.pipeline),
                    )
                table.like = src_name
                like_options = [(p.this.name.upper(), p.args["value"].name.upper()) for p in prop.expressions]
            elif isinstance(prop, exp.Property) and isinstance(prop.this, exp.Literal):
                key = prop.this.name
                table.options[key] = prop.args["value"].name
                table.option_positions[key] = self.node_pos(prop.this, where)
        if isinstance(schema, exp.Schema):
            for element in schema.expressions:
                self.schema_element(table, element, where)
        if like_source is not None:
            _merge_like(table, like_source, like_options)
        if isinstance(table_expr, exp.Table):
            self.catalogs.place(table, table_expr, where)
        self.pipeline.tables[name.lower()] = table
        query = node.expression
        if isinstance(query, exp.Query):  # CREATE TABLE ... AS SELECT: the table, and the query writing into it
            table.columns_from_query = not table.columns
            hints = {t.name.lower(): opts for t in query.find_all(exp.Table) if (opts := table_option_hints(t))}
            self.pipeline.inserts.append(Insert(target=name, query=_kept(query), position=where, hints=hints))

    def schema_element(self, table: Table, element: exp.Expr, where: Position) -> None:
        if isinstance(element, exp.ColumnDef):
            table.columns.append(self.column(element, where))
            for constraint in element.constraints:
                if isinstance(constraint.kind, exp.PrimaryKeyColumnConstraint):
                    table.primary_key = [element.name]
                elif isinstance(constraint.kind, ExpectConstraint):
                    self.expectation(table, constraint.this, constraint.kind, where)
        elif isinstance(element, ExpectConstraint):
            self.expectation(table, element.this, element, where)
        elif isinstance(element, exp.WatermarkColumnConstraint):
            table.watermark = Watermark(
                column=element.this.name,
                expression=_kept(element.expression),
                position=self.node_pos(element.this, where),
            )
        elif isinstance(element, exp.PrimaryKey):
            table.primary_key = [e.name for e in element.expressions]

    def expectation(
        self, table: Table, name: exp.Expr | None, node: ExpectConstraint, where: Position
    ) -> None:
        """`CONSTRAINT name EXPECT (...)`, in the column list or on a column: a named rule of the table."""
        position = self.node_pos(name if name is not None else node, where)
        if name is None:
            self.error(position, "syntax", "An expectation needs a name: CONSTRAINT <name> EXPECT (<predicate>).")
            return
        if any(e.name.lower() == name.name.lower() for e in table.expectations):
            self.error(position, "duplicate", f"Expectation '{name.name}' is declared twice in '{table.name}'.")
            return
        table.expectations.append(
            Expectation(name.name, _kept(node.expression), position, node.args.get("on_violation"))
        )

    def column(self, node: exp.ColumnDef, where: Position) -> Column:
        col = Column(name=node.name, kind=ColumnKind.PHYSICAL, position=self.node_pos(node.this, where))
        kind = node.args.get("kind")
        if isinstance(kind, exp.DataType):
            col.data_type = _kept(kind)
            col.type_sql = _type_sql(kind)
        for constraint in node.constraints:
            c = constraint.kind
            if isinstance(c, exp.NotNullColumnConstraint) and not c.args.get("allow_null"):
                col.nullable = False
            elif isinstance(c, exp.CommentColumnConstraint):
                col.comment = c.this.name
            elif isinstance(c, MetadataColumnConstraint):
                col.kind = ColumnKind.METADATA
                col.metadata_key = c.this.name if c.this is not None else node.name
                col.virtual = bool(c.args.get("virtual"))
            elif isinstance(c, exp.ComputedColumnConstraint):
                col.kind = ColumnKind.COMPUTED
                col.expression = _kept(c.this)
        return col

    def create_view(self, node: exp.Create, where: Position) -> None:
        target = node.this
        columns: list[str] | None = None
        if isinstance(target, exp.Schema):
            columns = [e.name for e in target.expressions]
            target = target.this
        name = target.name
        where = self.node_pos(target, where)
        if self.pipeline.table(name) or self.pipeline.view(name):
            if not node.args.get("exists"):
                self.error(where, "duplicate", f"Table or view '{name}' is already defined in this file.")
            return
        props = node.args.get("properties")
        temporary = bool(props and any(isinstance(p, exp.TemporaryProperty) for p in props.expressions))
        query = node.expression
        if not isinstance(query, exp.Query):
            self.error(where, "syntax", f"View '{name}' needs a query after AS.")
            return
        self.pipeline.views[name.lower()] = View(name, _kept(query), where, columns, temporary)

    def insert(self, node: exp.Insert, where: Position, statement_set: int | None) -> None:
        target = node.this
        columns: list[str] | None = None
        if isinstance(target, exp.Schema):
            columns = [e.name for e in target.expressions]
            target = target.this
        query = node.expression
        if isinstance(query, exp.Values):
            query = _select_values(query)
        if not isinstance(query, exp.Query):
            self.error(where, "syntax", "INSERT needs a SELECT or VALUES query.")
            return
        hints = {t.name.lower(): opts for t in query.find_all(exp.Table) if (opts := table_option_hints(t))}
        self.pipeline.inserts.append(
            Insert(
                target=target.name,
                query=_kept(query),
                position=self.node_pos(target, where),
                columns=columns,
                overwrite=bool(node.args.get("overwrite")),
                statement_set=statement_set,
                hints=hints,
                on_conflict=_conflict_action(node),
            )
        )

    def alter(self, node: exp.Alter, where: Position) -> None:
        """Flink's ALTER TABLE t SET (...) / RENAME TO and ALTER VIEW v AS / RENAME TO, applied in order."""
        kind = node.args["kind"].upper()
        name = node.this.name
        target: Table | View | None = self.pipeline.table(name) if kind == "TABLE" else self.pipeline.view(name)
        if target is None:
            if not node.args.get("exists"):
                self.error(
                    self.node_pos(node.this, where),
                    "unknown-table",
                    f"Cannot alter {kind.lower()} '{name}': it is not defined." + _known(self.pipeline),
                )
            return
        for action in node.args.get("actions") or []:
            if isinstance(action, exp.AlterRename):
                self.rename(target, action.this, where)
            elif isinstance(action, exp.AlterSet) and isinstance(target, Table):
                for pair in action.expressions:
                    key = pair.this.name
                    target.options[key] = pair.expression.name
                    target.option_positions[key] = self.node_pos(pair.this, where)
            elif isinstance(action, AlterReset) and isinstance(target, Table):
                self.reset_options(target, action, where)
            elif isinstance(action, exp.Query) and isinstance(target, View):
                target.query = _kept(action)
            else:
                self.error(
                    self.node_pos(action, where),
                    "unsupported",
                    f"This ALTER {kind} is not supported: only ALTER TABLE t SET ('key' = 'value', ...), "
                    f"ALTER TABLE t RESET ('key', ...), ALTER VIEW v AS <query> and RENAME TO are. Change the "
                    f"CREATE {kind} statement instead.",
                )

    def reset_options(self, table: Table, action: AlterReset, where: Position) -> None:
        """Flink's ALTER TABLE RESET: the keys go back to their defaults, except 'connector'."""
        keys = action.expressions
        if not keys:
            self.error(where, "invalid-option", "ALTER TABLE RESET does not support empty key.")
        for key in keys:
            if key.name.lower() == "connector":
                message = "ALTER TABLE RESET does not support changing 'connector'."
                self.error(self.node_pos(key, where), "invalid-option", message)
                continue
            table.options.pop(key.name, None)
            table.option_positions.pop(key.name, None)

    def rename(self, target: Table | View, new: exp.Expr, where: Position) -> None:
        if self.in_use(target.name, f"Cannot rename '{target.name}'", "rename it in its CREATE statement", where):
            return
        if self.pipeline.table(new.name) or self.pipeline.view(new.name):
            self.error(
                self.node_pos(new, where),
                "duplicate",
                f"Cannot rename '{target.name}' to '{new.name}': a table or view of that name exists.",
            )
            return
        if isinstance(target, Table):
            del self.pipeline.tables[target.name.lower()]
            self.pipeline.tables[new.name.lower()] = target
        else:
            del self.pipeline.views[target.name.lower()]
            self.pipeline.views[new.name.lower()] = target
        target.name = new.name

    def drop(self, node: exp.Drop, where: Position) -> None:
        kind = (node.args.get("kind") or "").upper()
        if kind not in ("TABLE", "VIEW"):
            self.ignored(node, where)  # DROP FUNCTION / DATABASE: nothing this file's catalog holds
            return
        registry = self.pipeline.tables if kind == "TABLE" else self.pipeline.views
        # sqlglot keeps the dropped names in `tables` (one for Flink's DROP TABLE|VIEW).
        for target in node.args.get("tables") or [node.this]:
            what = f"Cannot drop {kind.lower()} '{target.name}'"
            if target.name.lower() in registry and self.in_use(
                target.name, what, "remove this DROP", self.node_pos(target, where)
            ):
                continue
            if registry.pop(target.name.lower(), None) is None and not node.args.get("exists"):
                self.error(
                    self.node_pos(target, where),
                    "unknown-table",
                    f"Cannot drop {kind.lower()} '{target.name}': it is not defined." + _known(self.pipeline),
                )

    def in_use(self, name: str, what: str, fix: str, where: Position) -> bool:
        """Report `what` as an error when an INSERT so far writes or reads `name` (see the module notes)."""
        for insert in self.pipeline.inserts:
            if name.lower() in _used_names(self.pipeline, insert):
                self.error(
                    where,
                    "in-use",
                    f"{what}: the INSERT INTO '{insert.target}' at line {insert.position.line} uses it. kafka-sql "
                    "plans all INSERTs of a file once the whole file is read, so they would not find it; "
                    f"{fix} (a pipeline's tables exist only while it runs).",
                )
                return True
        return False


@functools.lru_cache(maxsize=1024)
def _type_sql(data_type: exp.DataType) -> str:
    """A declared type as Flink SQL text, generated once per distinct type (DataType compares by structure): a large
    file declares the same few types thousands of times."""
    return data_type.sql(dialect="flink")


def _kept(node: E) -> E:
    """`node`, cut from the statement it was parsed in: the catalog then holds only the parts it uses, not every
    statement's whole tree (reachable through the parent of each kept node; a CREATE TABLE's WITH options, say)."""
    node.parent = None
    return node


def _used_names(pipeline: Pipeline, insert: Insert) -> set[str]:
    """Lower-cased names of the tables and views `insert` writes or reads, through the views it reads."""
    used = {insert.target.lower()}
    pending: list[exp.Query] = [insert.query]
    while pending:
        query = pending.pop()
        ctes = {cte.alias_or_name.lower() for cte in query.find_all(exp.CTE)}
        for table in query.find_all(exp.Table):
            name = table.name.lower()
            if name in ctes or name in used:
                continue
            used.add(name)
            view = pipeline.views.get(name)
            if view is not None:
                pending.append(view.query)
    return used


def _select_values(values: exp.Values) -> exp.Select:
    """`VALUES (...)` as `SELECT * FROM (VALUES (...)) AS v(EXPR$0, ...)`: the query shape every later stage
    handles; the columns get Flink's names for unnamed expressions."""
    first = values.expressions[0] if values.expressions else None
    width = len(first.expressions) if isinstance(first, exp.Tuple) else 1
    columns = [exp.to_identifier(f"EXPR${i}", quoted=True) for i in range(width)]
    values.set("alias", exp.TableAlias(this=exp.to_identifier("v"), columns=columns))
    return exp.select("*").from_(values)


def _known(pipeline: Pipeline) -> str:
    names = sorted([t.name for t in pipeline.tables.values()] + [v.name for v in pipeline.views.values()])
    return f" Defined: {', '.join(names)}." if names else " No tables are defined yet."


def _merge_like(table: Table, source: Table, like_options: list[tuple[str, str]]) -> None:
    """Flink's LIKE merging; default INCLUDING ALL OVERWRITING OPTIONS (new options win over the source's)."""
    strategy = {"ALL": "INCLUDING", "OPTIONS": "OVERWRITING"}
    for how, what in like_options:
        if what == "ALL":
            strategy = {k: how for k in ("ALL", "OPTIONS", "WATERMARKS", "CONSTRAINTS", "METADATA", "GENERATED")}
        else:
            strategy[what] = how

    def includes(feature: str) -> bool:
        return strategy.get(feature, strategy.get("ALL", "INCLUDING")) != "EXCLUDING"

    own = {c.name.lower() for c in table.columns}
    inherited = []
    for col in source.columns:
        if col.name.lower() in own:
            continue
        if col.kind is ColumnKind.METADATA and not includes("METADATA"):
            continue
        if col.kind is ColumnKind.COMPUTED and not includes("GENERATED"):
            continue
        inherited.append(replace(col))
    table.columns = inherited + table.columns
    if table.watermark is None and includes("WATERMARKS"):
        table.watermark = source.watermark
    if not table.primary_key and includes("CONSTRAINTS"):
        table.primary_key = list(source.primary_key)
    if includes("CONSTRAINTS"):
        own_rules = {e.name.lower() for e in table.expectations}
        table.expectations = [e for e in source.expectations if e.name.lower() not in own_rules] + table.expectations
    if includes("OPTIONS"):
        merged = dict(source.options)
        positions = dict(source.option_positions)
        merged.update(table.options)
        positions.update(table.option_positions)
        table.options, table.option_positions = merged, positions


@dataclass
class Loaded:
    """A loaded file: its catalog, and how to find any of its query nodes in the original file."""

    pipeline: Pipeline
    locate: Callable[[exp.Expr, Position], Position]
    warnings: list[Diagnostic] = field(default_factory=list)


def load_text(text: str, file: str, mapper: PositionMapper | None = None) -> Loaded:
    """Parse and load rendered SQL text. Raises PipelineError (positions in the original file) on any error;
    warnings (statements that are ignored) come back in `Loaded.warnings`."""
    mapper = mapper or _identity
    loader = _Loader(text, file, mapper)
    syntax_errors: list[Diagnostic] = []
    try:
        # Each statement is loaded as it is parsed: its tree is then freed but for the parts the catalog keeps.
        loader.load(parse_statements(text, file, syntax_errors))
    except PipelineError as err:
        syntax_errors = err.diagnostics
    if syntax_errors:  # reported alone: the catalog of a file that does not parse would mislead
        raise PipelineError(
            Diagnostic(d.file, *mapper(d.line, d.column), d.severity, d.code, d.message) for d in syntax_errors
        ) from None
    if any(d.severity == "error" for d in loader.diagnostics):
        raise PipelineError(loader.diagnostics)
    return Loaded(loader.pipeline, loader.locator(), loader.diagnostics)


def _conflict_action(node: exp.Insert) -> str | None:
    """The strategy of an INSERT's `ON CONFLICT DO ...` clause ('NOTHING', 'ERROR', 'DEDUPLICATE'), if any."""
    conflict = node.args.get("conflict")
    action = conflict.args.get("action") if isinstance(conflict, exp.OnConflict) else None
    return action.name.split()[-1].upper() if action is not None else None
