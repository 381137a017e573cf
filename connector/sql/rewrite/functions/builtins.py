"""Flink built-in functions and CASTs rewritten for Spark where the Spark namesake behaves differently.

Most Flink built-ins are Spark built-ins of the same name and meaning and are left alone. The ones here
differ in name, arguments or edge cases (NULL instead of an error, 0- vs 1-based groups, literal vs regex
separators); each is rewritten to Spark SQL that returns what Flink returns.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from sqlglot import exp

from connector.catalog import types
from connector.sql.rewrite import annotate
from connector.sql.rewrite.functions import arrays, complex_text, flink_only, json_constructors, strings, times
from connector.sql.rewrite.intervals import singular
from connector.sql.rewrite.nodes import TranspileError, call_args, call_name, fn, written_args


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
    flink_type = target.sql(dialect="flink")
    node.set("to", exp.DataType.build(ddl, dialect="spark", udt=True))
    converted = _convert(node, target, flink_type)
    if converted is not node:
        converted.meta[_CAST_TO] = node.args["to"]
    return converted


def _convert(node: exp.Cast, target: exp.DataType, flink_type: str) -> exp.Expr:
    """The Spark expression of a CAST whose Spark type is set: `node`, or `node` made to behave as Flink's."""
    if isinstance(node, exp.TryCast):
        if target.this in _INTEGRAL_TYPES:
            # Flink reads the integer part of '3.9' (3); Spark's TRY_CAST of such text is NULL.
            decimal = exp.DataType.build("DECIMAL(38, 18)", dialect="spark")
            inner = exp.TryCast(this=node.this.copy(), to=decimal, safe=True)
            truncated = exp.TryCast(this=inner, to=node.args["to"].copy(), safe=True)
            return _when_type(node.this, "string", truncated, node.copy())
        parsed = _parsed_text(node, target)
        return _when_type(node.this, "string", parsed, node.copy()) if parsed is not None else node
    if target.this in _TEXT_TYPES:
        complex_type = node.meta.get(annotate.COMPLEX_TEXT)
        if isinstance(complex_type, exp.DataType):
            return complex_text.flink_text(node.this.copy(), complex_type)
        digits = node.meta.get(annotate.TIMESTAMP_TEXT)
        if isinstance(digits, int):
            return complex_text.timestamp_text(node.this.copy(), digits)
        # Flink writes a BOOLEAN as TRUE / FALSE.
        return _when_type(node.this, "boolean", exp.Upper(this=node.copy()), node.copy())
    if target.this in _PARSED_TYPES and not isinstance(node.this, (exp.Literal, exp.Null, exp.Boolean)):
        # Outside ANSI mode (see connector.runtime.engine.flink_arithmetic) Spark's CAST of text that does not
        # convert is NULL; Flink's fails the query, as here.
        value = node.this
        bad = exp.and_(
            exp.Not(this=exp.Is(this=value.copy(), expression=exp.Null())),
            exp.Is(this=node.copy(), expression=exp.Null()),
        )
        message = _cast_failure(value.copy(), flink_type)
        failing = exp.Case(ifs=[exp.If(this=bad, true=fn("raise_error", message))], default=node.copy())
        parsed = _parsed_text(node, target, lambda text: fn("raise_error", _cast_failure(text, flink_type)))
        return _when_type(value, "string", parsed if parsed is not None else failing, node.copy())
    return node


def _cast_failure(value: exp.Expr, flink_type: str) -> exp.Expr:
    """The message of Flink's failed CAST of text `value`."""
    return fn(
        "concat",
        exp.Literal.string("Cannot CAST '"),
        value,
        exp.Literal.string(f"' to {flink_type}: the text is not a valid {flink_type} (TRY_CAST gives NULL)."),
    )


def _parsed_text(
    node: exp.Cast, target: exp.DataType, failure: Callable[[exp.Expr], exp.Expr] | None = None
) -> exp.Expr | None:
    """Flink's CAST of non-literal text to a DATE or TIMESTAMP (`time_functions.text_cast`); None for other targets
    and for literals, which Spark's CAST reads as Flink does."""
    if isinstance(node.this, (exp.Literal, exp.Null)):
        return None
    return times.text_cast(node, target, failure)


