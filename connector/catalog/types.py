"""Flink SQL data types mapped to Spark SQL types, and Flink's CAST rules.

Pipelines declare Flink types (parsed by the `flink` sqlglot dialect into `exp.DataType`); the engine needs
the Spark type of every column and of every `CAST(... AS <flink type>)`. Where Spark has no equal type the
mapping is lossy, and says so here (the explainer repeats these notes to users):

* CHAR(n)/VARCHAR(n): Spark STRING; the length is neither enforced nor padded.
* BINARY(n)/VARBINARY(n): Spark BINARY; the length is not enforced.
* TIME(p): Spark STRING ("HH:mm:ss[.fff]"), because Spark's TIME type is too new to rely on in
  sources and sinks. Arithmetic on TIME values is therefore not available.
* TIMESTAMP(p)/TIMESTAMP_LTZ(p): precision above 6 is truncated to microseconds. TIMESTAMP WITH TIME ZONE
  (which Flink's planner does not support) becomes Spark TIMESTAMP and loses its offset.
* MULTISET<T>: MAP<T, INT> (element -> count), as Flink itself represents it; bag semantics are lost.
* RAW('class', 'snapshot'): opaque BINARY.
* MAP keys can be NULL in Flink, never in Spark.
* NOT NULL becomes `nullable=False` on struct fields, array elements and map values (`spark_field` for
  top-level columns); Spark does not enforce it on data produced by expressions.

Spark types are named here as Spark SQL DDL text (`spark_type_ddl`), which is all that validation and the SQL the
engine runs need, so this module imports no Spark; `connector.catalog.spark_types` builds the same types as pyspark
objects for the runtime.

`cast_support` is Flink's cast matrix: `kafka-sql validate` rejects an explicit CAST that Flink rejects
(Spark would run some of them, e.g. BIGINT to TIMESTAMP) wherever the type of the value cast is evident.
"""

from __future__ import annotations

from enum import Enum
from typing import NamedTuple

from sqlglot import exp

from connector.errors import KafkaSqlError
from connector.sql.dialect.flink import Flink

DType = exp.DType

_STRINGS = {DType.CHAR, DType.VARCHAR, DType.TEXT, DType.NCHAR, DType.NVARCHAR, DType.BPCHAR}
_BINARIES = {DType.BINARY, DType.VARBINARY, DType.BLOB}
# The Spark type of each Flink type without parameters, as Spark SQL names it.
_SIMPLE: dict[DType, str] = {
    **dict.fromkeys(_STRINGS, "STRING"),
    **dict.fromkeys(_BINARIES, "BINARY"),
    DType.BOOLEAN: "BOOLEAN",
    DType.TINYINT: "TINYINT",
    DType.SMALLINT: "SMALLINT",
    DType.INT: "INT",
    DType.BIGINT: "BIGINT",
    DType.FLOAT: "FLOAT",
    DType.DOUBLE: "DOUBLE",
    DType.DATE: "DATE",
    DType.TIME: "STRING",
    DType.TIMESTAMP: "TIMESTAMP_NTZ",
    DType.TIMESTAMPNTZ: "TIMESTAMP_NTZ",
    DType.TIMESTAMPLTZ: "TIMESTAMP",
    DType.TIMESTAMPTZ: "TIMESTAMP",
    DType.NULL: "VOID",
    DType.VARIANT: "VARIANT",
}
YEAR_MONTH_FIELDS = ("YEAR", "MONTH")
DAY_TIME_FIELDS = ("DAY", "HOUR", "MINUTE", "SECOND")


class TypeMappingError(KafkaSqlError, ValueError):
    """A Flink type that has no Spark counterpart (or that the parser could not make sense of)."""


