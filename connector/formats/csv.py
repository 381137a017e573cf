"""The `csv` format (Flink's CsvRowDataDeserializationSchema / SerializationSchema): options and codec."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from connector.catalog.model import Table
from connector.formats.payload import (
    CORRUPT,
    INVALID_UTF8,
    Codec,
    Decoded,
    PayloadFormat,
    TextRules,
    fail,
    field_problem,
    first_problem,
    flink_timestamp_text,
    from_text,
    invalid_utf8,
    snippet,
)
from connector.options.declarations import ConfigOption
from connector.options.factory import Format, FormatCheck
from connector.options.types import BOOLEAN, CHAR, STRING

if TYPE_CHECKING:
    from pyspark.sql import Column
    from pyspark.sql.types import ArrayType, DataType


class CsvOptions:
    """Options of the `csv` format, written 'csv.<key>'."""

    FIELD_DELIMITER = ConfigOption(
        "field-delimiter", CHAR(unescape=True), "Field separator, one character ('\\t' for tab).", default=","
    )
    DISABLE_QUOTE_CHARACTER = ConfigOption(
        "disable-quote-character",
        BOOLEAN,
        "Do not quote values; 'quote-character' must not be set then.",
        default=False,
    )
    QUOTE_CHARACTER = ConfigOption(
        "quote-character", CHAR(), "Character enclosing field values.", default='"'
    )
    ALLOW_COMMENTS = ConfigOption(
        "allow-comments", BOOLEAN, "Ignore lines starting with '#' (and skip empty lines).", default=False
    )
    IGNORE_PARSE_ERRORS = ConfigOption(
        "ignore-parse-errors",
        BOOLEAN,
        "Skip rows and fields that do not parse (they read as null) instead of failing.",
        default=False,
    )
    ARRAY_ELEMENT_DELIMITER = ConfigOption(
        "array-element-delimiter", STRING, "Separator of ARRAY and ROW elements inside a field.", default=";"
    )
    ESCAPE_CHARACTER = ConfigOption(
        "escape-character", CHAR(), "Character escaping special characters; none by default."
    )
    NULL_LITERAL = ConfigOption(
        "null-literal", STRING, "Field text read and written as SQL NULL; none by default."
    )


def _csv_quote(check: FormatCheck) -> None:
    if check.options.get(CsvOptions.DISABLE_QUOTE_CHARACTER) and check.options.is_set(
        CsvOptions.QUOTE_CHARACTER
    ):
        check.report(
            "option-conflict",
            "Format cannot define a quote character and disabled quote character at the same time "
            f"('{check.key(CsvOptions.QUOTE_CHARACTER)}' and "
            f"'{check.key(CsvOptions.DISABLE_QUOTE_CHARACTER)}').",
            CsvOptions.QUOTE_CHARACTER.key,
        )


# java.sql.Date.valueOf / Timestamp.valueOf, as Flink's CSV converters use; TIMESTAMP_LTZ read as UTC.
_CSV_TEXT = TextRules(
    date=r"^\d{4}-\d{1,2}-\d{1,2}$",
    timestamp=r"^\d{4}-\d{1,2}-\d{1,2} \d{1,2}:\d{1,2}:\d{1,2}(\.\d{0,9})?$",
    timestamp_ltz=r"^\d{4}-\d{1,2}-\d{1,2} \d{1,2}:\d{1,2}:\d{1,2}(\.\d{0,9})?$",
    ltz_suffix="Z",
)


_UNSET_NULL_VALUE = "\u0000\u0001"  # a text no CSV field holds


def _csv_spark_options(fmt: PayloadFormat) -> dict[str, str]:
    """Spark CSV options for Flink's: RFC 4180 quote doubling unless an escape character is set."""
    quote = "\u0000" if fmt.options.get("disable-quote-character") else str(fmt.options.get("quote-character", '"'))
    spark_options = {
        "sep": str(fmt.options.get("field-delimiter", ",")),
        "quote": quote,
        "escape": str(fmt.options.get("escape-character") or quote),
        "emptyValue": "",
    }
    spark_options["nullValue"] = _UNSET_NULL_VALUE  # the null literal is matched after parsing (see _csv_decode)
    return spark_options


