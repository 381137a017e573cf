"""The `flink` sqlglot dialect: tokenizer, parser and generator pieces, and the script's statements.

Importing this package registers the dialect, so `sqlglot.parse(sql, read="flink")` works."""

from connector.sql.dialect.flink import Flink

__all__ = ["Flink"]