_INTEGRAL_TYPES = {
    exp.DataType.Type.TINYINT,
    exp.DataType.Type.SMALLINT,
    exp.DataType.Type.INT,
    exp.DataType.Type.BIGINT,
}
_TEXT_TYPES = {exp.DataType.Type.VARCHAR, exp.DataType.Type.CHAR, exp.DataType.Type.TEXT, exp.DataType.Type.NVARCHAR}
# On the Spark expression of a rewritten CAST: the Spark type it gives (that of the CAST it replaced).
_CAST_TO = "spark_cast_to"
# Spark's `typeof` name of the Spark types `_when_type` asks about; None for types that are neither.
_TYPEOF: dict[exp.DType, str | None] = {
    **dict.fromkeys(exp.DataType.NUMERIC_TYPES | exp.DataType.TEMPORAL_TYPES),
    exp.DataType.Type.TEXT: "string",
    exp.DataType.Type.BOOLEAN: "boolean",
}
_PARSED_TYPES = {
    *exp.DataType.NUMERIC_TYPES,
    exp.DataType.Type.BOOLEAN,
    exp.DataType.Type.DATE,
    *exp.DataType.TEMPORAL_TYPES,
}


def _when_type(value: exp.Expr, spark_type: str, then: exp.Expr, otherwise: exp.Expr) -> exp.Expr:
    """`then` where `value` has Spark type `spark_type`, else `otherwise`. Decided here when `value` is a CAST (or
    one rewritten here), whose type is evident: nested CASTs would otherwise repeat their operand at each level,
    five times as long per level. Else Spark decides: the transpiler knows no types, Spark folds `typeof` when it
    plans the query."""
    evident = value.to if isinstance(value, exp.Cast) else value.meta.get(_CAST_TO) if value._meta else None
    if isinstance(evident, exp.DataType) and evident.this in _TYPEOF:
        return then if _TYPEOF[evident.this] == spark_type else otherwise
    is_type = exp.EQ(this=fn("typeof", value.copy()), expression=exp.Literal.string(spark_type))
    return exp.Case(ifs=[exp.If(this=is_type, true=then)], default=otherwise)


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


def _json_path(path: exp.Expr) -> exp.Expr:
    """Spark's JSONPath has no SQL/JSON mode prefix (`lax $.a`); Flink's default mode is lax."""
    if isinstance(path, exp.Literal) and path.is_string:
        return exp.Literal.string(re.sub(r"^\s*(lax|strict)\s+", "", path.name, flags=re.IGNORECASE))
    return path


def _json_value(node: exp.Expr) -> exp.Expr:
    """Flink's JSON_VALUE: a scalar only (an object or array is NULL), cast by RETURNING. The path mode picks the
    clause a missing member takes: 'lax' makes it empty (ON EMPTY), strict, Flink's default, an error (ON ERROR);
    invalid JSON is an error in both."""
    args = call_args(node) if isinstance(node, exp.Anonymous) else [node.this, node.args["path"]]
    path = args[1]
    lax = isinstance(path, exp.Literal) and re.match(r"^\s*lax\s", path.name, flags=re.IGNORECASE) is not None
    found: exp.Expr = fn("get_json_object", args[0], _json_path(path))
    structured = exp.or_(
        exp.Not(this=exp.Is(this=fn("json_object_keys", found.copy()), expression=exp.Null())),
        exp.Not(this=exp.Is(this=fn("json_array_length", found.copy()), expression=exp.Null())),
    )
    value: exp.Expr = exp.Case(ifs=[exp.If(this=structured, true=exp.Null())], default=found)
    returning = node.args.get("returning")
    if isinstance(returning, exp.DataType):
        value = spark_cast(exp.Cast(this=value, to=returning))
    condition = node.args.get("on_condition")
    if isinstance(condition, exp.OnCondition):
        empty, error = (condition.args.get(k) for k in ("empty", "error"))
        if any(isinstance(c, str) and c.upper().startswith("ERROR") for c in (empty, error)):
            raise TranspileError(
                "JSON_VALUE ... ERROR ON EMPTY/ERROR is not supported: Spark returns NULL for missing or "
                "invalid JSON. Use the default (NULL ON ...) or DEFAULT <value> ON ...",
                node,
            )
        default = empty if lax else error
        if isinstance(default, exp.Expr):
            value = exp.Coalesce(this=value, expressions=[default])
    return value


