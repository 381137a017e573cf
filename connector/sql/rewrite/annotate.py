"""Flink types the transpiler needs where Spark would type an expression differently, marked on the query tree.

The validator knows the columns' Flink types; the transpiler, which rewrites the tree later, does not. Where the
result depends on them, the validator marks the node (`mark`) and the transpiler reads the mark
(`connector.sql.rewrite.functions.builtins`): an integer divided by an integer is an integer in Flink (10 / 4 = 2;
Spark's `/` is
DOUBLE), a TIMESTAMP(p) cast to STRING shows p fractional digits (Spark drops trailing zeros), and an ARRAY, MAP or
ROW cast to STRING is written as Flink writes it (`connector.sql.rewrite.functions.complex_text`).
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlglot import exp

from connector.catalog.types import timestamp_precision, type_root

INTEGER_DIVISION = "flink_integer_division"  # on an exp.Div: the Flink type of the quotient ('INT', 'BIGINT')
TIMESTAMP_TEXT = "flink_timestamp_text"  # on a CAST to STRING: fractional digits of the TIMESTAMP(p) value
TRUNCATED_TYPE = "flink_truncated_type"  # on an exp.Trunc: the Spark type of its value (Flink keeps it)
DATE_RESULT = "flink_date_result"  # on a TIMESTAMPADD or FLOOR / CEIL ... TO of a DATE by days or more: a DATE
RESULT_TYPE = "flink_result_type"  # on a call of a Python function: its result type (exp.DataType)
COMPLEX_TEXT = "flink_complex_text"  # on a CAST to STRING of an ARRAY, MAP or ROW: its Flink type (exp.DataType)

_INTEGERS = {exp.DType.TINYINT: 1, exp.DType.SMALLINT: 2, exp.DType.INT: 3, exp.DType.BIGINT: 4}
_DATE_UNITS = {"DAY", "WEEK", "MONTH", "QUARTER", "YEAR"}
_TEXT = {exp.DType.VARCHAR, exp.DType.CHAR, exp.DType.TEXT, exp.DType.NVARCHAR}
# Flink functions whose result is STRING whatever their arguments, and predicates (BOOLEAN)
_STRING_RESULTS = (
    exp.Upper, exp.Lower, exp.Trim, exp.Concat, exp.ConcatWs, exp.DPipe, exp.Substring, exp.Replace, exp.Initcap,
    exp.RegexpReplace, exp.Pad, exp.TimeToStr,
)  # fmt: skip
_BOOLEAN_RESULTS = (
    exp.GT, exp.GTE, exp.LT, exp.LTE, exp.EQ, exp.NEQ, exp.Like, exp.Is, exp.In, exp.Not, exp.And, exp.Or, exp.Between,
)  # fmt: skip
_SUMMED_KEEPING_TYPE = {*_INTEGERS, exp.DType.FLOAT, exp.DType.DOUBLE}


def mark(nodes: Iterable[exp.Expr], columns: dict[str, exp.DataType | None]) -> None:
    """Mark the divisions, truncations, DATE arithmetic and casts among `nodes` (of one SELECT, whose FROM gives
    `columns`) whose Flink result the transpiler cannot tell from the tree alone."""
    for node in nodes:
        if isinstance(node, exp.Div):
            left, right = infer_type(node.this, columns), infer_type(node.expression, columns)
            if left is not None and right is not None and left.this in _INTEGERS and right.this in _INTEGERS:
                wider = max(left.this, right.this, key=lambda t: _INTEGERS[t])
                node.meta[INTEGER_DIVISION] = exp.DataType.build(wider).sql(dialect="spark")
        elif isinstance(node, exp.Trunc):
            value = infer_type(node.this, columns)
            if value is not None and value.this is not exp.DType.DECIMAL:
                node.meta[TRUNCATED_TYPE] = value.sql(dialect="spark")
        elif isinstance(node, (exp.TimestampAdd, exp.Floor, exp.Ceil)):
            unit = node.text("unit" if isinstance(node, exp.TimestampAdd) else "to").upper()
            value = infer_type(node.this, columns)
            if unit.removesuffix("S") in _DATE_UNITS and value is not None and value.this is exp.DType.DATE:
                node.meta[DATE_RESULT] = True
        elif isinstance(node, exp.Cast) and not isinstance(node, exp.TryCast) and node.to.this in _TEXT:
            source = infer_type(node.this, columns)
            digits = timestamp_precision(source) if source is not None else None
            if digits is not None:
                node.meta[TIMESTAMP_TEXT] = digits
            elif source is not None and type_root(source) in ("ARRAY", "MAP", "ROW"):
                node.meta[COMPLEX_TEXT] = source


def infer_type(expr: exp.Expr, columns: dict[str, exp.DataType | None]) -> exp.DataType | None:
    """The Flink type of a projected expression where it is evident; None when unsure (then not checked)."""
    if isinstance(expr, exp.Column):
        for name, dt in columns.items():
            if name.lower() == expr.name.lower():
                return dt
        return None
    if isinstance(expr, exp.Dot) and isinstance(expr.expression, exp.Identifier):  # a ROW field
        row = infer_type(expr.this, columns)
        if row is None or row.this != exp.DataType.Type.STRUCT:
            return None
        field = next((f for f in row.expressions if f.name.lower() == expr.name.lower()), None)
        kind = field.args.get("kind") if field is not None else None
        return kind if isinstance(kind, exp.DataType) else None
    if isinstance(expr, (exp.Cast, exp.TryCast)):
        return expr.to
    if isinstance(expr, exp.Anonymous) and expr.name.upper() == "ROW":  # Flink names its fields EXPR$0, EXPR$1, ...
        kinds = [infer_type(e, columns) for e in expr.expressions]
        if any(k is None for k in kinds):
            return None
        fields = [exp.ColumnDef(this=exp.to_identifier(f"EXPR${i}"), kind=k) for i, k in enumerate(kinds)]
        return exp.DataType(this=exp.DataType.Type.STRUCT, expressions=fields, nested=True)
    if isinstance(expr, exp.Anonymous) and RESULT_TYPE in expr.meta:
        return expr.meta[RESULT_TYPE]
    if isinstance(expr, exp.Literal):
        if expr.is_string:
            return exp.DataType.build("STRING", dialect="flink")
        return exp.DataType.build("DECIMAL" if "." in expr.name else "INT")
    if isinstance(expr, exp.Boolean):
        return exp.DataType.build("BOOLEAN")
    if isinstance(expr, exp.Count):
        return exp.DataType.build("BIGINT")
    if isinstance(expr, _STRING_RESULTS):
        return exp.DataType.build("STRING", dialect="flink")
    if isinstance(expr, _BOOLEAN_RESULTS):
        return exp.DataType.build("BOOLEAN")
    if isinstance(expr, exp.Length):
        return exp.DataType.build("INT")
    if isinstance(expr, (exp.Sum, exp.Avg)):  # Flink keeps an integer or floating type (AVG truncates in it)
        value = infer_type(expr.this, columns)
        return value if value is not None and value.this in _SUMMED_KEEPING_TYPE else None
    if isinstance(expr, exp.Coalesce):
        found = [infer_type(e, columns) for e in [expr.this, *expr.expressions]]
        return found[0] if found[0] is not None and all(f == found[0] for f in found) else None
    if isinstance(expr, (exp.Max, exp.Min)):
        return infer_type(expr.this, columns)
    if isinstance(expr, (exp.Paren, exp.Neg, exp.IgnoreNulls, exp.RespectNulls)):
        return infer_type(expr.this, columns)
    if isinstance(expr, exp.ArrayAgg):
        value = expr.this.expressions[0] if isinstance(expr.this, exp.Distinct) else expr.this
        element = infer_type(value, columns)
        return exp.DataType.build("ARRAY", expressions=[element], nested=True) if element is not None else None
    return None
