"""How deeply one statement may nest expressions: checked on its tokens, before it is parsed.

sqlglot parses nested expressions recursively, about 25 Python frames per level of parentheses, function call,
`[...]` or CASE (Python's default limit of 1,000 frames ends near 45 levels), and the validator, transpiler and
generator recurse through the same levels after it. So a statement nested deeper than `MAX_DEPTH` is a located
error, and the recursion limit is raised once to what `MAX_DEPTH` levels need. Chains that do not nest,
`a OR b OR ...` or `x + y + ...` of any length, are parsed in a loop and have no limit.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable

from sqlglot.tokens import Token, TokenType

MAX_DEPTH = 100
# The recursion MAX_DEPTH levels need (measured at most 24 frames a level), with room for the caller's own frames.
RECURSION_LIMIT = 2_000 + MAX_DEPTH * 30

MESSAGE = (
    f"Expression nested deeper than {MAX_DEPTH} levels (parentheses, function calls, [...] or CASE). "
    "Move inner parts into a view or a WITH query."
)

_OPENING = frozenset({TokenType.L_PAREN, TokenType.L_BRACKET, TokenType.CASE})
_CLOSING = frozenset({TokenType.R_PAREN, TokenType.R_BRACKET, TokenType.END})


def too_deep(tokens: Iterable[Token]) -> Token | None:
    """The token that opens level `MAX_DEPTH` + 1 in a statement's tokens, or None when it nests no deeper."""
    depth = 0
    for token in tokens:
        kind = token.token_type
        if kind in _OPENING:
            depth += 1
            if depth > MAX_DEPTH:
                return token
        elif kind in _CLOSING and depth:
            depth -= 1
    return None


def allow_max_depth() -> None:
    """Raise Python's recursion limit to what statements of `MAX_DEPTH` levels need (never lower it): every stage
    after parsing walks the same trees in this process."""
    if sys.getrecursionlimit() < RECURSION_LIMIT:
        sys.setrecursionlimit(RECURSION_LIMIT)