def _json_exists(node: exp.Expr) -> exp.Expr:
    """Whether the path names a member whose value is not null (Flink: false for {"a": null} and '$.a'). Paths of
    object keys only ($.a.b); invalid JSON is false, a NULL value NULL."""
    args = call_args(node)
    path = _json_path(args[1]) if len(args) == 2 else None
    keys = re.fullmatch(r"\$((?:\.[A-Za-z_][A-Za-z0-9_]*)+)", path.name) if isinstance(path, exp.Literal) else None
    if keys is None or path is None:
        raise TranspileError("JSON_EXISTS is supported with a JSON value and a path of object keys ('$.a.b').", node)
    value = args[0]
    found = exp.not_(exp.Is(this=fn("get_json_object", value.copy(), path), expression=exp.Null()))
    return exp.Case(ifs=[exp.If(this=exp.Is(this=value.copy(), expression=exp.Null()), true=exp.Null())], default=found)


def _json_query(node: exp.Expr) -> exp.Expr:
    """The object or array at the path as JSON text; NULL for a scalar or nothing there (Flink, without a wrapper).
    A string member whose text is itself a JSON array or object is taken for one (get_json_object unquotes it)."""
    args = call_args(node)
    if len(args) != 2:
        raise TranspileError("JSON_QUERY is supported with a value and a path only (no WRAPPER/ON clauses).", node)
    found = fn("get_json_object", args[0], _json_path(args[1]))
    structured = exp.or_(
        exp.not_(exp.Is(this=fn("json_array_length", found.copy()), expression=exp.Null())),
        exp.not_(exp.Is(this=fn("json_object_keys", found.copy()), expression=exp.Null())),
    )
    return exp.Case(ifs=[exp.If(this=structured, true=found)])


def _listagg(node: exp.Expr) -> exp.Expr:
    separator = (
        node.args.get("separator")
        if not isinstance(node, exp.Anonymous)
        else (call_args(node)[1] if len(call_args(node)) > 1 else None)
    )
    value = node.this if not isinstance(node, exp.Anonymous) else call_args(node)[0]
    return fn("listagg", value, separator if separator is not None else exp.Literal.string(","))


def _truncate(node: exp.Expr) -> exp.Expr:
    """TRUNCATE(x[, d]): x cut toward zero to d decimals (d < 0: to tens, hundreds, ...), of x's type. sqlglot's
    Spark rendering casts to BIGINT and drops d; Spark's floor / ceil to a scale give a DECIMAL, cast back to x's
    type where the validator knows it (`annotate.TRUNCATED_TYPE`)."""
    value, digits = node.this, node.args.get("decimals") or exp.Literal.number(0)
    negative = exp.LT(this=value.copy(), expression=exp.Literal.number(0))
    cut = exp.If(this=negative, true=fn("ceil", value.copy(), digits.copy()), false=fn("floor", value, digits))
    kind = node.meta.get(annotate.TRUNCATED_TYPE)
    return exp.Cast(this=cut, to=exp.DataType.build(kind, dialect="spark")) if isinstance(kind, str) else cut


def _elt(node: exp.Expr) -> exp.Expr:
    """ELT(n, ...) is NULL when n is out of range (Spark's elt fails under ANSI)."""
    index, *values = call_args(node)
    inside = exp.Between(this=index.copy(), low=exp.Literal.number(1), high=exp.Literal.number(len(values)))
    return exp.Case(ifs=[exp.If(this=inside, true=fn("elt", index, *values))])


def _sha2(bits: int) -> Callable[[exp.Expr], exp.Expr]:
    return lambda node: fn("sha2", *call_args(node), exp.Literal.number(bits))


