"""Flink built-in functions and CASTs rewritten for Spark where the Spark namesake behaves differently.

Most Flink built-ins are Spark built-ins of the same name and meaning and are left alone. The ones here
differ in name, arguments or edge cases (NULL instead of an error, 0- vs 1-based groups, literal vs regex
separators); each is rewritten to Spark SQL that returns what Flink returns.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from sqlglot import exp

from connector.sql import types
from connector.sql.intervals import singular
from connector.sql.rewriting import TranspileError, call_args, call_name, fn


def spark_function(node: exp.Expr) -> exp.Expr:
    """The Spark rewrite of `node` if it is a Flink built-in listed here, else `node` itself."""
    handler = _FUNCTIONS.get(call_name(node)) if isinstance(node, exp.Anonymous) else _NODES.get(type(node))
    return handler(node) if handler else node


def spark_cast(node: exp.Cast) -> exp.Expr:
    """`node` (a CAST or TRY_CAST) with its Flink target type replaced by the Spark type that holds it."""
    target = node.args["to"]
    if target.this == exp.DataType.Type.TIME:
        raise TranspileError(
            "CAST to TIME is not supported: TIME values are carried as STRING in Spark; use "
            "DATE_FORMAT(ts, 'HH:mm:ss') instead.",
            node,
        )
    try:
        ddl = types.spark_type_ddl(target)
    except types.TypeMappingError as err:
        raise TranspileError(str(err), node) from None
    node.set("to", exp.DataType.build(ddl, dialect="spark", udt=True))
    return node


def _to_timestamp_ltz(node: exp.Expr) -> exp.Expr:
    args = call_args(node)
    value = args[0]
    second = args[1] if len(args) > 1 else None
    if (isinstance(value, exp.Literal) and value.is_string) or (isinstance(second, exp.Literal) and second.is_string):
        if len(args) > 2:
            raise TranspileError(
                "TO_TIMESTAMP_LTZ(string, format, timezone) is not supported; convert the zone first.", node
            )
        return fn("try_to_timestamp", *args)
    precision = int(second.name) if isinstance(second, exp.Literal) else 3 if second is None else None
    functions = {0: "timestamp_seconds", 3: "timestamp_millis", 6: "timestamp_micros"}
    if precision not in functions:
        raise TranspileError("TO_TIMESTAMP_LTZ(n, precision) supports precision 0 (seconds), 3 (ms) or 6 (us).", node)
    return fn(functions[precision], value)


def _to_timestamp(node: exp.Expr) -> exp.Expr:
    """Flink returns NULL for text it cannot parse; Spark's ANSI to_timestamp would fail the query."""
    args = call_args(node)
    ntz = exp.DataType.build("TIMESTAMP_NTZ", dialect="spark")
    if len(args) == 1:
        return exp.TryCast(this=args[0], to=ntz, safe=True)
    return exp.Cast(this=fn("try_to_timestamp", *args), to=ntz)


def _json_path(path: exp.Expr) -> exp.Expr:
    """Spark's JSONPath has no SQL/JSON mode prefix (`lax $.a`); Flink's default mode is lax."""
    if isinstance(path, exp.Literal) and path.is_string:
        return exp.Literal.string(re.sub(r"^\s*(lax|strict)\s+", "", path.name, flags=re.IGNORECASE))
    return path


def _json_value(node: exp.Expr) -> exp.Expr:
    args = call_args(node) if isinstance(node, exp.Anonymous) else [node.this, node.args["path"]]
    value: exp.Expr = fn("get_json_object", args[0], _json_path(args[1]))
    returning = node.args.get("returning")
    if isinstance(returning, exp.DataType):
        value = spark_cast(exp.Cast(this=value, to=returning))
    condition = node.args.get("on_condition")
    if isinstance(condition, exp.OnCondition):
        clauses = [condition.args.get(k) for k in ("empty", "error")]
        if any(isinstance(c, str) and c.upper().startswith("ERROR") for c in clauses):
            raise TranspileError(
                "JSON_VALUE ... ERROR ON EMPTY/ERROR is not supported: Spark returns NULL for missing or "
                "invalid JSON. Use the default (NULL ON ...) or DEFAULT <value> ON ...",
                node,
            )
        defaults = [c for c in clauses if isinstance(c, exp.Expr)]
        if defaults:
            value = exp.Coalesce(this=value, expressions=[defaults[0]])
    return value


