"""Flink types -> Spark types, and Flink's CAST matrix. (Spark parsing the DDL text of a type:
tests/integration/test_type_ddl.py.)"""

from __future__ import annotations

import pytest
from pyspark.sql import types as T
from sqlglot import exp

from connector.catalog.spark_types import spark_field, spark_type
from connector.catalog.types import (
    CastSupport,
    TypeMappingError,
    cast_support,
    spark_type_ddl,
)
from connector.sql.dialect.flink import Flink


def flink(type_sql: str) -> exp.DataType:
    return exp.DataType.build(type_sql, dialect=Flink)


@pytest.mark.parametrize(
    ("flink_type", "expected"),
    [
        ("CHAR(3)", T.StringType()),
        ("VARCHAR(10)", T.StringType()),
        ("STRING", T.StringType()),
        ("BOOLEAN", T.BooleanType()),
        ("BINARY(4)", T.BinaryType()),
        ("VARBINARY(4)", T.BinaryType()),
        ("BYTES", T.BinaryType()),
        ("DECIMAL", T.DecimalType(10, 0)),
        ("DECIMAL(12, 2)", T.DecimalType(12, 2)),
        ("DEC(5)", T.DecimalType(5, 0)),
        ("NUMERIC(5, 1)", T.DecimalType(5, 1)),
        ("TINYINT", T.ByteType()),
        ("SMALLINT", T.ShortType()),
        ("INT", T.IntegerType()),
        ("INTEGER", T.IntegerType()),
        ("BIGINT", T.LongType()),
        ("FLOAT", T.FloatType()),
        ("DOUBLE", T.DoubleType()),
        ("DOUBLE PRECISION", T.DoubleType()),
        ("DATE", T.DateType()),
        ("TIME", T.StringType()),
        ("TIME(3)", T.StringType()),
        ("TIMESTAMP", T.TimestampNTZType()),
        ("TIMESTAMP(3)", T.TimestampNTZType()),
        ("TIMESTAMP(9) WITHOUT TIME ZONE", T.TimestampNTZType()),
        ("TIMESTAMP_LTZ(3)", T.TimestampType()),
        ("TIMESTAMP(3) WITH LOCAL TIME ZONE", T.TimestampType()),
        ("TIMESTAMP WITH LOCAL TIME ZONE", T.TimestampType()),
        ("INTERVAL YEAR", T.YearMonthIntervalType(T.YearMonthIntervalType.YEAR, T.YearMonthIntervalType.YEAR)),
        ("INTERVAL YEAR TO MONTH", T.YearMonthIntervalType()),
        ("INTERVAL YEAR(2) TO MONTH", T.YearMonthIntervalType()),
        ("INTERVAL MONTH", T.YearMonthIntervalType(T.YearMonthIntervalType.MONTH, T.YearMonthIntervalType.MONTH)),
        ("INTERVAL DAY TO SECOND(3)", T.DayTimeIntervalType()),
        ("INTERVAL DAY(2) TO SECOND(3)", T.DayTimeIntervalType()),
        ("INTERVAL HOUR TO MINUTE", T.DayTimeIntervalType(T.DayTimeIntervalType.HOUR, T.DayTimeIntervalType.MINUTE)),
        ("INTERVAL SECOND(3)", T.DayTimeIntervalType(T.DayTimeIntervalType.SECOND, T.DayTimeIntervalType.SECOND)),
        ("ARRAY<INT>", T.ArrayType(T.IntegerType(), containsNull=True)),
        ("ARRAY<INT NOT NULL>", T.ArrayType(T.IntegerType(), containsNull=False)),
        ("MAP<STRING, BIGINT>", T.MapType(T.StringType(), T.LongType(), valueContainsNull=True)),
        ("MULTISET<STRING>", T.MapType(T.StringType(), T.IntegerType(), valueContainsNull=False)),
        ("RAW('java.lang.String', 'AAA=')", T.BinaryType()),
        ("NULL", T.NullType()),
    ],
)
def test_spark_type(flink_type: str, expected: T.DataType) -> None:
    assert spark_type(flink(flink_type)) == expected
    # The Spark-free DDL text names the same type (validation uses it without pyspark).
    assert spark_type_ddl(flink(flink_type)).replace(" ", "") == expected.simpleString().upper().replace(" ", "")


def test_row_becomes_struct_with_nullability_and_comments() -> None:
    struct = spark_type(flink("ROW<id BIGINT NOT NULL 'the key', `full name` STRING, tags ARRAY<STRING>>"))

    assert struct == T.StructType(
        [
            T.StructField("id", T.LongType(), nullable=False, metadata={"comment": "the key"}),
            T.StructField("full name", T.StringType(), nullable=True),
            T.StructField("tags", T.ArrayType(T.StringType()), nullable=True),
        ]
    )