def _convert_tz(node: exp.Expr) -> exp.Expr:
    """CONVERT_TZ(text, from, to): the 'yyyy-MM-dd HH:mm:ss' wall-clock time in `from` as text in `to`."""
    text, source, target = call_args(node)
    moved = fn("from_utc_timestamp", fn("to_utc_timestamp", text, source), target)
    return fn("date_format", moved, exp.Literal.string("yyyy-MM-dd HH:mm:ss"))


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
        return _as_date(node, floored)
    amount, spark_unit = {"QUARTER": ("3", "MONTH"), "MILLISECOND": ("0.001", "SECOND")}.get(name, ("1", name))
    one = exp.Interval(this=exp.Literal.string(amount), unit=exp.var(spark_unit))
    exact = exp.EQ(this=floored.copy(), expression=node.this.copy())
    ceiling = exp.Case(
        ifs=[exp.If(this=exact, true=node.this.copy())], default=exp.Add(this=floored.copy(), expression=one)
    )
    return _as_date(node, ceiling)


def _null_if_any_null(node: exp.Expr) -> exp.Expr:
    """Flink's GREATEST and LEAST are NULL when any argument is NULL; Spark's skip NULL arguments."""
    arguments = [node.this, *node.expressions]
    any_null = exp.or_(*[exp.Is(this=a.copy(), expression=exp.Null()) for a in arguments])
    return exp.Case(ifs=[exp.If(this=any_null, true=exp.Null())], default=node.copy())


def _initcap(node: exp.Expr) -> exp.Expr:
    """Flink's (Calcite's) INITCAP: a word is a run of ASCII letters and digits; its first letter is upper-cased
    and its other ASCII letters lower-cased; every other character, non-ASCII letters included, is left alone
    and starts a new word ('foo_bar' -> 'Foo_Bar'). Spark's initcap only splits at spaces."""
    chars = fn("split", node.this, exp.Literal.string(""))
    char, index = exp.to_identifier("__c"), exp.to_identifier("__i")
    previous = fn("element_at", chars.copy(), exp.column(index))  # 1-based: the character before __c
    starts_word = exp.or_(
        exp.EQ(this=exp.column(index), expression=exp.Literal.number(0)),
        exp.Not(this=exp.RegexpLike(this=previous, expression=exp.Literal.string("^[A-Za-z0-9]$"))),
    )
    upper = exp.Case(
        ifs=[
            exp.If(
                this=exp.RegexpLike(this=exp.column(char), expression=exp.Literal.string("^[a-z]$")),
                true=exp.Upper(this=exp.column(char)),
            )
        ],
        default=exp.column(char),
    )
    lower = exp.Case(
        ifs=[
            exp.If(
                this=exp.RegexpLike(this=exp.column(char), expression=exp.Literal.string("^[A-Z]$")),
                true=exp.Lower(this=exp.column(char)),
            )
        ],
        default=exp.column(char),
    )
    body = exp.Case(ifs=[exp.If(this=starts_word, true=upper)], default=lower)
    return fn(
        "array_join", fn("transform", chars, exp.Lambda(this=body, expressions=[char, index])), exp.Literal.string("")
    )


def _division(node: exp.Expr) -> exp.Expr:
    """Flink divides two integers as integers, truncating (10 / 4 = 2, -3 / 4 = 0), and fails on a zero
    divisor; the validator marks such divisions (`connector.sql.rewrite.annotate`)."""
    quotient = node.meta.get(annotate.INTEGER_DIVISION)
    if not isinstance(quotient, str):
        return node
    divisor = node.expression
    divided = exp.Cast(
        this=exp.IntDiv(this=node.this.copy(), expression=divisor.copy()),
        to=exp.DataType.build(quotient, dialect="spark"),
    )
    if isinstance(divisor, exp.Literal) and divisor.name not in ("0", "-0"):
        return divided
    by_zero = exp.EQ(this=divisor.copy(), expression=exp.Literal.number(0))
    failure = fn(
        "raise_error", exp.Literal.string("Division by zero: an integer divided by 0 (java.lang.ArithmeticException).")
    )
    return exp.Case(ifs=[exp.If(this=by_zero, true=failure)], default=divided)