def spark_type_ddl(dt: exp.DataType) -> str:
    """The Spark type that holds the values of Flink type `dt` (see the module notes for lossy cases) as Spark SQL
    DDL text, usable in CAST, `from_json` schemas and table DDL (`spark_types.spark_type` is the pyspark object)."""
    if dt.this in _SIMPLE:
        return _SIMPLE[dt.this]
    root = _root(dt)
    if root == "DECIMAL":
        precision, scale = _decimal_params(dt)
        return f"DECIMAL({precision},{scale})"
    if root in ("INTERVAL_YEAR_MONTH", "INTERVAL_DAY_TIME"):
        start, end = interval_fields(dt)
        return f"INTERVAL {start}" if start == end else f"INTERVAL {start} TO {end}"
    if root == "ARRAY":
        (element,) = type_parameters(dt, 1)
        return f"ARRAY<{spark_type_ddl(element)}>"
    if root == "MAP":
        key, value = type_parameters(dt, 2)
        return f"MAP<{spark_type_ddl(key)}, {spark_type_ddl(value)}>"
    if root == "MULTISET":
        (element,) = type_parameters(dt, 1)
        return f"MAP<{spark_type_ddl(element)}, INT>"
    if root == "ROW":
        return f"STRUCT<{', '.join(_field_ddl(field) for field in row_type_fields(dt))}>"
    if root == "RAW":
        return "BINARY"
    raise TypeMappingError(f"Flink type {flink_sql(dt)} has no Spark equivalent.")


_TIMESTAMPS = {DType.TIMESTAMP, DType.TIMESTAMPNTZ, DType.TIMESTAMPLTZ, DType.TIMESTAMPTZ}


def timestamp_precision(dt: exp.DataType) -> int | None:
    """The fractional digits of a TIMESTAMP(p) / TIMESTAMP_LTZ(p) (6 when unwritten, as Flink's default); None for
    any other type."""
    if dt.this not in _TIMESTAMPS:
        return None
    params = [p for p in dt.expressions if isinstance(p, exp.DataTypeParam)]
    return int(params[0].name) if params and params[0].name.isdigit() else 6


def is_nullable(dt: exp.DataType) -> bool:
    """False when the Flink type carries NOT NULL."""
    return dt.args.get("nullable") is not False


def flink_sql(dt: exp.DataType) -> str:
    """The type as Flink SQL text, for messages."""
    return dt.sql(dialect=Flink)


# -- CAST rules ----------------------------------------------------------------------------------------


class CastSupport(Enum):
    """Flink's cast matrix (docs: dev/table/types.md, "Casting"): Y, ! (fails at runtime on bad input), N."""

    SUPPORTED = "Y"
    FALLIBLE = "!"
    UNSUPPORTED = "N"


