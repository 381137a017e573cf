"""Parse a pipeline script into statements that know where they start in the file.

The script is tokenized once with the Flink dialect's tokenizer, split into statements at `;` tokens
(a statement set, `EXECUTE STATEMENT SET BEGIN ... END` or the legacy `BEGIN STATEMENT SET; ...
END;`, stays one statement), and each statement is parsed on its own, so every syntax error in the
file is reported, each at the line and column of the offending token. A statement nested deeper than
`connector.sql.dialect.nesting` allows is reported at the token that goes too deep, and not parsed.
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Iterator
from dataclasses import dataclass

from sqlglot import exp
from sqlglot.errors import ErrorLevel, ParseError, TokenError
from sqlglot.parser import Parser
from sqlglot.tokens import Token, TokenType

from connector.diagnostics import Diagnostic, PipelineError
from connector.errors import KafkaSqlError
from connector.sql.dialect import nesting
from connector.sql.dialect.flink import Flink


@dataclass(frozen=True)
class ParsedStatement:
    """One statement of a script: its tree, where it starts (1-based) and its source text."""

    expression: exp.Expr
    line: int
    column: int
    text: str


class _Lines:
    """Turns character offsets in a text into 1-based (line, column) pairs."""

    def __init__(self, text: str) -> None:
        self._starts = [0] + [i + 1 for i, char in enumerate(text) if char == "\n"]

    def position(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self._starts, offset)
        return line, offset - self._starts[line - 1] + 1


@functools.lru_cache(maxsize=8)
def _lines_of(text: str) -> _Lines:
    # node_position is called for many nodes of the same script: index its lines once.
    return _Lines(text)


_DIALECT = Flink()


class CompiledSqlglotError(KafkaSqlError, RuntimeError):
    """sqlglot's compiled build is installed: it refuses the `flink` dialect, whose parser subclasses sqlglot's."""


def _parser() -> Parser:
    try:
        return _DIALECT.parser(error_level=ErrorLevel.IMMEDIATE)
    except TypeError as error:  # mypyc: "interpreted classes cannot inherit from compiled"
        if "cannot inherit from compiled" not in str(error):
            raise
        raise CompiledSqlglotError(
            "sqlglot's compiled build (the 'sqlglotc' package, which 'sqlglot[c]' installs) is in this environment, "
            "and it does not allow dialects outside sqlglot, such as kafka-sql's Flink dialect, to extend its "
            "parser. Remove it: pip uninstall sqlglotc"
        ) from None


def parse_script(sql: str, file: str = "<string>") -> list[ParsedStatement]:
    """Parse every statement of `sql`; raise PipelineError listing every syntax error found."""
    syntax_errors: list[Diagnostic] = []
    statements = list(parse_statements(sql, file, syntax_errors))
    if syntax_errors:
        raise PipelineError(syntax_errors)
    return statements


def parse_statements(sql: str, file: str, syntax_errors: list[Diagnostic]) -> Iterator[ParsedStatement]:
    """Each statement of `sql` as soon as it is parsed, so a caller can keep what it needs of one before the next
    is parsed; a statement with a syntax error is appended to `syntax_errors` and skipped. A file that cannot be
    tokenized raises PipelineError before any statement."""
    lines = _lines_of(sql)
    tokenizer = _DIALECT.tokenizer()
    try:
        tokens = tokenizer.tokenize(sql)
    except TokenError as error:
        raise PipelineError([_token_error(error, tokenizer, sql, lines, file)]) from None

    nesting.allow_max_depth()
    parser = _parser()
    for group in _statement_tokens(tokens):
        deepest = nesting.too_deep(group)
        if deepest is not None:
            syntax_errors.append(Diagnostic(file, *lines.position(deepest.start), "error", "nesting", nesting.MESSAGE))
            continue
        try:
            expressions = [e for e in parser.parse(group, sql) if e is not None]
        except ParseError as error:
            syntax_errors.append(_parse_error(error, group, sql, lines, file))
            continue
        except RecursionError:  # nesting the token check does not count (NOT NOT ... x): at the statement
            syntax_errors.append(Diagnostic(file, *lines.position(group[0].start), "error", "nesting", nesting.MESSAGE))
            continue
        line, column = lines.position(group[0].start)
        text = sql[group[0].start : group[-1].end + 1]
        yield from (ParsedStatement(e, line, column, text) for e in expressions)


def node_position(node: exp.Expr, sql: str) -> tuple[int, int] | None:
    """The 1-based (line, column) in `sql` where `node` starts, or None if the parser left no trace.

    Uses the node's own start offset, else the earliest one among its descendants (identifiers,
    literals, function calls, ... carry one).
    """
    start = node._meta.get("start") if node._meta else None
    if start is None:
        starts = [n._meta["start"] for n in node.walk() if n._meta and n._meta.get("start") is not None]
        if not starts:
            return None
        start = min(starts)
    return _lines_of(sql).position(start)


def _statement_tokens(tokens: list[Token]) -> Iterator[list[Token]]:
    """The tokens of each statement, without the `;` that ends it.

    A statement set keeps its inner `;` tokens, up to the `END` that closes it. Consumes `tokens`: a statement's
    tokens are freed once it is parsed, so a large file never holds all its tokens and all its trees at once
    (its tokens take half as much memory as its trees).
    """
    group: list[Token] = []
    chunk_start = 0
    tokens.reverse()
    while tokens:
        token = tokens.pop()
        if token.token_type != TokenType.SEMICOLON:
            group.append(token)
            continue
        if _is_statement_set(group) and not _closes_statement_set(group[chunk_start:]):
            group.append(token)
            chunk_start = len(group)
            continue
        if group:
            yield group
        group, chunk_start = [], 0
    if group:
        yield group


def _is_statement_set(group: list[Token]) -> bool:
    words = [t.text.upper() for t in group[:3]]
    return words[1:] == ["STATEMENT", "SET"] and words[0] in ("EXECUTE", "BEGIN")


def _closes_statement_set(chunk: list[Token]) -> bool:
    """Whether a `;`-terminated chunk ends with the set's END (and not just a CASE's END)."""
    ends = sum(t.token_type == TokenType.END for t in chunk)
    cases = sum(t.token_type == TokenType.CASE for t in chunk)
    return bool(chunk) and chunk[-1].token_type == TokenType.END and ends > cases


def _token_error(error: TokenError, tokenizer: object, sql: str, lines: _Lines, file: str) -> Diagnostic:
    # The tokenizer keeps the start of the token it failed on; its message has no usable position.
    core = getattr(tokenizer, "_core", None)
    start = getattr(core, "_start", None)
    if not isinstance(start, int) or not 0 <= start < len(sql):
        start = max(len(sql) - 1, 0)
    opener = sql[start : start + 1]
    if opener == "'":
        message = "Unterminated string literal: missing closing '"
    elif opener == "`":
        message = "Unterminated quoted identifier: missing closing `"
    elif sql.startswith("/*", start):
        message = "Unterminated comment: missing closing */"
    else:
        message = f"Cannot read the SQL here: {error.__cause__ or error}"
    line, column = lines.position(start)
    return Diagnostic(file, line, column, "error", "syntax", message)


def _parse_error(error: ParseError, group: list[Token], sql: str, lines: _Lines, file: str) -> Diagnostic:
    detail = error.errors[0] if error.errors else {}
    description = str(detail.get("description") or error)
    start = detail.get("start")
    if detail.get("at_end") or not isinstance(start, int):
        # Input ended: point just past the statement's last token (a statement set keeps its `;`s).
        last = next(t for t in reversed(group) if t.token_type != TokenType.SEMICOLON)
        offset = last.end + 1
        found = "end of statement"
    else:
        offset = start
        text = sql[start : detail["end"] + 1]
        found = text if text[:1] in ("'", "`") else f"'{text}'"
    line, column = lines.position(offset)
    return Diagnostic(file, line, column, "error", "syntax", _message(description, found))


def _message(description: str, found: str) -> str:
    """A short message naming what was found and what was expected."""
    description = description.split(" but got ")[0]
    if found == "'\"'":
        return f"Unexpected {found}: Flink SQL quotes strings with '...' and identifiers with `...`"
    if description.startswith("Unexpected"):
        return description
    if description.startswith("Invalid expression / Unexpected token"):
        return f"Unexpected {found}"
    for prefix in ("Expecting ", "Expected "):
        if description.startswith(prefix):
            return f"Unexpected {found}, expected {description[len(prefix) :]}"
    if description.startswith("Required keyword"):
        return f"Unexpected {found}: the statement is incomplete"
    return f"{description} (at {found})"