def _csv_decode(payload: Column, fmt: PayloadFormat, stage_prefix: str) -> Decoded:
    from pyspark.sql import functions as F
    from pyspark.sql.types import ArrayType, StringType, StructField, StructType

    schema = StructType([StructField(f.name, StringType()) for f in fmt.fields] + [StructField(CORRUPT, StringType())])
    spark_options = {**_csv_spark_options(fmt), "mode": "PERMISSIVE", "columnNameOfCorruptRecord": CORRUPT}
    text_name, parsed_name = f"{stage_prefix}_text", f"{stage_prefix}_parsed"
    text_expr = payload.cast(StringType())
    stage = {
        text_name: text_expr,
        parsed_name: F.from_csv(text_expr, F.lit(schema.simpleString()), spark_options),
    }
    text, parsed = F.col(text_name), F.col(parsed_name)

    absent = text.isNull() | (text == F.lit(""))
    if fmt.options.get("allow-comments"):
        absent = absent | text.startswith("#")
    delimiter = str(fmt.options.get("array-element-delimiter", ";"))
    values: dict[str, Column] = {}
    problems: list[Column] = []
    null_literal = fmt.options.get("null-literal")
    corrupt = parsed.getField(CORRUPT).isNotNull()
    for f in fmt.fields:
        # Spark reads an empty unquoted field as NULL (the null value it is told, a text no field holds); Flink
        # as '' (false for BOOLEAN, an empty ARRAY, a failure for a number); only the null literal is NULL.
        parsed_field = parsed.getField(f.name)
        raw = F.when(corrupt, parsed_field).otherwise(F.coalesce(parsed_field, F.lit("")))
        if null_literal is not None:
            raw = F.when(raw != F.lit(str(null_literal)), raw)
        if isinstance(f.data_type, ArrayType):
            value, error = _csv_array(raw, f.data_type, delimiter)
        else:
            value, error = from_text(raw, f.data_type, _CSV_TEXT)
        values[f.column] = value
        problems.append(field_problem(f, error, raw))
    invalid = invalid_utf8(text)
    if fmt.ignore_parse_errors:
        return Decoded(stage, values, absent, invalid, F.lit(None).cast(StringType()))
    count = len(fmt.fields)
    problem = (
        F.when(absent, F.lit(None).cast(StringType()))
        .when(invalid, F.concat(F.lit(f"{INVALID_UTF8}: "), snippet(text)))
        .when(corrupt, F.concat(F.lit(f"expected {count} field{'s' if count != 1 else ''} in "), snippet(text)))
        .otherwise(first_problem(problems))
    )
    return Decoded(stage, values, absent, F.lit(False), problem)


def _csv_array(raw: Column, data_type: ArrayType, delimiter: str) -> tuple[Column, Column]:
    from pyspark.sql import functions as F
    from pyspark.sql.types import ArrayType, StringType

    elements = F.when(raw == F.lit(""), F.array().cast(ArrayType(StringType()))).otherwise(
        F.split(raw, _regex_literal(delimiter))
    )
    element_type = data_type.elementType
    value = F.transform(elements, lambda e: from_text(e, element_type, _CSV_TEXT)[0])
    bad = F.exists(elements, lambda e: from_text(e, element_type, _CSV_TEXT)[1])
    return value, raw.isNotNull() & bad


def _regex_literal(text: str) -> str:
    return "".join("\\" + c if c in r"\^$.|?*+()[]{}" else c for c in text)


def _csv_text(value: Column, data_type: DataType, fmt: PayloadFormat) -> Column:
    from pyspark.sql import functions as F
    from pyspark.sql.types import ArrayType, BinaryType, StringType, TimestampNTZType, TimestampType

    if isinstance(data_type, ArrayType):
        delimiter = str(fmt.options.get("array-element-delimiter", ";"))
        element_type = data_type.elementType
        return F.array_join(F.transform(value, lambda e: _csv_text(e, element_type, fmt)), delimiter, "")
    if isinstance(data_type, TimestampType | TimestampNTZType):
        return flink_timestamp_text(value, data_type, " ")
    if isinstance(data_type, BinaryType):
        return F.base64(value)
    return value.cast(StringType())


