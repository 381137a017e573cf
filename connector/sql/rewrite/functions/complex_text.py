"""Flink's text of ARRAY, MAP and ROW values, for a CAST of one to STRING (checked against Flink 2.3 by the
conformance case `cast_complex_to_string`).

Spark writes `{a -> 1}`, `{1, a}` and `null` where Flink writes `{a=1}`, `(1, a)` and `NULL`, and its BOOLEAN
elements in lower case. The text is built from the value's Flink type, known where the validator marked the CAST
(`annotate.COMPLEX_TEXT`): each element, key, value and field as Flink casts it to STRING, NULL ones as `NULL`,
joined by ', '. A NULL value stays NULL.
"""

from __future__ import annotations

from sqlglot import exp

from connector.catalog.types import element_types, row_fields, timestamp_precision, type_root
from connector.sql.rewrite.nodes import fn

_NULL = "NULL"


def flink_text(value: exp.Expr, flink_type: exp.DataType, depth: int = 0) -> exp.Expr:
    """The STRING Flink's CAST(value AS STRING) gives, for a value of `flink_type` (NULL when `value` is)."""
    root = type_root(flink_type)
    if root == "ARRAY":
        (element,) = element_types(flink_type)
        name = f"__e{depth}"
        each = _or_null(flink_text(exp.column(name), element, depth + 1))
        return _enclosed("[", _joined(fn("transform", value, _lambda(each, name))), "]")
    if root == "MAP":
        key, item = element_types(flink_type)
        name = f"__e{depth}"
        entry = exp.column(name)
        pair = fn(
            "concat",
            _or_null(flink_text(exp.Dot(this=entry.copy(), expression=exp.to_identifier("key")), key, depth + 1)),
            exp.Literal.string("="),
            _or_null(flink_text(exp.Dot(this=entry, expression=exp.to_identifier("value")), item, depth + 1)),
        )
        return _enclosed("{", _joined(fn("transform", fn("map_entries", value), _lambda(pair, name))), "}")
    if root == "ROW":
        fields = [
            _or_null(flink_text(exp.Dot(this=value.copy(), expression=exp.to_identifier(field)), kind, depth + 1))
            for field, kind, _ in row_fields(flink_type)
        ]
        text = _enclosed("(", fn("concat_ws", exp.Literal.string(", "), *fields), ")")
        return exp.Case(ifs=[exp.If(this=exp.Is(this=value, expression=exp.Null()), true=exp.Null())], default=text)
    return _scalar_text(value, flink_type)


def timestamp_text(value: exp.Expr, digits: int) -> exp.Expr:
    """Flink's text of a TIMESTAMP(p) value: p fractional digits (20.000), where Spark drops trailing zeros."""
    pattern = "yyyy-MM-dd HH:mm:ss" + ("." + "S" * digits if digits else "")
    return fn("date_format", value, exp.Literal.string(pattern))


def _scalar_text(value: exp.Expr, flink_type: exp.DataType) -> exp.Expr:
    digits = timestamp_precision(flink_type)
    if digits is not None:
        return timestamp_text(value, digits)
    text = exp.cast(value, exp.DataType.build("STRING"))
    return exp.Upper(this=text) if type_root(flink_type) == "BOOLEAN" else text


def _or_null(text: exp.Expr) -> exp.Expr:
    return fn("coalesce", text, exp.Literal.string(_NULL))


def _joined(texts: exp.Expr) -> exp.Expr:
    return fn("array_join", texts, exp.Literal.string(", "))


def _enclosed(opening: str, text: exp.Expr, closing: str) -> exp.Expr:
    return fn("concat", exp.Literal.string(opening), text, exp.Literal.string(closing))


def _lambda(body: exp.Expr, name: str) -> exp.Lambda:
    return exp.Lambda(this=body, expressions=[exp.to_identifier(name)])
