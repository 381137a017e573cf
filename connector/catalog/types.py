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

`cast_support` is Flink's cast matrix: `kafka-sql validate` rejects an explicit CAST that Flink rejects
(Spark would run some of them, e.g. BIGINT to TIMESTAMP) wherever the type of the value cast is evident.
"""

from __future__ import annotations

from enum import Enum

from pyspark.sql import types as T
from sqlglot import exp

from connector.errors import KafkaSqlError
from connector.sql.dialect.flink import Flink

DType = exp.DType

_STRINGS = {DType.CHAR, DType.VARCHAR, DType.TEXT, DType.NCHAR, DType.NVARCHAR, DType.BPCHAR}
_BINARIES = {DType.BINARY, DType.VARBINARY, DType.BLOB}
_SIMPLE: dict[DType, T.DataType] = {
    DType.BOOLEAN: T.BooleanType(),
    DType.TINYINT: T.ByteType(),
    DType.SMALLINT: T.ShortType(),
    DType.INT: T.IntegerType(),
    DType.BIGINT: T.LongType(),
    DType.FLOAT: T.FloatType(),
    DType.DOUBLE: T.DoubleType(),
    DType.DATE: T.DateType(),
    DType.TIME: T.StringType(),
    DType.TIMESTAMP: T.TimestampNTZType(),
    DType.TIMESTAMPNTZ: T.TimestampNTZType(),
    DType.TIMESTAMPLTZ: T.TimestampType(),
    DType.TIMESTAMPTZ: T.TimestampType(),
    DType.NULL: T.NullType(),
    DType.VARIANT: T.VariantType(),
}
_YEAR_MONTH_FIELDS = {"YEAR": T.YearMonthIntervalType.YEAR, "MONTH": T.YearMonthIntervalType.MONTH}
_DAY_TIME_FIELDS = {
    "DAY": T.DayTimeIntervalType.DAY,
    "HOUR": T.DayTimeIntervalType.HOUR,
    "MINUTE": T.DayTimeIntervalType.MINUTE,
    "SECOND": T.DayTimeIntervalType.SECOND,
}


class TypeMappingError(KafkaSqlError, ValueError):
    """A Flink type that has no Spark counterpart (or that the parser could not make sense of)."""


def spark_type(dt: exp.DataType) -> T.DataType:
    """The Spark type that holds the values of Flink type `dt` (see the module notes for lossy cases)."""
    kind = dt.this
    if isinstance(kind, exp.Interval):
        return _interval_type(kind, dt)
    if kind in _STRINGS:
        return T.StringType()
    if kind in _BINARIES:
        return T.BinaryType()
    if kind == DType.DECIMAL:
        precision, scale = _decimal_params(dt)
        return T.DecimalType(precision, scale)
    if kind in _SIMPLE:
        return _SIMPLE[kind]
    if kind == DType.ARRAY:
        (element,) = _children(dt, 1)
        return T.ArrayType(spark_type(element), containsNull=is_nullable(element))
    if kind == DType.MAP:
        key, value = _children(dt, 2)
        return T.MapType(spark_type(key), spark_type(value), valueContainsNull=is_nullable(value))
    if kind == DType.STRUCT:
        return T.StructType([_struct_field(field) for field in dt.expressions])
    if kind == DType.USERDEFINED:
        udt = str(dt.args.get("kind") or "").upper()
        if udt == "MULTISET":
            (element,) = _children(dt, 1)
            return T.MapType(spark_type(element), T.IntegerType(), valueContainsNull=False)
        if udt == "RAW":
            return T.BinaryType()
    raise TypeMappingError(f"Flink type {flink_sql(dt)} has no Spark equivalent.")


_TIMESTAMPS = {DType.TIMESTAMP, DType.TIMESTAMPNTZ, DType.TIMESTAMPLTZ, DType.TIMESTAMPTZ}


def timestamp_precision(dt: exp.DataType) -> int | None:
    """The fractional digits of a TIMESTAMP(p) / TIMESTAMP_LTZ(p) (6 when unwritten, as Flink's default); None for
    any other type."""
    if dt.this not in _TIMESTAMPS:
        return None
    params = [p for p in dt.expressions if isinstance(p, exp.DataTypeParam)]
    return int(params[0].name) if params and params[0].name.isdigit() else 6


def spark_field(name: str, dt: exp.DataType, nullable: bool = True) -> T.StructField:
    """A top-level Spark column: nullable unless the column or its type says NOT NULL."""
    return T.StructField(name, spark_type(dt), nullable=nullable and is_nullable(dt))


def spark_type_ddl(dt: exp.DataType) -> str:
    """Spark SQL DDL text for `spark_type(dt)`, usable in CAST, `from_json` schemas and table DDL."""
    return _ddl(spark_type(dt))


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
        return (
            "INTERVAL_YEAR_MONTH"
            if isinstance(_interval_type(kind, dt), T.YearMonthIntervalType)
            else ("INTERVAL_DAY_TIME")
        )
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


def _children(dt: exp.DataType, count: int) -> list[exp.DataType]:
    children = [e for e in dt.expressions if isinstance(e, exp.DataType)]
    if len(children) != count:
        raise TypeMappingError(f"Flink type {flink_sql(dt)} needs {count} type parameter(s).")
    return children


def _field_type(field: exp.Expr) -> exp.DataType:
    kind = field.args.get("kind") if isinstance(field, exp.ColumnDef) else field
    if not isinstance(kind, exp.DataType) or kind.this == DType.UNKNOWN:
        raise TypeMappingError(f"ROW field '{field.sql(dialect=Flink)}' needs a name and a type.")
    return kind


def _struct_field(field: exp.Expr) -> T.StructField:
    kind = _field_type(field)
    nullable = is_nullable(kind)
    metadata: dict[str, str] = {}
    if isinstance(field, exp.ColumnDef):
        for constraint in field.constraints:
            c = constraint.kind
            if isinstance(c, exp.NotNullColumnConstraint) and not c.args.get("allow_null"):
                nullable = False
            elif isinstance(c, exp.CommentColumnConstraint):
                metadata["comment"] = c.this.name
    return T.StructField(field.name, spark_type(kind), nullable=nullable, metadata=metadata)


def _interval_type(interval: exp.Interval, dt: exp.DataType) -> T.DataType:
    unit = interval.args.get("unit")
    if isinstance(unit, exp.IntervalSpan):
        start, end = unit.this.name.upper(), unit.expression.name.upper()
    elif unit is not None:
        start = end = unit.name.upper()
    else:
        raise TypeMappingError(f"Flink type {flink_sql(dt)} needs interval fields, e.g. INTERVAL DAY TO SECOND.")
    if start in _YEAR_MONTH_FIELDS and end in _YEAR_MONTH_FIELDS:
        return T.YearMonthIntervalType(_YEAR_MONTH_FIELDS[start], _YEAR_MONTH_FIELDS[end])
    if start in _DAY_TIME_FIELDS and end in _DAY_TIME_FIELDS:
        return T.DayTimeIntervalType(_DAY_TIME_FIELDS[start], _DAY_TIME_FIELDS[end])
    raise TypeMappingError(f"Flink type {flink_sql(dt)} is not a valid interval type.")


def _ddl(t: T.DataType) -> str:
    if isinstance(t, T.ArrayType):
        return f"ARRAY<{_ddl(t.elementType)}>"
    if isinstance(t, T.MapType):
        return f"MAP<{_ddl(t.keyType)}, {_ddl(t.valueType)}>"
    if isinstance(t, T.StructType):
        return f"STRUCT<{', '.join(_field_ddl(f) for f in t.fields)}>"
    if isinstance(t, T.NullType):
        return "VOID"
    return t.simpleString().upper()


def _field_ddl(field: T.StructField) -> str:
    text = f"{_quote(field.name)}: {_ddl(field.dataType)}"
    if not field.nullable:
        text += " NOT NULL"
    comment = field.metadata.get("comment")
    if comment is not None:
        text += " COMMENT " + exp.Literal.string(comment).sql(dialect="spark")
    return text


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


# -- structure, for formats that derive their own schema from a table's types (avro) --------------------


def type_root(dt: exp.DataType) -> str:
    """The type's root as Flink names it: 'STRING', 'INTEGER', 'TIMESTAMP_LTZ', 'ROW', ..."""
    return _root(dt)


def row_fields(dt: exp.DataType) -> list[tuple[str, exp.DataType, bool]]:
    """(name, type, nullable) of each field of a ROW type, in order."""
    fields = []
    for f in dt.expressions:
        spark = _struct_field(f)
        fields.append((spark.name, _field_type(f), spark.nullable))
    return fields


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
