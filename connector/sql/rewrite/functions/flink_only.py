"""Flink functions Spark has no function for, each written as a Spark SQL expression (checked against Flink 2.3 by
the conformance case `flink_only_functions_more`).

A template is Spark SQL whose placeholders `:a`, `:b` stand for the call's arguments in order
(`rewriting.from_template`). The rules are Flink's as measured:

* IS_ALPHA / IS_DIGIT: every character a letter / a decimal digit of any script (Java's Character.isLetter /
  isDigit of each UTF-16 unit: none beyond U+FFFF), FALSE for '' and NULL;
* IS_DECIMAL: an integer of any script's digits, or what Java's Double.parseDouble reads (the grammar its
  documentation gives: surrounding control characters and spaces, NaN, Infinity, hexadecimal, a type suffix),
  FALSE for NULL;
* INET_ATON: 1 to 4 dot-separated parts of at most 255 each, the last one the lowest byte ('1.2' is 1.0.0.2),
  NULL otherwise; INET_NTOA: NULL outside [0, 2^32);
* JSON_QUOTE escapes '"', '\\', '/' and \\b \\f \\n \\r \\t, and writes characters beyond ASCII as \\uxxxx (other
  control characters stay as they are; one beyond U+FFFF as Flink does, its code point then its low surrogate);
  JSON_UNQUOTE unescapes a value that is a quoted JSON string (quotes inside may be unescaped) and returns anything
  else unchanged;
* ELEMENT: the only element of an array, NULL for an empty or NULL one, an error for more than one;
* RAND_INTEGER([seed,] bound): an INT in [0, bound) (with a seed, another sequence than Flink's, as RAND's).
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from connector.sql.rewrite.nodes import TranspileError, call_args, from_template

# java.lang.Double.valueOf's documented grammar, less its leading and trailing [\x00-\x20]* (added below).
_JAVA_DOUBLE = (
    r"[+-]?(NaN|Infinity|((((\p{Digit}+)(\.)?((\p{Digit}+)?)([eE][+-]?(\p{Digit}+))?)|(\.((\p{Digit}+))"
    r"([eE][+-]?(\p{Digit}+))?)|(((0[xX](\p{XDigit}+)(\.)?)|(0[xX](\p{XDigit}+)?(\.)((\p{XDigit}+))))[pP][+-]?"
    r"(\p{Digit}+)))[fFdD]?))"
)
_SPACE = r"[\x00-\x20]*"

_TEMPLATES: dict[str, dict[int, str]] = {
    # Java checks each UTF-16 unit: a character beyond U+FFFF (two units, surrogates) is neither
    "IS_ALPHA": {1: r"coalesce(:a RLIKE '^[\\p{L}&&[^\\x{10000}-\\x{10FFFF}]]+\\z', false)"},
    "IS_DIGIT": {1: r"coalesce(:a RLIKE '^[\\p{Nd}&&[^\\x{10000}-\\x{10FFFF}]]+\\z', false)"},
    "IS_DECIMAL": {
        1: r"coalesce(:a RLIKE '^[+-]?[\\p{Nd}&&[^\\x{10000}-\\x{10FFFF}]]+\\z' OR :a RLIKE '^"
        + (_SPACE + _JAVA_DOUBLE + _SPACE).replace("\\", "\\\\")
        + r"\\z', false)"
    },
    "INET_ATON": {
        1: r"""CASE WHEN :a RLIKE '^[0-9]+(\\.[0-9]+){0,3}\\z'
                     AND forall(split(:a, '\\.'), p -> coalesce(try_cast(p AS BIGINT) <= 255, false))
                THEN aggregate(sequence(1, size(split(:a, '\\.'))), CAST(0 AS BIGINT),
                               (acc, i) -> acc + CAST(element_at(split(:a, '\\.'), i) AS BIGINT)
                                 * CASE WHEN i = size(split(:a, '\\.')) THEN 1 ELSE shiftleft(1L, 32 - 8 * i) END)
           END"""
    },
    "INET_NTOA": {
        1: """CASE WHEN CAST(:a AS BIGINT) BETWEEN 0 AND 4294967295
                THEN concat_ws('.', CAST(shiftright(CAST(:a AS BIGINT), 24) AS STRING),
                               CAST(shiftright(CAST(:a AS BIGINT), 16) & 255 AS STRING),
                               CAST(shiftright(CAST(:a AS BIGINT), 8) & 255 AS STRING),
                               CAST(CAST(:a AS BIGINT) & 255 AS STRING))
           END"""
    },
    "JSON_QUOTE": {
        1: """concat('"', array_join(transform(split(:a, ''), c -> CASE
                WHEN c IN ('"', chr(92), '/') THEN concat(chr(92), c)
                WHEN c = chr(8) THEN concat(chr(92), 'b') WHEN c = chr(12) THEN concat(chr(92), 'f')
                WHEN c = chr(10) THEN concat(chr(92), 'n') WHEN c = chr(13) THEN concat(chr(92), 'r')
                WHEN c = chr(9) THEN concat(chr(92), 't')
                WHEN ascii(c) > 65535 THEN concat(chr(92), 'u', lower(hex(ascii(c))),
                                                  chr(92), 'u', lower(hex(56320 + ((ascii(c) - 65536) & 1023))))
                WHEN ascii(c) > 127 THEN concat(chr(92), 'u', lpad(lower(hex(ascii(c))), 4, '0'))
                ELSE c END), ''), '"')"""
    },
    "JSON_UNQUOTE": {
        # the escapes between the quotes, unrolled: no alternation under a repetition, which Java's regex engine
        # runs by recursing once per repetition (a stack overflow on long values)
        1: r"""CASE WHEN length(:a) >= 2 AND startswith(:a, '"') AND endswith(:a, '"')
                     AND substring(:a, 2, length(:a) - 2)
                         RLIKE '^[^\\\\]*+(\\\\(["\\\\/bfnrt]|u[0-9a-fA-F]{4})[^\\\\]*+)*+\\z'
                THEN reflect('org.apache.commons.text.StringEscapeUtils', 'unescapeJson',
                             substring(:a, 2, length(:a) - 2))
                ELSE :a END"""
    },
    "ELEMENT": {
        1: "CASE WHEN size(:a) > 1 THEN raise_error('ELEMENT: the array has more than one element') "
        "ELSE try_element_at(:a, 1) END"
    },
    "RAND_INTEGER": {
        1: "CAST(floor(rand() * :a) AS INT)",
        2: "CAST(floor(rand(:a) * :b) AS INT)",
    },
}


def _rewrite(name: str) -> Callable[[exp.Expr], exp.Expr]:
    def rewrite(node: exp.Expr) -> exp.Expr:
        args = call_args(node)
        if len(args) not in _TEMPLATES[name]:
            raise TranspileError(f"{name} takes {' or '.join(map(str, _TEMPLATES[name]))} arguments.", node)
        return from_template(_TEMPLATES[name][len(args)], **dict(zip("ab", args, strict=False)))

    return rewrite


FUNCTIONS: dict[str, Callable[[exp.Expr], exp.Expr]] = {name: _rewrite(name) for name in _TEMPLATES}