# Type roots as Flink's cast matrix names them.
_ROOT_OF: dict[DType, str] = {
    **dict.fromkeys(_STRINGS, "STRING"),
    **dict.fromkeys(_BINARIES, "BINARY"),
    DType.BOOLEAN: "BOOLEAN",
    DType.DECIMAL: "DECIMAL",
    DType.TINYINT: "TINYINT",
    DType.SMALLINT: "SMALLINT",
    DType.INT: "INTEGER",
    DType.BIGINT: "BIGINT",
    DType.FLOAT: "FLOAT",
    DType.DOUBLE: "DOUBLE",
    DType.DATE: "DATE",
    DType.TIME: "TIME",
    DType.TIMESTAMP: "TIMESTAMP",
    DType.TIMESTAMPNTZ: "TIMESTAMP",
    DType.TIMESTAMPLTZ: "TIMESTAMP_LTZ",
    DType.TIMESTAMPTZ: "TIMESTAMP_LTZ",
    DType.ARRAY: "ARRAY",
    DType.MAP: "MAP",
    DType.STRUCT: "ROW",
    DType.NULL: "NULL",
    DType.VARIANT: "VARIANT",
}
_NUMERIC = ("DECIMAL", "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "FLOAT", "DOUBLE")
_DATETIME = ("DATE", "TIME", "TIMESTAMP", "TIMESTAMP_LTZ")
_PRIMITIVE_TARGETS = ("BINARY", "BOOLEAN", *_NUMERIC, *_DATETIME)
_CONSTRUCTED = ("ARRAY", "MULTISET", "MAP", "ROW")

# source root -> target root -> support, for the non-STRING targets (everything casts to STRING: "Y").
_MATRIX: dict[str, dict[str, CastSupport]] = {
    "STRING": dict.fromkeys(_PRIMITIVE_TARGETS, CastSupport.FALLIBLE),
    "BINARY": {"BINARY": CastSupport.SUPPORTED},
    "BOOLEAN": dict.fromkeys(("BOOLEAN", *_NUMERIC), CastSupport.SUPPORTED),
    "DECIMAL": dict.fromkeys(_NUMERIC, CastSupport.SUPPORTED),
    "TINYINT": dict.fromkeys(("BOOLEAN", *_NUMERIC), CastSupport.SUPPORTED),
    "SMALLINT": dict.fromkeys(("BOOLEAN", *_NUMERIC), CastSupport.SUPPORTED),
    "INTEGER": dict.fromkeys(("BOOLEAN", *_NUMERIC, "INTERVAL_YEAR_MONTH"), CastSupport.SUPPORTED),
    "BIGINT": dict.fromkeys(("BOOLEAN", *_NUMERIC, "INTERVAL_DAY_TIME"), CastSupport.SUPPORTED),
    "FLOAT": dict.fromkeys(_NUMERIC, CastSupport.SUPPORTED),
    "DOUBLE": dict.fromkeys(_NUMERIC, CastSupport.SUPPORTED),
    "DATE": dict.fromkeys(("DATE", "TIMESTAMP", "TIMESTAMP_LTZ"), CastSupport.SUPPORTED),
    "TIME": dict.fromkeys(("TIME", "TIMESTAMP", "TIMESTAMP_LTZ"), CastSupport.SUPPORTED),
    "TIMESTAMP": dict.fromkeys(_DATETIME, CastSupport.SUPPORTED),
    "TIMESTAMP_LTZ": dict.fromkeys(_DATETIME, CastSupport.SUPPORTED),
    "INTERVAL_YEAR_MONTH": dict.fromkeys(("INTEGER", "INTERVAL_YEAR_MONTH"), CastSupport.SUPPORTED),
    "INTERVAL_DAY_TIME": dict.fromkeys(("BIGINT", "INTERVAL_DAY_TIME"), CastSupport.SUPPORTED),
    "RAW": {"BINARY": CastSupport.FALLIBLE},
}


def cast_support(source: exp.DataType, target: exp.DataType) -> CastSupport:
    """How Flink (1.15+, default non-legacy casting) treats `CAST(<source> AS <target>)`.

    Follows the documented matrix: anything casts to STRING; STRING casts to every primitive type but may
    fail at runtime; numerics cast among themselves and from/to BOOLEAN (not FLOAT/DOUBLE/DECIMAL to
    BOOLEAN); numerics never cast to TIMESTAMP/TIMESTAMP_LTZ (Flink requires TO_TIMESTAMP[_LTZ]) and
    timestamps never to numerics; INT <-> year-month and BIGINT <-> day-time intervals; constructed types
    cast only to the same kind with castable children (fallible); RAW only to itself (same class), STRING
    and BINARY. Nullability never blocks an explicit cast.
    """
    src, dst = _root(source), _root(target)
    if src == "NULL" or (src == dst and src not in _CONSTRUCTED and src != "RAW"):
        return CastSupport.SUPPORTED
    if dst == "STRING":
        return CastSupport.SUPPORTED
    if src == "RAW" and dst == "RAW":
        same = [e.sql() for e in source.expressions] == [e.sql() for e in target.expressions]
        return CastSupport.SUPPORTED if same else CastSupport.UNSUPPORTED
    if src in _CONSTRUCTED and src == dst:
        return _children_support(source, target)
    return _MATRIX.get(src, {}).get(dst, CastSupport.UNSUPPORTED)


def _children_support(source: exp.DataType, target: exp.DataType) -> CastSupport:
    src_children, dst_children = _child_types(source), _child_types(target)
    if len(src_children) != len(dst_children):
        return CastSupport.UNSUPPORTED
    for s, d in zip(src_children, dst_children, strict=True):
        if cast_support(s, d) is CastSupport.UNSUPPORTED:
            return CastSupport.UNSUPPORTED
    return CastSupport.FALLIBLE


def _root(dt: exp.DataType) -> str:
    kind = dt.this
    if isinstance(kind, exp.Interval):
        return "INTERVAL_YEAR_MONTH" if interval_fields(dt)[0] in YEAR_MONTH_FIELDS else "INTERVAL_DAY_TIME"
    if kind == DType.USERDEFINED:
        return str(dt.args.get("kind") or "").upper()
    return _ROOT_OF.get(kind, str(kind))


def _child_types(dt: exp.DataType) -> list[exp.DataType]:
    if dt.this == DType.STRUCT:
        return [_field_type(f) for f in dt.expressions]
    return [e for e in dt.expressions if isinstance(e, exp.DataType)]


# -- helpers -------------------------------------------------------------------------------------------


def _decimal_params(dt: exp.DataType) -> tuple[int, int]:
    """Flink's DECIMAL defaults: precision 10, scale 0."""
    params = [int(p.name) for p in dt.expressions]
    precision = params[0] if params else 10
    scale = params[1] if len(params) > 1 else 0
    if not 1 <= precision <= 38 or not 0 <= scale <= precision:
        raise TypeMappingError(f"DECIMAL({precision}, {scale}) is out of range: precision 1..38, scale 0..precision.")
    return precision, scale


def type_parameters(dt: exp.DataType, count: int) -> list[exp.DataType]:
    """The element type(s) of an ARRAY, MULTISET or MAP, which must have `count` of them."""
    children = [e for e in dt.expressions if isinstance(e, exp.DataType)]
    if len(children) != count:
        raise TypeMappingError(f"Flink type {flink_sql(dt)} needs {count} type parameter(s).")
    return children


def _field_type(field: exp.Expr) -> exp.DataType:
    kind = field.args.get("kind") if isinstance(field, exp.ColumnDef) else field
    if not isinstance(kind, exp.DataType) or kind.this == DType.UNKNOWN:
        raise TypeMappingError(f"ROW field '{field.sql(dialect=Flink)}' needs a name and a type.")
    return kind


class RowField(NamedTuple):
    """A field of a ROW type as declared."""

    name: str
    type: exp.DataType
    nullable: bool
    comment: str | None  # its COMMENT ('the key' in `ROW<id BIGINT 'the key'>`), kept by Spark as metadata


def _row_field(field: exp.Expr) -> RowField:
    kind = _field_type(field)
    nullable = is_nullable(kind)
    comment: str | None = None
    if isinstance(field, exp.ColumnDef):
        for constraint in field.constraints:
            c = constraint.kind
            if isinstance(c, exp.NotNullColumnConstraint) and not c.args.get("allow_null"):
                nullable = False
            elif isinstance(c, exp.CommentColumnConstraint):
                comment = c.this.name
    return RowField(field.name, kind, nullable, comment)


def interval_fields(dt: exp.DataType) -> tuple[str, str]:
    """The first and last field of an INTERVAL type, both year-month or both day-time: ('DAY', 'SECOND')."""
    unit = dt.this.args.get("unit")
    if isinstance(unit, exp.IntervalSpan):
        start, end = unit.this.name.upper(), unit.expression.name.upper()
    elif unit is not None:
        start = end = unit.name.upper()
    else:
        raise TypeMappingError(f"Flink type {flink_sql(dt)} needs interval fields, e.g. INTERVAL DAY TO SECOND.")
    if all(f in YEAR_MONTH_FIELDS for f in (start, end)) or all(f in DAY_TIME_FIELDS for f in (start, end)):
        return start, end
    raise TypeMappingError(f"Flink type {flink_sql(dt)} is not a valid interval type.")


def _field_ddl(field: RowField) -> str:
    text = f"{_quote(field.name)}: {spark_type_ddl(field.type)}"
    if not field.nullable:
        text += " NOT NULL"
    if field.comment is not None:
        text += " COMMENT " + exp.Literal.string(field.comment).sql(dialect="spark")
    return text


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


# -- structure, for formats that derive their own schema from a table's types (avro) --------------------


def type_root(dt: exp.DataType) -> str:
    """The type's root as Flink names it: 'STRING', 'INTEGER', 'TIMESTAMP_LTZ', 'ROW', ..."""
    return _root(dt)


def row_type_fields(dt: exp.DataType) -> list[RowField]:
    """The fields of a ROW type, in order."""
    return [_row_field(f) for f in dt.expressions]


def row_fields(dt: exp.DataType) -> list[tuple[str, exp.DataType, bool]]:
    """(name, type, nullable) of each field of a ROW type, in order."""
    return [(f.name, f.type, f.nullable) for f in row_type_fields(dt)]


def element_types(dt: exp.DataType) -> list[exp.DataType]:
    """The element type of an ARRAY / MULTISET, the key and value types of a MAP."""
    return _child_types(dt)


def decimal_params(dt: exp.DataType) -> tuple[int, int]:
    """(precision, scale) of a DECIMAL, with Flink's defaults."""
    return _decimal_params(dt)


def time_precision(dt: exp.DataType) -> int:
    """The fractional digits of a TIME(p) (0 when unwritten, as Flink's default)."""
    params = [p for p in dt.expressions if isinstance(p, exp.DataTypeParam)]
    return int(params[0].name) if params and params[0].name.isdigit() else 0


# Numeric widening order: a type takes the ones ranked below it (Flink's implicit casts, see `assignable`).
NUMERIC_RANK = {
    exp.DType.TINYINT: 1,
    exp.DType.SMALLINT: 2,
    exp.DType.INT: 3,
    exp.DType.BIGINT: 4,
    exp.DType.DECIMAL: 5,
    exp.DType.FLOAT: 6,
    exp.DType.DOUBLE: 7,
}
TYPE_FAMILIES: dict[str, set[exp.DType]] = {
    "character": {exp.DType.CHAR, exp.DType.VARCHAR, exp.DType.TEXT, exp.DType.NCHAR, exp.DType.NVARCHAR},
    "binary": {exp.DType.BINARY, exp.DType.VARBINARY, exp.DType.BLOB},
    "timestamp": {exp.DType.TIMESTAMP, exp.DType.DATETIME, exp.DType.TIMESTAMPNTZ},
    "timestamp_ltz": {exp.DType.TIMESTAMPLTZ, exp.DType.TIMESTAMPTZ},
}


def type_family(dt: exp.DataType) -> str:
    """The family of `dt` as Flink's implicit casts group types (numeric, character, binary, timestamp, ...)."""
    if dt.this in NUMERIC_RANK:
        return "numeric"
    for name, members in TYPE_FAMILIES.items():
        if dt.this in members:
            return name
    return dt.this.name


def assignable(source: exp.DataType, target: exp.DataType) -> bool:
    """Whether Flink's INSERT accepts a query column of type `source` for a sink column of type `target`:
    Flink's implicit casts (LogicalTypeCasts), by type root; nested and parameterized types are not compared."""
    s, t = source.this, target.this
    if s in (exp.DType.NULL, exp.DType.UNKNOWN) or s is t:
        return True
    fs, ft = type_family(source), type_family(target)
    if fs == ft == "numeric":
        # DECIMAL and DOUBLE take every number; FLOAT every one but DOUBLE; integers only narrower integers.
        return t in (exp.DType.DECIMAL, exp.DType.DOUBLE) or NUMERIC_RANK[s] <= NUMERIC_RANK[t]
    if ft in ("timestamp", "timestamp_ltz"):
        return fs in ("timestamp", "timestamp_ltz")
    if t in (exp.DType.DATE, exp.DType.TIME):
        return fs == "timestamp"
    return fs == ft
