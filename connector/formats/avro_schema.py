"""The Avro schema of a table, derived from its columns as Flink's `AvroSchemaConverter.convertToSchema` does,
and the Spark expressions that carry values between that schema and the table's Spark types.

Flink's mapping (flink-avro 2.3): BOOLEAN boolean; TINYINT, SMALLINT, INT int; BIGINT long; FLOAT float; DOUBLE
double; CHAR, VARCHAR, STRING string; BINARY, VARBINARY, BYTES bytes; DECIMAL(p, s) bytes with the decimal logical
type; DATE int (date); TIME(p <= 3) int (time-millis); ROW a record named '<parent>_<field>'; ARRAY array; MAP and
MULTISET (STRING keys only) map. A nullable type is the union ["null", type] and its record field defaults to
null. TIMESTAMP and TIMESTAMP_LTZ follow 'avro.timestamp_mapping.legacy' (default true): legacy, TIMESTAMP(p <= 3)
is timestamp-millis and TIMESTAMP_LTZ has no schema; otherwise TIMESTAMP is local-timestamp-millis / -micros and
TIMESTAMP_LTZ is timestamp-millis / -micros (but the values are milliseconds at any precision, as Flink 2.3 writes
and reads them). Inside ARRAY and MAP Flink always uses the legacy mapping (its
converter calls itself without the flag there); so does this module.

Spark decodes and encodes with its own Avro functions, which read a timestamp-millis long as an instant (Spark's
TIMESTAMP_LTZ) and have no TIME type. The binary encoding of a long is the same whatever its logical type, so
Spark is given a twin of the schema (`for_spark=True`): TIMESTAMP as local-timestamp-*, TIME as a plain int.
`decoded_value` and `encoded_value` convert what remains (TIME text, TINYINT/SMALLINT) between the two.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from connector.catalog.types import (
    decimal_params,
    element_types,
    flink_sql,
    is_nullable,
    row_fields,
    time_precision,
    timestamp_precision,
    type_root,
)
from connector.errors import KafkaSqlError

if TYPE_CHECKING:
    from pyspark.sql import Column

RECORD_NAME = "org.apache.flink.avro.generated.record"
_PRIMITIVE = {
    "BOOLEAN": "boolean",
    "TINYINT": "int",
    "SMALLINT": "int",
    "INTEGER": "int",
    "BIGINT": "long",
    "FLOAT": "float",
    "DOUBLE": "double",
    "STRING": "string",
    "BINARY": "bytes",
}
_MILLIS_PER_DAY = 86_400_000


class AvroSchemaError(KafkaSqlError, ValueError):
    """A column type Flink's Avro format cannot map (Flink's own message)."""


def table_schema(
    fields: Sequence[tuple[str, exp.DataType, bool]], legacy: bool = True, for_spark: bool = False
) -> dict[str, Any]:
    """The record schema of `fields` (name, Flink type, nullable), as Flink derives it for a table's key or value
    (the top-level record itself is never nullable)."""
    return _record(fields, RECORD_NAME, legacy, for_spark)


def _record(
    fields: Sequence[tuple[str, exp.DataType, bool]], name: str, legacy: bool, for_spark: bool
) -> dict[str, Any]:
    members = []
    for field_name, dt, nullable in fields:
        member: dict[str, Any] = {
            "name": field_name,
            "type": _schema(dt, nullable, f"{name}_{field_name}", legacy, for_spark),
        }
        if nullable:
            member["default"] = None
        members.append(member)
    return {"type": "record", "name": name, "fields": members}


def _schema(dt: exp.DataType, nullable: bool, name: str, legacy: bool, for_spark: bool) -> Any:
    nullable = nullable and is_nullable(dt)
    root = type_root(dt)
    schema: Any
    if root == "NULL":
        return "null"
    if root in _PRIMITIVE:
        schema = _PRIMITIVE[root]
    elif root == "DECIMAL":
        precision, scale = decimal_params(dt)
        schema = {"type": "bytes", "logicalType": "decimal", "precision": precision, "scale": scale}
    elif root == "DATE":
        schema = {"type": "int", "logicalType": "date"}
    elif root == "TIME":
        precision = time_precision(dt)
        if precision > 3:
            raise AvroSchemaError(
                f"Avro does not support TIME type with precision: {precision}, it only supports precision less than 3."
            )
        schema = "int" if for_spark else {"type": "int", "logicalType": "time-millis"}
    elif root in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        schema = _timestamp(root, timestamp_precision(dt) or 0, legacy, for_spark, dt)
    elif root == "ROW":
        schema = _record(row_fields(dt), name, legacy, for_spark)
    elif root in ("MAP", "MULTISET"):
        children = element_types(dt)
        if type_root(children[0]) != "STRING":
            raise AvroSchemaError(
                f"Avro format doesn't support non-string as key type of map. The key type is: {flink_sql(children[0])}"
            )
        values = children[1] if root == "MAP" else exp.DataType.build("INT")
        schema = {"type": "map", "values": _schema(values, True, name, True, for_spark)}
    elif root == "ARRAY":
        schema = {"type": "array", "items": _schema(element_types(dt)[0], True, name, True, for_spark)}
    else:
        raise AvroSchemaError(f"Unsupported to derive Schema for type: {root}")
    return ["null", schema] if nullable else schema


def _timestamp(root: str, precision: int, legacy: bool, for_spark: bool, dt: exp.DataType) -> dict[str, Any]:
    local = root == "TIMESTAMP"
    if legacy:
        if not local:
            raise AvroSchemaError(
                f"Unsupported to derive Schema for type: TIMESTAMP_LTZ({precision}); set "
                "'avro.timestamp_mapping.legacy' = 'false' to write it as an Avro timestamp."
            )
        if precision > 3:
            raise AvroSchemaError(
                f"Avro does not support TIMESTAMP type with precision: {precision}, it only supports precision less "
                "than 3."
            )
        logical = "local-timestamp-millis" if for_spark else "timestamp-millis"
        return {"type": "long", "logicalType": logical}
    if precision > 6:
        raise AvroSchemaError(
            f"{root}({precision}) as Avro nanoseconds: Spark keeps microseconds; declare a precision of 6 or less."
        )
    # Flink declares micros above precision 3 but writes and reads milliseconds whatever the precision (measured:
    # TIMESTAMP(6) '...09.123456' is written as 1714979289123); Spark is told milliseconds, so it does the same.
    unit = "millis" if precision <= 3 or for_spark else "micros"
    return {"type": "long", "logicalType": f"{'local-' if local else ''}timestamp-{unit}"}


# -- values ----------------------------------------------------------------------------------------------------


def _needs_conversion(dt: exp.DataType) -> bool:
    root = type_root(dt)
    if root in ("TIME", "TINYINT", "SMALLINT"):
        return True
    if root == "ROW":
        return any(_needs_conversion(t) for _, t, _ in row_fields(dt))
    if root in ("ARRAY", "MAP"):
        return any(_needs_conversion(t) for t in element_types(dt))
    return False


def decoded_value(value: Column, dt: exp.DataType) -> Column:
    """A value Spark decoded with the `for_spark` schema, as the table's Spark type."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import ByteType, ShortType

    if not _needs_conversion(dt):
        return value
    root = type_root(dt)
    if root == "TIME":
        return _time_text(value, time_precision(dt))
    if root in ("TINYINT", "SMALLINT"):  # Java's byteValue() / shortValue(): the low bits, as Flink converts
        bits = 256 if root == "TINYINT" else 65536
        wrapped = F.pmod(value + F.lit(bits // 2), F.lit(bits)) - F.lit(bits // 2)
        return wrapped.cast(ByteType() if root == "TINYINT" else ShortType())
    if root == "ROW":
        members = [decoded_value(value.getField(n), t).alias(n) for n, t, _ in row_fields(dt)]
        return F.when(value.isNotNull(), F.struct(*members))
    if root == "ARRAY":
        return F.transform(value, lambda e: decoded_value(e, element_types(dt)[0]))
    return F.transform_values(value, lambda _, v: decoded_value(v, element_types(dt)[1]))


def encoded_value(value: Column, dt: exp.DataType) -> Column:
    """A value of the table's Spark type, as Spark encodes it with the `for_spark` schema."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import IntegerType

    if not _needs_conversion(dt):
        return value
    root = type_root(dt)
    if root == "TIME":
        return _time_millis(value)
    if root in ("TINYINT", "SMALLINT"):
        return value.cast(IntegerType())
    if root == "ROW":
        members = [encoded_value(value.getField(n), t).alias(n) for n, t, _ in row_fields(dt)]
        return F.when(value.isNotNull(), F.struct(*members))
    if root == "ARRAY":
        return F.transform(value, lambda e: encoded_value(e, element_types(dt)[0]))
    return F.transform_values(value, lambda _, v: encoded_value(v, element_types(dt)[1]))


def _time_text(millis: Column, precision: int) -> Column:
    """time-millis as the text of a TIME value (Flink's SQL time format: 'HH:mm:ss', then the fraction within
    `precision` digits without trailing zeros, none when zero)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import IntegerType, StringType

    of_day = F.pmod(millis, F.lit(_MILLIS_PER_DAY))
    parts = [
        F.lpad((of_day / 3_600_000).cast(IntegerType()).cast(StringType()), 2, "0"),
        F.lit(":"),
        F.lpad(F.pmod(of_day / 60_000, F.lit(60)).cast(IntegerType()).cast(StringType()), 2, "0"),
        F.lit(":"),
        F.lpad(F.pmod(of_day / 1000, F.lit(60)).cast(IntegerType()).cast(StringType()), 2, "0"),
    ]
    if precision > 0:
        digits = F.substring(F.lpad(F.pmod(of_day, F.lit(1000)).cast(StringType()), 3, "0"), 1, precision)
        fraction = F.regexp_replace(digits, "0+$", "")
        parts.append(F.when(fraction != "", F.concat(F.lit("."), fraction)).otherwise(F.lit("")))
    return F.when(millis.isNotNull(), F.concat(*parts))


def _time_millis(text: Column) -> Column:
    """Flink's TIME text ('HH:mm:ss[.fffffffff]') as milliseconds of the day (further digits dropped)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import IntegerType

    parts = F.split(text, ":")
    seconds = parts.getItem(2).try_cast("decimal(12,9)")
    millis = (
        parts.getItem(0).try_cast("int") * F.lit(3_600_000)
        + parts.getItem(1).try_cast("int") * F.lit(60_000)
        + F.floor(seconds * F.lit(1000)).cast("int")
    )
    return millis.cast(IntegerType())