def _similar_to(node: exp.Expr) -> exp.Expr:
    """SQL's SIMILAR TO as a Java regular expression over the whole text (Calcite's translation): % is .*, _ is .,
    and the regex characters SIMILAR TO does not define are literal."""
    pattern = node.expression
    if not (isinstance(pattern, exp.Literal) and pattern.is_string) or node.args.get("escape") is not None:
        raise TranspileError("SIMILAR TO is supported with a literal pattern and no ESCAPE clause.", node)
    translated = "".join(
        ".*" if c == "%" else "." if c == "_" else "\\" + c if c in ".^$\\" else c for c in pattern.name
    )
    return exp.RegexpLike(this=node.this.copy(), expression=exp.Literal.string(f"^(?:{translated})$"))


def _java_math(method: str, *args: exp.Expr) -> exp.Expr:
    """`java.lang.Math.<method>` of DOUBLE arguments. Flink calls Math, whose results may differ in the last digit
    from StrictMath, which Spark's own functions call (Math.exp(1) = 2.718281828459045, StrictMath's ...455)."""
    doubles = [exp.Cast(this=a.copy(), to=exp.DataType.build("DOUBLE")) for a in args]
    called = fn("reflect", exp.Literal.string("java.lang.Math"), exp.Literal.string(method), *doubles)
    any_null = exp.or_(*[exp.Is(this=a.copy(), expression=exp.Null()) for a in args])  # reflect refuses NULL
    return exp.Case(
        ifs=[exp.If(this=any_null, true=exp.Null())], default=exp.Cast(this=called, to=exp.DataType.build("DOUBLE"))
    )


def _math(method: str) -> Callable[[exp.Expr], exp.Expr]:
    return lambda node: _java_math(method, node.this, *([node.expression] if node.args.get("expression") else []))


def _log(node: exp.Expr) -> exp.Expr:
    """LOG10(x) is Math.log10; LOG2(x) and LOG(b, x) are Math.log(x) / Math.log(b), as Flink computes them."""
    base, value = node.this, node.expression
    if value is None:
        return _java_math("log", base)
    if isinstance(base, exp.Literal) and base.name == "10":
        return _java_math("log10", value)
    return exp.Div(this=_java_math("log", value), expression=_java_math("log", base))


def _substring(node: exp.Expr) -> exp.Expr:
    """Flink's SUBSTRING: a start before the beginning of the text (-3 of 'ab') is '' and a negative length
    NULL; Spark starts at the beginning and gives ''."""
    start, length = node.args.get("start"), node.args.get("length")
    checks: list[exp.If] = []
    if length is not None and not (isinstance(length, exp.Literal) and not length.name.startswith("-")):
        negative = exp.LT(this=length.copy(), expression=exp.Literal.number(0))
        checks.append(exp.If(this=negative, true=exp.Null()))
    if start is not None and not (isinstance(start, exp.Literal) and not start.name.startswith("-")):
        before = exp.LT(
            this=exp.Add(this=fn("char_length", node.this.copy()), expression=start.copy()),
            expression=exp.Literal.number(0),
        )
        checks.append(exp.If(this=before, true=exp.Literal.string("")))
    return exp.Case(ifs=checks, default=node.copy()) if checks else node


def _current_timestamp(node: exp.Expr) -> exp.Expr:
    return exp.CurrentTimestamp()


def _row(node: exp.Expr) -> exp.Expr:
    """Flink names a ROW value's fields EXPR$0, EXPR$1, ... (Spark's struct would name them after the columns)."""
    named = [part for i, arg in enumerate(call_args(node)) for part in (exp.Literal.string(f"EXPR${i}"), arg)]
    return fn("named_struct", *named)


def _timestampadd(node: exp.Expr) -> exp.Expr:
    added = fn("timestampadd", exp.var(node.text("unit").upper()), node.expression, node.this)
    return _as_date(node, added)


def _as_date(node: exp.Expr, result: exp.Expr) -> exp.Expr:
    """`result` as a DATE where Flink's stays one (a DATE moved or rounded by days or more: `annotate.DATE_RESULT`);
    Spark's timestampadd and date_trunc give a TIMESTAMP."""
    return exp.cast(result, exp.DataType.build("DATE")) if node.meta.get(annotate.DATE_RESULT) else result


