"""Flink's reserved words written as unquoted identifiers: Flink's parser refuses every one ("Encountered "value" at
line 1, column 20"), as a column, table, view, function or alias name and in a column reference. The words are those
Flink's own parser reserves (`flink_reserved.txt`, written by `make flink-reserved`); Flink's documentation lists
non-reserved keywords with them.

The loader reports each as a warning, not an error: Spark reads such names, kafka-sql ran files with them before it
checked, and refusing them now would stop pipelines that run; the warning says the file is not one Flink accepts
and how to make it one.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path

from sqlglot import exp

RESERVED_FILE = Path(__file__).with_name("flink_reserved.txt")
# Reserved words Calcite reads as calls of functions without arguments where a column reference may stand; Flink then
# reads a column of that name if the query has one (`SELECT user FROM t` reads column `user`, checked with Flink 2.3).
NILADIC_FUNCTIONS = frozenset(
    {
        "CURRENT_CATALOG",
        "CURRENT_DATE",
        "CURRENT_DEFAULT_TRANSFORM_GROUP",
        "CURRENT_PATH",
        "CURRENT_ROLE",
        "CURRENT_SCHEMA",
        "CURRENT_TIME",
        "CURRENT_TIMESTAMP",
        "CURRENT_USER",
        "LOCALTIME",
        "LOCALTIMESTAMP",
        "SESSION_USER",
        "SYSTEM_USER",
        "USER",
    }
)


@functools.cache
def reserved_words() -> frozenset[str]:
    lines = RESERVED_FILE.read_text(encoding="utf-8").splitlines()
    return frozenset(line.strip() for line in lines if line.strip() and not line.startswith("#"))


def unquoted_reserved(statement: exp.Expr) -> Iterator[exp.Identifier]:
    """The identifiers of `statement` that Flink's parser refuses: reserved words without backquotes."""
    words = reserved_words()
    for identifier in statement.find_all(exp.Identifier):
        if identifier.quoted or identifier.name.upper() not in words:
            continue
        column = identifier.parent
        bare = isinstance(column, exp.Column) and column.this is identifier and not column.table
        if bare and identifier.name.upper() in NILADIC_FUNCTIONS:
            continue
        yield identifier


def message(identifier: exp.Identifier) -> str:
    name = identifier.name
    return f"'{name}' is a reserved word in Flink SQL, which refuses it as a name unquoted; quote it: `{name}`"
