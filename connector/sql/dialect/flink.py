"""The `flink` sqlglot dialect: Flink SQL as Flink's SQL client accepts it in a pipeline file.

Importing this module registers the dialect, so `sqlglot.parse(sql, read="flink")` works. Flink SQL is
Calcite with backquoted identifiers and `''`-escaped single-quoted strings (a backslash is an ordinary
character). Its built-in function library is closest to Hive's, which is the parent dialect; the
generator undoes the Hive rewrites that Flink does not share (EXPLODE, TBLPROPERTIES, dropped
temporal precision, ...), so the SQL it produces is Flink SQL.

As in sqlglot's own dialects, the dialect class wires together pieces kept in sibling modules:
- `connector.sql.dialect.parser` / `connector.sql.dialect.schema_parser`: the parser (statements, queries; CREATE
TABLE).
- `connector.sql.dialect.generator`: the generator.
- `connector.sql.dialect.expressions`: the Flink-specific nodes (WindowTVF, StatementSet, ExpectConstraint, ...).
- `connector.sql.dialect.statements`: reading SET, RESET and `/*+ OPTIONS(...) */` hints off a tree.
"""

from __future__ import annotations

from typing import ClassVar

from sqlglot.dialects.dialect import NormalizationStrategy
from sqlglot.dialects.hive import Hive
from sqlglot.tokens import TokenType

from connector.sql.dialect.generator import FlinkGenerator
from connector.sql.dialect.parser import FlinkParser

# Hive/other dialects' keywords that are not Flink's: EXPLAIN is parsed (not a command), the rest are
# plain words in Flink.
_NOT_FLINK_KEYWORDS = {
    "EXPLAIN",
    "ADD ARCHIVE",
    "ADD ARCHIVES",
    "ADD FILE",
    "ADD FILES",
    "ADD JARS",
    "MSCK REPAIR",
    "OPTIMIZE",
    "PREPARE",
    "VACUUM",
}


class FlinkTokenizer(Hive.Tokenizer):
    QUOTES: ClassVar[list[tuple[str, str] | str]] = ["'"]
    STRING_ESCAPES: ClassVar[list[str]] = ["'"]
    IDENTIFIERS: ClassVar[list[str | tuple[str, str]]] = ["`"]
    IDENTIFIER_ESCAPES: ClassVar[list[str]] = ["`"]
    NUMERIC_LITERALS: ClassVar[dict[str, str]] = {}
    # Binary string literals: X'616263' is BYTES
    HEX_STRINGS: ClassVar[list[str | tuple[str, str]]] = [("X'", "'"), ("x'", "'")]
    # Unicode string literals, U&'\0041' (the parser decodes them: `connector.sql.dialect.unicode_strings`)
    UNICODE_STRINGS: ClassVar[list[str | tuple[str, str]]] = [("U&'", "'"), ("u&'", "'")]
    # Hive's `$` parameters (`${var}`) are not Flink SQL; pipeline variables are Jinja's.
    SINGLE_TOKENS: ClassVar[dict[str, TokenType]] = {k: v for k, v in Hive.Tokenizer.SINGLE_TOKENS.items() if k != "$"}

    KEYWORDS: ClassVar[dict[str, TokenType]] = {
        **{k: v for k, v in Hive.Tokenizer.KEYWORDS.items() if k not in _NOT_FLINK_KEYWORDS},
        "BYTES": TokenType.VARBINARY,
        "MATCH_RECOGNIZE": TokenType.MATCH_RECOGNIZE,
        "REMOVE JAR": TokenType.COMMAND,
    }

    # Only ADD JAR, REMOVE JAR and CALL stay opaque commands; EXECUTE and SHOW are parsed.
    COMMANDS: ClassVar[set[TokenType]] = {TokenType.COMMAND}

    # `t /*+ OPTIONS(...) */` hints follow a table name.
    TOKENS_PRECEDING_HINT = Hive.Tokenizer.TOKENS_PRECEDING_HINT | {TokenType.VAR, TokenType.IDENTIFIER}


class Flink(Hive):
    """Flink SQL. Identifiers are case-sensitive and arrays are 1-based, as in Flink."""

    NORMALIZATION_STRATEGY = NormalizationStrategy.CASE_SENSITIVE
    INDEX_OFFSET = 1
    TYPED_DIVISION = True
    SAFE_DIVISION = False
    REGEXP_EXTRACT_DEFAULT_GROUP = 0

    Tokenizer = FlinkTokenizer
    Parser = FlinkParser
    Generator = FlinkGenerator
