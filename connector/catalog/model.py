"""The catalog of one pipeline file: plain typed objects the validator, explainer and engine consume.

Built from the parsed Flink statements by `connector.catalog.loader`. Queries and expressions stay sqlglot trees
(Flink dialect) so the transpiler can turn them into Spark SQL; everything else is plain data.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

from connector.diagnostics import Position

if TYPE_CHECKING:  # annotations only: the Kafka source imports this module, and sqlglot costs it ~0.1 s per process
    from sqlglot import exp


# The hidden column of an upsert-kafka table's rows that marks a tombstone (a DELETE of the row's key); it travels
# from the source (`connector.connectors.reading`) through a projection to an upsert sink.
DELETED_COLUMN = "__deleted"
# The hidden columns that tell a CDC format's UPDATE_BEFORE and UPDATE_AFTER rows from its DELETEs and INSERTs; they
# travel through a projection to a print sink, which shows Flink's row kinds (-U, +U).
UPDATE_BEFORE_COLUMN, UPDATE_AFTER_COLUMN = "__update_before", "__update_after"


class ColumnKind(Enum):
    PHYSICAL = "physical"
    METADATA = "metadata"
    COMPUTED = "computed"


@dataclass
class Column:
    """A column as Flink declares it: physical, `METADATA [FROM 'key'] [VIRTUAL]` or `AS expr`."""

    name: str
    kind: ColumnKind
    position: Position
    data_type: exp.DataType | None = None  # None only for computed columns (type derived from expr)
    type_sql: str = ""  # the declared type as Flink SQL text, e.g. "TIMESTAMP(3)"
    nullable: bool = True
    metadata_key: str | None = None  # for METADATA columns: the FROM key, or the column name
    virtual: bool = False
    expression: exp.Expr | None = None  # for computed columns
    comment: str | None = None

    @property
    def persisted(self) -> bool:
        """True when the column is part of the query-to-sink schema (Flink: not computed, not VIRTUAL)."""
        return self.kind is ColumnKind.PHYSICAL or (self.kind is ColumnKind.METADATA and not self.virtual)


@dataclass
class Watermark:
    column: str
    expression: exp.Expr
    position: Position


@dataclass
class Expectation:
    """`CONSTRAINT name EXPECT (predicate) [ON VIOLATION ...]` of a table: a data-quality rule on its rows.

    `on_violation` is 'FAIL UPDATE', 'DROP ROW', 'QUARANTINE' or None (keep the row, record the violation);
    `connector.quality.expectations` turns these, and the table's suite file, into great-expectations suites.
    """

    name: str
    predicate: exp.Expr
    position: Position
    on_violation: str | None = None


@dataclass
class Table:
    """A `CREATE TABLE`: schema plus connector options from `WITH (...)`."""

    name: str
    position: Position
    columns: list[Column] = field(default_factory=list)
    watermark: Watermark | None = None
    primary_key: list[str] = field(default_factory=list)
    options: dict[str, str] = field(default_factory=dict)
    option_positions: dict[str, Position] = field(default_factory=dict)  # key -> where the key is written
    partitioned_by: list[str] = field(default_factory=list)
    comment: str | None = None
    temporary: bool = False
    like: str | None = None  # source table of `CREATE TABLE ... LIKE src`, already merged in
    expectations: list[Expectation] = field(default_factory=list)  # in declaration order
    # CREATE TABLE ... AS SELECT without columns: they are the query's, resolved when the pipeline is validated
    columns_from_query: bool = False

    @property
    def connector(self) -> str | None:
        return self.options.get("connector")

    def column(self, name: str) -> Column | None:
        for col in self.columns:
            if col.name.lower() == name.lower():
                return col
        return None

    @property
    def physical_columns(self) -> list[Column]:
        return [c for c in self.columns if c.kind is ColumnKind.PHYSICAL]

    def option_position(self, key: str) -> Position:
        return self.option_positions.get(key, self.position)


@dataclass
class View:
    name: str
    query: exp.Query
    position: Position
    columns: list[str] | None = None
    temporary: bool = False


@dataclass
class Insert:
    """`INSERT INTO|OVERWRITE target [(cols)] query`; statement_set groups inserts of one STATEMENT SET."""

    target: str
    query: exp.Query
    position: Position
    columns: list[str] | None = None
    overwrite: bool = False
    statement_set: int | None = None
    hints: dict[str, dict[str, str]] = field(default_factory=dict)  # table -> /*+ OPTIONS(...) */
    on_conflict: str | None = None  # ON CONFLICT DO NOTHING | ERROR | DEDUPLICATE (Flink 2.3): its word


@dataclass
class TopLevelQuery:
    """A `SELECT` standing alone, which Flink's SQL client runs to the terminal: validated here, not run."""

    query: exp.Query
    position: Position


@dataclass
class Setting:
    key: str
    value: str
    position: Position


@dataclass(frozen=True)
class Function:
    """A Python function: `CREATE FUNCTION name AS 'module.function' LANGUAGE PYTHON`."""

    name: str
    identifier: str  # 'module.function'
    result_type: exp.DataType  # a table function's: ROW<f0 ..., f1 ...>, its columns
    directory: str  # where its module is looked for first (the pipeline file's directory)
    position: Position
    table: bool = False  # a table function (LATERAL TABLE), yielding rows
    # (name, Flink type of its annotation or None) per positional parameter; how many need an argument; *args
    parameters: tuple[tuple[str, str | None], ...] = ()
    required: int = 0
    variadic: bool = False


@dataclass
class Pipeline:
    """Everything one file declares, in statement order where order matters."""

    file: str
    tables: dict[str, Table] = field(default_factory=dict)  # keyed by lower-cased name
    views: dict[str, View] = field(default_factory=dict)
    inserts: list[Insert] = field(default_factory=list)
    queries: list[TopLevelQuery] = field(default_factory=list)  # top-level SELECTs
    settings: dict[str, Setting] = field(default_factory=dict)
    functions: dict[str, Function] = field(default_factory=dict)  # keyed by lower-cased name

    def table(self, name: str) -> Table | None:
        return self.tables.get(name.lower())

    def view(self, name: str) -> View | None:
        return self.views.get(name.lower())

    def setting(self, key: str, default: str | None = None) -> str | None:
        s = self.settings.get(key)
        return s.value if s else default