_UNQUOTED = ("boolean", "byte", "short", "integer", "long", "float", "double", "decimal")  # DataType.typeName()


def _jackson_quoted(text: Column, fmt: PayloadFormat, sep: str) -> Column:
    """`text` quoted where Jackson's CSV encoder quotes it (CsvEncoder._needsQuotingLoose): a character below
    its lowest safe one, max(separator, quote, line feed) + 1, or the escape character."""
    from pyspark.sql import functions as F

    quote = str(fmt.options.get("quote-character", '"'))
    escape = fmt.options.get("escape-character")
    lowest_safe = max(ord(sep), ord(quote), ord("\n")) + 1
    unsafe = f"[\\x{{0}}-\\x{{{lowest_safe - 1:x}}}" + (re.escape(str(escape)) if escape else "") + "]"
    escaped = F.regexp_replace(text, re.escape(quote), (str(escape) if escape else quote) + quote)
    return F.when(text.rlike(unsafe), F.concat(F.lit(quote), escaped, F.lit(quote))).otherwise(text)


class CsvCodec(Codec):
    """CSV rows with Flink's rules: a row with the wrong number of fields fails unless parse errors are ignored."""

    label = "CSV"

    def decode(self, payload: Column, fmt: PayloadFormat, stage_prefix: str) -> Decoded:
        return _csv_decode(payload, fmt, stage_prefix)

    def encode(self, fmt: PayloadFormat, row: Mapping[str, Column]) -> Column:
        """One line as Flink's CsvRowDataSerializationSchema (Jackson's CSV writer) writes it: text values are
        quoted when they hold a character below the separator, quote and line feed characters' highest code
        (a space, a comma: '2024-01-02 03:04:05' is quoted), numbers and booleans never; NULL is the null
        literal (empty by default); spaces are kept."""
        from pyspark.sql import functions as F
        from pyspark.sql.types import BinaryType

        sep = str(fmt.options.get("field-delimiter", ","))
        null_text = F.lit(str(fmt.options.get("null-literal") or ""))
        fields = []
        for f in fmt.fields:
            text = _csv_text(row[f.column], f.data_type, fmt)
            if not fmt.options.get("disable-quote-character") and f.data_type.typeName() not in _UNQUOTED:
                text = _jackson_quoted(text, fmt, sep)
            fields.append(F.coalesce(text, null_text))
        return F.concat_ws(sep, *fields).cast(BinaryType())

    def check(self, fmt: PayloadFormat, table: Table, format_key: str) -> None:
        from pyspark.sql.types import ArrayType, AtomicType

        for f in fmt.fields:
            nested = f.data_type.elementType if isinstance(f.data_type, ArrayType) else f.data_type
            if not isinstance(nested, AtomicType):
                fail(
                    table,
                    format_key,
                    f"The 'csv' format cannot hold column '{f.column}' of type {f.type_sql}: only atomic "
                    "types and arrays of them.",
                )

    def spark_files(self, values: Mapping[str, Any]) -> tuple[str, dict[str, str]]:
        quote = "\u0000" if values.get("disable-quote-character") else str(values.get("quote-character", '"'))
        return "csv", {
            "sep": str(values.get("field-delimiter", ",")),
            "quote": quote,
            "escape": str(values.get("escape-character") or quote),
            "nullValue": str(values.get("null-literal") or ""),
            "emptyValue": "",
            "timestampNTZFormat": "yyyy-MM-dd HH:mm:ss.SSS",
            "timestampFormat": "yyyy-MM-dd HH:mm:ss.SSS'Z'",
            "timeZone": "UTC",
            "header": "false",
        }


CSV = Format(
    "csv",
    "RFC-4180 CSV, one row per message (Kafka) or per line (filesystem).",
    options=tuple(v for v in vars(CsvOptions).values() if isinstance(v, ConfigOption)),
    codec=CsvCodec(),
    rules=(_csv_quote,),
)
FORMATS = (CSV,)
