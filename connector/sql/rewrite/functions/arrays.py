"""Flink's array functions whose Spark namesakes differ, rewritten to give Flink's result (each checked against Flink
2.3 by the conformance case `array_functions_more`).

Spark's functions treat NULL elements and offsets their own way: `array_contains` is NULL when the array holds a
NULL and no match, `array_remove(a, NULL)` is NULL, `array_sort` puts NULLs last, and `slice` takes a length and
refuses offset 0. Flink compares elements NULL-safely, removes NULLs, sorts NULLs first when ascending, and slices
between two inclusive offsets.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from connector.sql.rewrite.nodes import fn, written_args

_ELEMENT, _INDEX = "__element", "__index"


def _lambda(body: exp.Expr, *names: str) -> exp.Lambda:
    return exp.Lambda(this=body, expressions=[exp.to_identifier(n) for n in names])


def _element() -> exp.Expr:
    return exp.column(_ELEMENT)


def _is_null(value: exp.Expr) -> exp.Expr:
    return exp.Is(this=value.copy(), expression=exp.Null())


def _where(array: exp.Expr, condition: exp.Expr) -> exp.Expr:
    """The elements of `array` for which `condition` (over `__element`) holds."""
    return fn("filter", array.copy(), _lambda(condition, _ELEMENT))


def _array_slice(node: exp.Expr) -> exp.Expr:
    """ARRAY_SLICE(array, start[, end]): the elements from `start` to `end` inclusive (1-based; negative counts from
    the end; start 0 is the first element, end 0 the first too; end defaults to the last); NULL if any is NULL."""
    array, start, *rest = written_args(node)
    size = fn("size", array.copy())
    end = rest[0] if rest else size.copy()

    def from_end(offset: exp.Expr) -> exp.Expr:
        negative = exp.LT(this=offset.copy(), expression=exp.Literal.number(0))
        moved = exp.Add(this=offset.copy(), expression=exp.Add(this=size.copy(), expression=exp.Literal.number(1)))
        return exp.If(this=negative, true=moved, false=offset.copy())

    first = fn("greatest", exp.Literal.number(1), from_end(start))
    last_offset = from_end(end)
    last = exp.If(
        this=exp.EQ(this=last_offset, expression=exp.Literal.number(0)),
        true=exp.Literal.number(1),
        false=last_offset.copy(),
    )
    position = exp.Add(this=exp.column(_INDEX), expression=exp.Literal.number(1))
    inside = exp.Between(this=position, low=first, high=last)
    sliced = fn("filter", array.copy(), _lambda(inside, _ELEMENT, _INDEX))
    offsets_null = exp.or_(_is_null(start), _is_null(end))
    return exp.Case(ifs=[exp.If(this=offsets_null, true=exp.Null())], default=sliced)


def _array_remove(node: exp.Expr) -> exp.Expr:
    """ARRAY_REMOVE(array, NULL) removes the NULL elements (Spark's gives NULL)."""
    array, value = written_args(node)
    without_nulls = _where(array, exp.not_(_is_null(_element())))
    return exp.Case(ifs=[exp.If(this=_is_null(value), true=without_nulls)], default=fn("array_remove", array, value))


def _array_contains(node: exp.Expr) -> exp.Expr:
    """ARRAY_CONTAINS compares NULL-safely: TRUE for a NULL value when the array holds a NULL, FALSE (not NULL) when
    it holds a NULL and no match."""
    array, value = written_args(node)
    return fn("exists", array.copy(), _lambda(exp.NullSafeEQ(this=_element(), expression=value.copy()), _ELEMENT))


def _array_sort(node: exp.Expr) -> exp.Expr:
    """ARRAY_SORT(array[, ascending[, nulls_first]]): NULLs first when ascending and last when descending unless
    `nulls_first` says otherwise (Spark's array_sort puts them last, and its second argument is a comparator)."""
    array, *rest = written_args(node)
    if not rest:
        return fn("sort_array", array, exp.true())
    ascending = rest[0]
    if len(rest) == 1 and isinstance(ascending, exp.Boolean):
        return fn("sort_array", array, ascending)  # sort_array's NULLs: first ascending, last descending
    nulls_first = rest[1] if len(rest) > 1 else ascending.copy()
    nulls = _where(array, _is_null(_element()))
    values = fn("sort_array", _where(array, exp.not_(_is_null(_element()))), ascending.copy())
    ordered = exp.If(
        this=nulls_first.copy(), true=fn("concat", nulls.copy(), values.copy()), false=fn("concat", values, nulls)
    )
    flags_null = exp.or_(*[_is_null(flag) for flag in rest])
    return exp.Case(ifs=[exp.If(this=flags_null, true=exp.Null())], default=ordered)


def _append(name: str) -> Callable[[exp.Expr], exp.Expr]:
    """ARRAY_APPEND / ARRAY_PREPEND of a NULL array is NULL (sqlglot's Spark rendering appends to an empty one)."""
    return lambda node: fn(name, *written_args(node))


_ARRAY_AGG = "flink_array_agg"  # meta of ARRAY_AGG's rewrite: its IGNORE / RESPECT NULLS wrapper is dropped


def _array_agg(node: exp.Expr) -> exp.Expr:
    """ARRAY_AGG([DISTINCT] x [IGNORE NULLS]): Flink keeps NULL elements unless told to ignore them, Spark's
    collect_list drops them, so each value is collected in a struct. DISTINCT (refused on streams) keeps each
    value's first occurrence, NULL once; Flink's order is its hash set's."""
    distinct = isinstance(node.this, exp.Distinct)
    value = node.this.expressions[0] if distinct else node.this
    if isinstance(node.parent, exp.IgnoreNulls):
        collected = fn("collect_list", value.copy())
    else:
        wrapped = fn("collect_list", fn("named_struct", exp.Literal.string("v"), value.copy()))
        collected = fn(
            "transform", wrapped, _lambda(exp.Dot(this=_element(), expression=exp.to_identifier("v")), _ELEMENT)
        )
    result = fn("array_distinct", collected) if distinct else collected
    result.meta[_ARRAY_AGG] = True
    return result


def _nulls_clause(node: exp.Expr) -> exp.Expr:
    """IGNORE / RESPECT NULLS of an ARRAY_AGG, which `_array_agg` has read."""
    return node.this if node.this.meta.get(_ARRAY_AGG) else node


NODES: dict[type[exp.Expr], Callable[[exp.Expr], exp.Expr]] = {
    exp.ArrayAgg: _array_agg,
    exp.IgnoreNulls: _nulls_clause,
    exp.RespectNulls: _nulls_clause,
    exp.ArraySlice: _array_slice,
    exp.ArrayRemove: _array_remove,
    exp.ArrayContains: _array_contains,
    exp.ArraySort: _array_sort,
    exp.ArrayAppend: _append("array_append"),
    exp.ArrayPrepend: _append("array_prepend"),
    exp.ArrayReverse: lambda node: fn("reverse", node.this),  # sqlglot renders ARRAY_REVERSE, which Spark lacks
}
