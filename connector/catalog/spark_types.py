"""Flink SQL data types as pyspark type objects, for the runtime's schemas, casts and UDF result types.

`connector.catalog.types` decides which Spark type holds a Flink type and names it as Spark SQL DDL; this module
builds that type as a `pyspark.sql.types.DataType`, kept apart so that validating a pipeline imports no Spark.
"""

from __future__ import annotations

from pyspark.sql import types as T
from sqlglot import exp

from connector.catalog.types import (
    RowField,
    decimal_params,
    interval_fields,
    is_nullable,
    row_type_fields,
    spark_type_ddl,
    type_parameters,
    type_root,
)

# The types without parameters, by their Spark SQL name (`spark_type_ddl`).
_SIMPLE: dict[str, T.DataType] = {
    t.simpleString().upper(): t
    for t in (
        T.StringType(),
        T.BinaryType(),
        T.BooleanType(),
        T.ByteType(),
        T.ShortType(),
        T.IntegerType(),
        T.LongType(),
        T.FloatType(),
        T.DoubleType(),
        T.DateType(),
        T.TimestampNTZType(),
        T.TimestampType(),
        T.NullType(),
        T.VariantType(),
    )
}
_YEAR_MONTH_FIELDS = {"YEAR": T.YearMonthIntervalType.YEAR, "MONTH": T.YearMonthIntervalType.MONTH}
_DAY_TIME_FIELDS = {
    "DAY": T.DayTimeIntervalType.DAY,
    "HOUR": T.DayTimeIntervalType.HOUR,
    "MINUTE": T.DayTimeIntervalType.MINUTE,
    "SECOND": T.DayTimeIntervalType.SECOND,
}


def spark_type(dt: exp.DataType) -> T.DataType:
    """The Spark type that holds the values of Flink type `dt`: the type `types.spark_type_ddl` names, with the
    nullability of array elements, map values and struct fields."""
    root = type_root(dt)
    if root == "DECIMAL":
        return T.DecimalType(*decimal_params(dt))
    if root == "INTERVAL_YEAR_MONTH":
        start, end = interval_fields(dt)
        return T.YearMonthIntervalType(_YEAR_MONTH_FIELDS[start], _YEAR_MONTH_FIELDS[end])
    if root == "INTERVAL_DAY_TIME":
        start, end = interval_fields(dt)
        return T.DayTimeIntervalType(_DAY_TIME_FIELDS[start], _DAY_TIME_FIELDS[end])
    if root == "ARRAY":
        (element,) = type_parameters(dt, 1)
        return T.ArrayType(spark_type(element), containsNull=is_nullable(element))
    if root == "MAP":
        key, value = type_parameters(dt, 2)
        return T.MapType(spark_type(key), spark_type(value), valueContainsNull=is_nullable(value))
    if root == "MULTISET":
        (element,) = type_parameters(dt, 1)
        return T.MapType(spark_type(element), T.IntegerType(), valueContainsNull=False)
    if root == "ROW":
        return T.StructType([_struct_field(field) for field in row_type_fields(dt)])
    return _SIMPLE[spark_type_ddl(dt)]  # TypeMappingError for a type Spark has no equivalent of


def spark_field(name: str, dt: exp.DataType, nullable: bool = True) -> T.StructField:
    """A top-level Spark column: nullable unless the column or its type says NOT NULL."""
    return T.StructField(name, spark_type(dt), nullable=nullable and is_nullable(dt))


def _struct_field(field: RowField) -> T.StructField:
    metadata = {"comment": field.comment} if field.comment is not None else {}
    return T.StructField(field.name, spark_type(field.type), nullable=field.nullable, metadata=metadata)
