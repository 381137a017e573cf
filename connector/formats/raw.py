"""The `raw` format: the whole key or value as one column, numbers as fixed-size two's complement / IEEE 754."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from connector.catalog.model import Table
from connector.formats.payload import (
    Codec,
    Decoded,
    PayloadFormat,
    fail,
    is_string,
)
from connector.options.declarations import ConfigOption
from connector.options.factory import Format, FormatCheck
from connector.options.metadata import parse_flink_type
from connector.options.types import CHARSET, ENUM

if TYPE_CHECKING:
    from pyspark.sql import Column

_SPARK_CHARSETS = ("US-ASCII", "ISO-8859-1", "UTF-8", "UTF-16BE", "UTF-16LE", "UTF-16", "UTF-32")
# By Spark type name (DataType.typeName()).
_RAW_SIZES = {"byte": 1, "short": 2, "integer": 4, "long": 8, "float": 4, "double": 8, "boolean": 1}
_RAW_BITS_OF = {
    "float": ("java.lang.Float", "intBitsToFloat"),
    "double": ("java.lang.Double", "longBitsToDouble"),
}
_RAW_BITS_TO = {
    "float": ("java.lang.Float", "floatToRawIntBits"),
    "double": ("java.lang.Double", "doubleToRawLongBits"),
}


class RawOptions:
    """Options of the `raw` format: one physical column holding the whole key or value."""

    CHARSET = ConfigOption("charset", CHARSET, "Charset of STRING values.", default="UTF-8")
    ENDIANNESS = ConfigOption(
        "endianness",
        ENUM("big-endian", "little-endian"),
        "Byte order of numeric values.",
        default="big-endian",
    )


RAW_COLUMN_TYPES = (
    "CHAR", "VARCHAR", "BINARY", "VARBINARY", "RAW", "BOOLEAN", "TINYINT", "SMALLINT", "INTEGER", "BIGINT",
    "FLOAT", "DOUBLE",
)  # fmt: skip


def _raw_single_column(check: FormatCheck) -> None:
    names = [c.name for c in check.columns]
    where = check.table.option_position(check.format_key)
    if len(names) != 1:
        check.report(
            "unsupported-format",
            f"The 'raw' format only supports a single physical column, but the {check.role} of table "
            f"'{check.table.name}' has {len(names)}: {', '.join(names) or 'none'}. Use another format, or "
            "'key.fields' / 'value.fields-include' = 'EXCEPT_KEY' to leave a single column in the "
            f"{check.role}.",
            position=where,
        )
        return
    column = check.columns[0]
    parsed = parse_flink_type(column.type_sql)
    if parsed is not None and parsed.root not in RAW_COLUMN_TYPES:
        check.report(
            "unsupported-format",
            f"The 'raw' format doesn't support '{column.type_sql}' as column type (column '{column.name}'). "
            "Supported: STRING/VARCHAR/CHAR, BYTES/VARBINARY/BINARY, BOOLEAN, TINYINT, SMALLINT, INT, "
            "BIGINT, "
            "FLOAT, DOUBLE.",
            position=where,
        )


def _raw_decode(record: Column, fmt: PayloadFormat, stage_prefix: str) -> Decoded:
    from pyspark.sql import functions as F
    from pyspark.sql.types import BooleanType, DoubleType, FloatType, IntegerType, LongType, StringType

    field = fmt.fields[0]
    payload_name = f"{stage_prefix}_payload"
    stage = {payload_name: record}
    payload = F.col(payload_name)
    data_type = field.data_type
    nothing = F.lit(None).cast(StringType())
    if is_string(data_type):
        charset = str(fmt.options.get("charset", "UTF-8"))
        text = payload.cast(StringType()) if charset.upper() == "UTF-8" else F.decode(payload, charset)
        return Decoded(stage, {field.column: text}, F.lit(False), F.lit(False), nothing)
    size = _RAW_SIZES.get(data_type.typeName())
    if size is None:  # BINARY / VARBINARY
        return Decoded(stage, {field.column: payload}, F.lit(False), F.lit(False), nothing)
    big_endian = str(fmt.options.get("endianness", "big-endian")) == "big-endian"
    digits = F.hex(payload)
    if not big_endian:
        digits = F.concat(*[F.substring(digits, 2 * i + 1, 2) for i in reversed(range(size))])
    value: Column
    if isinstance(data_type, BooleanType):
        value = digits != F.lit("00")
    else:
        # Two's complement of `size` bytes: sign-extend to 64 bits, read as a signed long.
        extended = F.when(digits.substr(1, 1) >= F.lit("8"), F.lpad(digits, 16, "F")).otherwise(F.lpad(digits, 16, "0"))
        bits = F.conv(extended, 16, -10).cast(LongType())
        if isinstance(data_type, FloatType | DoubleType):
            owner, method = _RAW_BITS_OF[data_type.typeName()]
            argument = bits.cast(IntegerType()) if isinstance(data_type, FloatType) else bits
            value = F.reflect(F.lit(owner), F.lit(method), argument).cast(data_type)
        else:
            value = bits.cast(data_type)
    type_name = field.type_sql.split("(")[0].upper() or data_type.simpleString().upper()
    wrong_size = payload.isNotNull() & (F.length(payload) != F.lit(size))
    problem = F.when(wrong_size, F.lit(f"Size of data received for deserializing {type_name} type is not {size}"))
    readable = payload.isNotNull() & ~wrong_size  # reflect() must not see NULL
    return Decoded(stage, {field.column: F.when(readable, value)}, F.lit(False), F.lit(False), problem)


def _raw_encode(fmt: PayloadFormat, value: Column) -> Column:
    from pyspark.sql import functions as F
    from pyspark.sql.types import BinaryType, BooleanType, DoubleType, FloatType, LongType

    data_type = fmt.fields[0].data_type
    if is_string(data_type):
        charset = str(fmt.options.get("charset", "UTF-8"))
        return value.cast(BinaryType()) if charset.upper() == "UTF-8" else F.encode(value, charset)
    size = _RAW_SIZES.get(data_type.typeName())
    if size is None:
        return value
    if isinstance(data_type, BooleanType):
        digits = F.when(value, F.lit("01")).otherwise(F.lit("00"))
    else:
        if isinstance(data_type, FloatType | DoubleType):
            owner, method = _RAW_BITS_TO[data_type.typeName()]
            bits = F.reflect(F.lit(owner), F.lit(method), value).cast(LongType())
        else:
            bits = value.cast(LongType())
        digits = F.substring(F.lpad(F.hex(bits), 16, "0"), 17 - 2 * size, 2 * size)
    if str(fmt.options.get("endianness", "big-endian")) != "big-endian":
        digits = F.concat(*[F.substring(digits, 2 * i + 1, 2) for i in reversed(range(size))])
    return F.when(value.isNotNull(), F.unhex(digits))


def _spark_charset(charset: str) -> bool:
    return charset.upper().replace("_", "-") in _SPARK_CHARSETS


class RawCodec(Codec):
    """The whole payload as one column; a number of the wrong size fails the query, as in Flink."""

    label = "raw"

    def decode(self, payload: Column, fmt: PayloadFormat, stage_prefix: str) -> Decoded:
        return _raw_decode(payload, fmt, stage_prefix)

    def encode(self, fmt: PayloadFormat, row: Mapping[str, Column]) -> Column:
        return _raw_encode(fmt, row[fmt.fields[0].column])

    def check(self, fmt: PayloadFormat, table: Table, format_key: str) -> None:
        if len(fmt.fields) != 1:
            fail(
                table,
                format_key,
                f"The 'raw' format needs exactly one column in the {fmt.role}, not {len(fmt.fields)}.",
            )
        charset = str(fmt.options.get("charset", "UTF-8"))
        if is_string(fmt.fields[0].data_type) and not _spark_charset(charset):
            fail(
                table,
                fmt.option_prefix + "charset",
                f"Charset '{charset}' is not supported on Spark; use one of {', '.join(_SPARK_CHARSETS)}.",
            )


RAW = Format(
    "raw",
    "The raw bytes of the key or value as one column (STRING decoded with 'raw.charset').",
    options=(RawOptions.CHARSET, RawOptions.ENDIANNESS),
    codec=RawCodec(),
    carrier="messages",
    rules=(_raw_single_column,),
)
FORMATS = (RAW,)
