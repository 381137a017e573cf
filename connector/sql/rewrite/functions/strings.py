"""Flink's string search and split functions, rewritten where Spark's namesakes differ (checked against Flink 2.3 by
the conformance cases `split`, `string_functions` and `functions_edges_more`).

Spark's split takes a regular expression where Flink's SPLIT and SPLIT_INDEX take the delimiter as written; Spark's
instr has no start or occurrence, and its locate finds nothing from a position below 1, where Flink starts at 1;
Spark's replace of '' and overlay past the end differ too (`replace_overlay_dates`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from sqlglot import exp

from connector.sql.rewrite.nodes import call_args, fn, written_args

_REGEX_METACHARACTER = r"([\\^$.|?*+()\[\]{}])"
_AT = "__at"


def _literal_pattern(separator: exp.Expr) -> exp.Expr:
    """A Java regular expression matching `separator` as written."""
    if isinstance(separator, exp.Literal) and separator.is_string:
        return exp.Literal.string(re.sub(_REGEX_METACHARACTER, r"\\\1", separator.name))
    # escaped character by character: quoting with \Q...\E breaks on a separator that holds \E
    return fn("regexp_replace", separator, exp.Literal.string(_REGEX_METACHARACTER), exp.Literal.string(r"\\$1"))


def _split_index(node: exp.Expr) -> exp.Expr:
    """Flink splits on the literal separator, Spark on a regex: escape it. Index is 0-based in both (`get`)."""
    text, separator, index = call_args(node)
    return fn("get", fn("split", text, _literal_pattern(separator), exp.Literal.number(-1)), index)


def _split(node: exp.Expr) -> exp.Expr:
    """SPLIT(string, delimiter): on the delimiter as written, and '' into no elements (Spark's split: [''])."""
    text, separator = call_args(node)
    parts = fn("split", text, _literal_pattern(separator), exp.Literal.number(-1))
    empty = exp.cast(fn("array"), exp.DataType.build("ARRAY<STRING>"))
    return exp.Case(
        ifs=[exp.If(this=exp.EQ(this=text.copy(), expression=exp.Literal.string("")), true=empty)], default=parts
    )


def _instr(node: exp.Expr) -> exp.Expr:
    """INSTR(string, substring[, start[, occurrence]]): where the occurrence-th match begins, searching forward from
    `start`, or backward from the start-th character from the end when `start` is negative; 0 when there is none."""
    text, part, *rest = call_args(node)
    if not rest:
        return fn("instr", text, part)
    start = rest[0]
    occurrence = rest[1] if len(rest) > 1 else exp.Literal.number(1)
    at = exp.column(_AT)
    length = fn("length", text.copy())
    # every position where `part` begins, in order
    matches = fn(
        "filter",
        fn("sequence", exp.Literal.number(1), fn("greatest", length, exp.Literal.number(1))),
        exp.Lambda(
            this=exp.EQ(this=fn("substring", text.copy(), at, fn("length", part.copy())), expression=part.copy()),
            expressions=[exp.to_identifier(_AT)],
        ),
    )
    backward_from = exp.Add(
        this=fn("length", text.copy()), expression=exp.Add(this=start.copy(), expression=exp.Literal.number(1))
    )
    forward = fn(
        "filter",
        matches.copy(),
        exp.Lambda(this=exp.GTE(this=at.copy(), expression=start.copy()), expressions=[exp.to_identifier(_AT)]),
    )
    backward = fn(
        "reverse",
        fn(
            "filter",
            matches,
            exp.Lambda(this=exp.LTE(this=at.copy(), expression=backward_from), expressions=[exp.to_identifier(_AT)]),
        ),
    )
    candidates = exp.If(this=exp.LT(this=start.copy(), expression=exp.Literal.number(0)), true=backward, false=forward)
    found = exp.Coalesce(this=fn("try_element_at", candidates, occurrence), expressions=[exp.Literal.number(0)])
    inputs_null = exp.or_(*[exp.Is(this=a.copy(), expression=exp.Null()) for a in (text, part, start, occurrence)])
    return exp.Case(ifs=[exp.If(this=inputs_null, true=exp.Null())], default=found)


def _locate(node: exp.Expr) -> exp.Expr:
    """LOCATE(substring, string, start): a start below 1 searches from the first character."""
    text, part, *rest = written_args(node)
    if not rest:
        return fn("locate", part, text)
    start = rest[0]
    below_one = exp.LT(this=start.copy(), expression=exp.Literal.number(1))
    return fn("locate", part, text, exp.If(this=below_one, true=exp.Literal.number(1), false=start))


def _replace(node: exp.Expr) -> exp.Expr:
    """REPLACE(string, '', replacement) puts the replacement before, between and after the characters, as Java's
    String.replace does (Spark's replace leaves the string as it is)."""
    text, search, replacement = written_args(node)
    # Java regex replacement text: \ and $ taken literally
    literal = fn("regexp_replace", replacement.copy(), exp.Literal.string(r"([\\$])"), exp.Literal.string(r"\\$1"))
    everywhere = exp.If(
        this=exp.EQ(this=text.copy(), expression=exp.Literal.string("")),
        true=replacement.copy(),
        false=fn("regexp_replace", text.copy(), exp.Literal.string(""), literal),
    )
    empty = exp.EQ(this=search.copy(), expression=exp.Literal.string(""))
    return exp.Case(ifs=[exp.If(this=empty, true=everywhere)], default=fn("replace", text, search, replacement))


def _overlay(node: exp.Expr) -> exp.Expr:
    """OVERLAY(string PLACING s FROM start [FOR n]) from past the string's end leaves it as it is (Spark's appends)."""
    past_end = exp.GT(this=node.args["from_"].copy(), expression=fn("char_length", node.this.copy()))
    return exp.Case(ifs=[exp.If(this=past_end, true=node.this.copy())], default=node.copy())


FUNCTIONS: dict[str, Callable[[exp.Expr], exp.Expr]] = {
    "SPLIT": _split,
    "SPLIT_INDEX": _split_index,
    "INSTR": _instr,
}
NODES: dict[type[exp.Expr], Callable[[exp.Expr], exp.Expr]] = {
    exp.StrPosition: _locate,
    exp.Replace: _replace,
    exp.Overlay: _overlay,
}