# Flink functions the parser leaves as plain calls, by name.
_FUNCTIONS: dict[str, Callable[[exp.Expr], exp.Expr]] = {
    "PROCTIME": _current_timestamp,
    "NOW": _current_timestamp,
    "CURRENT_ROW_TIMESTAMP": _current_timestamp,
    "TO_TIMESTAMP_LTZ": _to_timestamp_ltz,
    "JSON_VALUE": _json_value,
    "JSON_QUERY": _json_query,
    "JSON_EXISTS": _json_exists,
    "LISTAGG": _listagg,
    "URL_DECODE": lambda node: fn("try_url_decode", *call_args(node)),
    "SHA224": _sha2(224),
    "SHA256": _sha2(256),
    "SHA384": _sha2(384),
    "SHA512": _sha2(512),
    "MAP_UNION": lambda node: fn("map_concat", *call_args(node)),  # a repeated key: the last map's value (LAST_WIN)
    "CONVERT_TZ": _convert_tz,
    **strings.FUNCTIONS,
    **flink_only.FUNCTIONS,
    **json_constructors.FUNCTIONS,
    **times.FUNCTIONS,
    "REGEXP_EXTRACT": _regexp_extract,
    "ROW": _row,
}
MAPPED_CALLS = frozenset(_FUNCTIONS)  # the plain calls above, which the transpiler rewrites for Spark
# Flink's functions written without parentheses that sqlglot reads as column references -> their Spark calls.
NO_PAREN_CALLS: dict[str, Callable[[], exp.Expr]] = {
    "LOCALTIMESTAMP": lambda: fn("localtimestamp"),
    # TIME(0), as Flink's (Spark's current_time() is TIME(6))
    "LOCALTIME": lambda: fn("current_time", exp.Literal.number(0)),
    "CURRENT_TIME": lambda: fn("current_time", exp.Literal.number(0)),
    "PI": lambda: fn("pi"),
}


def no_paren_call(column: exp.Column) -> exp.Expr | None:
    """The Spark call a bare, unquoted column reference stands for (`NO_PAREN_CALLS`), if it is one."""
    if column.table or not isinstance(column.this, exp.Identifier) or column.this.quoted:
        return None
    build = NO_PAREN_CALLS.get(column.name.upper())
    return build() if build else None


# Flink functions the parser turns into typed sqlglot nodes whose Spark rendering differs from Flink.
_NODES: dict[type[exp.Expr], Callable[[exp.Expr], exp.Expr]] = {
    exp.JSONValue: _json_value,
    exp.GroupConcat: _listagg,
    exp.RegexpExtract: _regexp_extract,
    exp.Floor: _floor_ceil,
    exp.Ceil: _floor_ceil,
    exp.TimestampAdd: _timestampadd,
    exp.Greatest: _null_if_any_null,
    exp.Least: _null_if_any_null,
    exp.Initcap: _initcap,
    exp.Div: _division,
    exp.Exp: _math("exp"),
    exp.Ln: _math("log"),
    exp.Log: _log,
    exp.Pow: _math("pow"),
    exp.Sin: _math("sin"),
    exp.Cos: _math("cos"),
    exp.Tan: _math("tan"),
    exp.Asin: _math("asin"),
    exp.Acos: _math("acos"),
    exp.Atan: _math("atan"),
    exp.Cbrt: _math("cbrt"),
    exp.Week: lambda node: fn("weekofyear", node.this),
    exp.Substring: _substring,
    exp.SimilarTo: _similar_to,
    # Flink's FIRST_VALUE / LAST_VALUE skip NULLs; Spark's take them unless told to ignore them
    exp.FirstValue: lambda node: fn("first_value", node.this, exp.true()),
    exp.LastValue: lambda node: fn("last_value", node.this, exp.true()),
    exp.Trunc: _truncate,
    exp.Elt: _elt,
    # NULL for text that is no URL, or does not decode, as in Flink
    exp.ParseUrl: lambda node: fn("try_parse_url", *written_args(node)),
    exp.FromBase64: lambda node: exp.cast(fn("unbase64", node.this), exp.DataType.build("STRING")),
    **arrays.NODES,
    **json_constructors.NODES,
    **strings.NODES,
    **times.NODES,
}
