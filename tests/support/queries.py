"""Flink SQL text parsed with the project's dialect, and transpiled to Spark SQL."""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from connector.planning.transpile import to_spark_sql
from connector.sql.dialect.flink import Flink


def parse(flink_sql: str) -> exp.Query:
    """One query in Flink SQL."""
    query = sqlglot.parse_one(flink_sql, read=Flink)
    assert isinstance(query, exp.Query)
    return query


def expression(flink_sql: str) -> exp.Expr:
    """One expression in Flink SQL (as a SELECT's)."""
    select = parse(f"SELECT {flink_sql}")
    assert isinstance(select, exp.Select)
    return select.expressions[0]


def spark_sql(flink_sql: str, **options: object) -> str:
    """The Spark SQL of a Flink query; `options` are `to_spark_sql`'s."""
    return to_spark_sql(parse(flink_sql), **options)  # type: ignore[arg-type]
