"""Flink's JSON constructors, JSON_OBJECT, JSON_ARRAY and JSON_STRING, as Spark expressions that build the same text
(checked against Flink 2.3 by the conformance case `json_constructors`).

Spark has no JSON_OBJECT or JSON_ARRAY, and its to_json takes only structs, maps and arrays (of one element type).
So each value's JSON text is taken on its own, from to_json of a one-field struct, and the texts are joined: a
JSON_OBJECT or JSON_ARRAY value inside another is JSON already and goes in as it is (Flink nests it, where any other
STRING is quoted); a TIMESTAMP ("2020-01-01T10:00:00.5") and a DOUBLE ("1.0E+20") are written as Flink writes them.
JSON_OBJECT orders its members by key and keeps NULL values (NULL ON NULL), JSON_ARRAY leaves them out (ABSENT ON
NULL), unless the call says otherwise, as in Flink.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from connector.sql.rewrite.nodes import call_args, fn, from_template

# On the Spark expression of a JSON_OBJECT or JSON_ARRAY: its text is JSON, to nest as it is.
_RAW_JSON = "flink_raw_json"
_TEXT = """CASE WHEN :v IS NULL THEN NULL
                WHEN typeof(:v) IN ('timestamp', 'timestamp_ntz')
                THEN concat('"', replace(CAST(:v AS STRING), ' ', 'T'), '"')
                WHEN typeof(:v) IN ('double', 'float') THEN :double
                ELSE substring(to_json(named_struct('v', :v)), 6, length(to_json(named_struct('v', :v))) - 6) END"""
# Flink writes a DOUBLE as Java's BigDecimal.valueOf(d).toString() does: from Java's
# Double.toString :t ('d.fffE±n' beyond [1e-3, 1e7)), plain digits where the exponent allows ('1.0E-5' is 0.000010,
# '1.23456789E8' is 123456789), '1.0E+20' where it does not; NaN and infinities as strings.
_DOUBLE_TEXT = r"""CASE
    WHEN :t IN ('NaN', 'Infinity', '-Infinity') THEN concat('"', :t, '"')
    WHEN :t = '-0.0' THEN '0.0'
    WHEN NOT :t LIKE '%E%' THEN :t
    WHEN CAST(regexp_extract(:t, 'E(-?[0-9]+)$', 1) AS INT) < -6 THEN :t
    WHEN CAST(regexp_extract(:t, 'E(-?[0-9]+)$', 1) AS INT) < 0
    THEN concat(regexp_extract(:t, '^(-?)', 1), '0.',
                repeat('0', -1 - CAST(regexp_extract(:t, 'E(-?[0-9]+)$', 1) AS INT)),
                regexp_replace(regexp_extract(:t, '^-?([0-9.]+)E', 1), '[.]', ''))
    WHEN length(regexp_extract(:t, '[.]([0-9]+)E', 1)) < CAST(regexp_extract(:t, 'E([0-9]+)$', 1) AS INT)
    THEN regexp_replace(:t, 'E', 'E+')
    ELSE concat(regexp_extract(:t, '^(-?[0-9])[.]', 1),
                substring(regexp_extract(:t, '[.]([0-9]+)E', 1), 1, CAST(regexp_extract(:t, 'E([0-9]+)$', 1) AS INT)),
                CASE WHEN length(regexp_extract(:t, '[.]([0-9]+)E', 1))
                          > CAST(regexp_extract(:t, 'E([0-9]+)$', 1) AS INT)
                     THEN concat('.', substring(regexp_extract(:t, '[.]([0-9]+)E', 1),
                                                CAST(regexp_extract(:t, 'E([0-9]+)$', 1) AS INT) + 1))
                     ELSE '' END)
    END"""
# Flink's JSON_OBJECT orders its members by key, and a repeated key keeps its last value (`FLINK_SQL_CONF`'s
# mapKeyDedupPolicy); ABSENT ON NULL leaves out the members whose value text is NULL.
_OBJECT = """concat('{', array_join(transform(
    array_sort(map_entries(map_from_entries(filter(:members, __m -> __m.v IS NOT NULL)))),
    __m -> concat(:key, ':', __m.value)), ','), '}')"""


def json_text(value: exp.Expr, nest: bool = True) -> exp.Expr:
    """The JSON text of `value`, NULL for NULL; with `nest`, a JSON_OBJECT's or JSON_ARRAY's own."""
    if nest and value.meta.get(_RAW_JSON):
        return value
    as_text = exp.cast(value, exp.DataType.build("STRING"))  # any type casts to STRING: every branch is analysed
    return from_template(_TEXT, v=value, double=from_template(_DOUBLE_TEXT, t=as_text))


def _member(value: exp.Expr, absent_on_null: bool) -> exp.Expr:
    text = json_text(value)
    return text if absent_on_null else fn("coalesce", text, exp.Literal.string("null"))


def _raw(text: exp.Expr) -> exp.Expr:
    text.meta[_RAW_JSON] = True
    return text


def _absent_on_null(node: exp.Expr, default: bool) -> bool:
    handling = node.args.get("null_handling")
    return default if not isinstance(handling, str) else handling.upper().startswith("ABSENT")


def _json_object(node: exp.Expr) -> exp.Expr:
    absent = _absent_on_null(node, default=False)
    if not node.expressions:
        return _raw(exp.Literal.string("{}"))
    members = fn("array", *(_keyed(pair, absent) for pair in node.expressions))
    key = json_text(exp.Dot(this=exp.column("__m"), expression=exp.to_identifier("key")), nest=False)
    return _raw(from_template(_OBJECT, members=members, key=key))


def _keyed(pair: exp.Expr, absent_on_null: bool) -> exp.Expr:
    """named_struct('k', key, 'v', value's text) of one KEY ... VALUE ... pair."""
    text = _member(pair.expression, absent_on_null)
    return fn("named_struct", exp.Literal.string("k"), pair.this, exp.Literal.string("v"), text)


def _json_array(node: exp.Expr) -> exp.Expr:
    absent = _absent_on_null(node, default=True)
    members = [_member(value, absent) for value in node.expressions]
    inner = fn("concat_ws", exp.Literal.string(","), *members) if members else exp.Literal.string("")
    return _raw(fn("concat", exp.Literal.string("["), inner, exp.Literal.string("]")))


FUNCTIONS: dict[str, Callable[[exp.Expr], exp.Expr]] = {
    # a STRING, never nested as JSON (Flink quotes JSON_STRING's result inside JSON_OBJECT)
    "JSON_STRING": lambda node: json_text(call_args(node)[0], nest=False),
}
NODES: dict[type[exp.Expr], Callable[[exp.Expr], exp.Expr]] = {
    exp.JSONObject: _json_object,
    exp.JSONArray: _json_array,
}