def _json_query(node: exp.Expr) -> exp.Expr:
    args = call_args(node)
    if len(args) != 2:
        raise TranspileError("JSON_QUERY is supported with a value and a path only (no WRAPPER/ON clauses).", node)
    return fn("get_json_object", args[0], _json_path(args[1]))


def _listagg(node: exp.Expr) -> exp.Expr:
    separator = (
        node.args.get("separator")
        if not isinstance(node, exp.Anonymous)
        else (call_args(node)[1] if len(call_args(node)) > 1 else None)
    )
    value = node.this if not isinstance(node, exp.Anonymous) else call_args(node)[0]
    return fn("listagg", value, separator if separator is not None else exp.Literal.string(","))


def _split_index(node: exp.Expr) -> exp.Expr:
    """Flink splits on the literal separator, Spark on a regex: escape it. Index is 0-based in both (`get`)."""
    text, separator, index = call_args(node)
    if isinstance(separator, exp.Literal) and separator.is_string:
        pattern: exp.Expr = exp.Literal.string(re.sub(r"([\\^$.|?*+()\[\]{}])", r"\\\1", separator.name))
    else:
        pattern = fn("concat", exp.Literal.string("\\Q"), separator, exp.Literal.string("\\E"))
    return fn("get", fn("split", text, pattern, exp.Literal.number(-1)), index)


def _regexp_extract(node: exp.Expr) -> exp.Expr:
    """Flink: group 0 by default and NULL when nothing matches; Spark: group 1 and ''."""
    if isinstance(node, exp.Anonymous):
        text, pattern, *rest = call_args(node)
        group = rest[0] if rest else exp.Literal.number(0)
    else:
        text, pattern = node.this, node.expression
        group = node.args.get("group") or exp.Literal.number(0)
    extract = fn("regexp_extract", text, pattern, group)
    matches = exp.RegexpLike(this=text.copy(), expression=pattern.copy())
    return exp.Case(ifs=[exp.If(this=matches, true=extract)])


_TRUNC_UNITS = {"YEAR", "QUARTER", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND", "MILLISECOND"}


def _floor_ceil(node: exp.Expr) -> exp.Expr:
    unit = node.args.get("to")
    if unit is None:
        return node
    name = singular(unit.name)
    if name not in _TRUNC_UNITS:
        raise TranspileError(
            f"FLOOR/CEIL(... TO {name}) is not supported; units: {', '.join(sorted(_TRUNC_UNITS))}.", node
        )
    floored = fn("date_trunc", exp.Literal.string(name), node.this)
    if isinstance(node, exp.Floor):
        return floored
    amount, spark_unit = {"QUARTER": ("3", "MONTH"), "MILLISECOND": ("0.001", "SECOND")}.get(name, ("1", name))
    one = exp.Interval(this=exp.Literal.string(amount), unit=exp.var(spark_unit))
    exact = exp.EQ(this=floored.copy(), expression=node.this.copy())
    return exp.Case(
        ifs=[exp.If(this=exact, true=node.this.copy())], default=exp.Add(this=floored.copy(), expression=one)
    )


def _current_timestamp(node: exp.Expr) -> exp.Expr:
    return exp.CurrentTimestamp()


def _row(node: exp.Expr) -> exp.Expr:
    return fn("struct", *call_args(node))


def _timestampadd(node: exp.Expr) -> exp.Expr:
    return fn("timestampadd", exp.var(node.text("unit").upper()), node.expression, node.this)


# Flink functions the parser leaves as plain calls, by name.
_FUNCTIONS: dict[str, Callable[[exp.Expr], exp.Expr]] = {
    "PROCTIME": _current_timestamp,
    "NOW": _current_timestamp,
    "CURRENT_ROW_TIMESTAMP": _current_timestamp,
    "TO_TIMESTAMP_LTZ": _to_timestamp_ltz,
    "TO_TIMESTAMP": _to_timestamp,
    "JSON_VALUE": _json_value,
    "JSON_QUERY": _json_query,
    "LISTAGG": _listagg,
    "SPLIT_INDEX": _split_index,
    "REGEXP_EXTRACT": _regexp_extract,
    "ROW": _row,
}
# Flink functions the parser turns into typed sqlglot nodes whose Spark rendering differs from Flink.
_NODES: dict[type[exp.Expr], Callable[[exp.Expr], exp.Expr]] = {
    exp.JSONValue: _json_value,
    exp.GroupConcat: _listagg,
    exp.RegexpExtract: _regexp_extract,
    exp.Floor: _floor_ceil,
    exp.Ceil: _floor_ceil,
    exp.TimestampAdd: _timestampadd,
}