def test_spark_field_is_nullable_unless_the_column_says_not_null() -> None:
    elements_not_null = spark_field("a", flink("ARRAY<INT NOT NULL>"))
    column_not_null = spark_field("b", flink("STRING"), nullable=False)

    assert elements_not_null == T.StructField("a", T.ArrayType(T.IntegerType(), containsNull=False), nullable=True)
    assert column_not_null == T.StructField("b", T.StringType(), nullable=False)


@pytest.mark.parametrize(
    ("flink_type", "ddl"),
    [
        ("STRING", "STRING"),
        ("DECIMAL", "DECIMAL(10,0)"),
        ("TIMESTAMP(3)", "TIMESTAMP_NTZ"),
        ("TIMESTAMP_LTZ(3)", "TIMESTAMP"),
        ("INTERVAL DAY TO SECOND", "INTERVAL DAY TO SECOND"),
        ("MULTISET<INT>", "MAP<INT, INT>"),
        (
            "ROW<a INT NOT NULL 'it''s', `b c` ARRAY<MAP<STRING, BYTES>>>",
            "STRUCT<`a`: INT NOT NULL COMMENT 'it\\'s', `b c`: ARRAY<MAP<STRING, BINARY>>>",
        ),
    ],
)
def test_spark_type_ddl(flink_type: str, ddl: str) -> None:
    assert spark_type_ddl(flink(flink_type)) == ddl


def test_types_without_spark_equivalent_are_reported() -> None:
    with pytest.raises(TypeMappingError, match="DECIMAL"):
        spark_type(flink("DECIMAL(40, 2)"))


@pytest.mark.parametrize(
    ("source", "target", "support"),
    [
        ("INT", "STRING", CastSupport.SUPPORTED),
        ("ARRAY<INT>", "STRING", CastSupport.SUPPORTED),
        ("STRING", "INT", CastSupport.FALLIBLE),
        ("STRING", "TIMESTAMP(3)", CastSupport.FALLIBLE),
        ("STRING", "BYTES", CastSupport.FALLIBLE),
        ("STRING", "ARRAY<STRING>", CastSupport.UNSUPPORTED),
        ("INT", "DOUBLE", CastSupport.SUPPORTED),
        ("DOUBLE", "TINYINT", CastSupport.SUPPORTED),
        ("TINYINT", "BOOLEAN", CastSupport.SUPPORTED),
        ("DOUBLE", "BOOLEAN", CastSupport.UNSUPPORTED),
        ("BOOLEAN", "DECIMAL(5, 2)", CastSupport.SUPPORTED),
        ("BIGINT", "TIMESTAMP(3)", CastSupport.UNSUPPORTED),
        ("BIGINT", "TIMESTAMP_LTZ(3)", CastSupport.UNSUPPORTED),
        ("TIMESTAMP(3)", "BIGINT", CastSupport.UNSUPPORTED),
        ("TIMESTAMP(3)", "TIMESTAMP_LTZ(3)", CastSupport.SUPPORTED),
        ("TIMESTAMP_LTZ(3)", "TIMESTAMP(3)", CastSupport.SUPPORTED),
        ("TIMESTAMP(3)", "DATE", CastSupport.SUPPORTED),
        ("DATE", "TIME", CastSupport.UNSUPPORTED),
        ("BYTES", "STRING", CastSupport.SUPPORTED),
        ("BYTES", "INT", CastSupport.UNSUPPORTED),
        ("INT", "INTERVAL YEAR TO MONTH", CastSupport.SUPPORTED),
        ("BIGINT", "INTERVAL DAY TO SECOND", CastSupport.SUPPORTED),
        ("INT", "INTERVAL DAY TO SECOND", CastSupport.UNSUPPORTED),
        ("INTERVAL DAY TO SECOND", "INTERVAL YEAR TO MONTH", CastSupport.UNSUPPORTED),
        ("ARRAY<INT>", "ARRAY<STRING>", CastSupport.FALLIBLE),
        ("ARRAY<BYTES>", "ARRAY<INT>", CastSupport.UNSUPPORTED),
        ("ROW<a INT, b STRING>", "ROW<x BIGINT, y STRING>", CastSupport.FALLIBLE),
        ("ROW<a INT>", "ROW<x BIGINT, y STRING>", CastSupport.UNSUPPORTED),
        ("MAP<STRING, INT>", "MAP<STRING, DOUBLE>", CastSupport.FALLIBLE),
        ("NULL", "ROW<a INT>", CastSupport.SUPPORTED),
        ("INT", "INT NOT NULL", CastSupport.SUPPORTED),
    ],
)
def test_cast_support_follows_flinks_cast_matrix(source: str, target: str, support: CastSupport) -> None:
    assert cast_support(flink(source), flink(target)) is support
