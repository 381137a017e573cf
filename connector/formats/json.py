"""The `json` format (Flink's JsonRowDataDeserializationSchema / SerializationSchema): options and codec."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from connector.formats.json_arrow import ARROW_TYPES
from connector.formats.payload import (
    CORRUPT,
    DECIMAL_TEXT,
    FRACTION,
    INVALID_UTF8,
    Codec,
    Decoded,
    PayloadFormat,
    TextRules,
    field_problem,
    first_problem,
    flink_timestamp_text,
    from_text,
    invalid_utf8,
    snippet,
)
from connector.options.declarations import ConfigOption
from connector.options.factory import Format, FormatCheck
from connector.options.types import BOOLEAN, ENUM, STRING

if TYPE_CHECKING:
    from pyspark.sql import Column
    from pyspark.sql.types import DataType


class JsonOptions:
    """Options of the `json` format, written 'json.<key>' (or 'key.json.<key>' / 'value.json.<key>')."""

    FAIL_ON_MISSING_FIELD = ConfigOption(
        "fail-on-missing-field",
        BOOLEAN,
        "Fail when a field of the schema is missing from a record; otherwise it reads as null.",
        default=False,
    )
    IGNORE_PARSE_ERRORS = ConfigOption(
        "ignore-parse-errors",
        BOOLEAN,
        "Skip rows and fields that do not parse (they read as null) instead of failing.",
        default=False,
    )
    TIMESTAMP_FORMAT_STANDARD = ConfigOption(
        "timestamp-format.standard",
        ENUM("SQL", "ISO-8601"),
        "Text form of TIMESTAMP / TIMESTAMP_LTZ values: 'SQL' ('2020-12-30 12:13:14.123', LTZ with a 'Z') or "
        "'ISO-8601' ('2020-12-30T12:13:14.123').",
        default="SQL",
    )
    MAP_NULL_KEY_MODE = ConfigOption(
        "map-null-key.mode",
        ENUM("FAIL", "DROP", "LITERAL"),
        "Writing a MAP entry with a null key: 'FAIL', 'DROP' the entry, or write it under "
        "'map-null-key.literal' ('LITERAL').",
        default="FAIL",
    )
    MAP_NULL_KEY_LITERAL = ConfigOption(
        "map-null-key.literal", STRING, "Key written for null map keys in 'LITERAL' mode.", default="null"
    )
    ENCODE_DECIMAL_AS_PLAIN_NUMBER = ConfigOption(
        "encode.decimal-as-plain-number",
        BOOLEAN,
        "Write DECIMAL values as plain numbers (0.000000027) rather than in scientific notation (2.7E-8).",
        default=False,
    )
    ENCODE_IGNORE_NULL_FIELDS = ConfigOption(
        "encode.ignore-null-fields",
        BOOLEAN,
        "Leave out fields whose value is null when writing.",
        default=False,
    )
    DECODE_JSON_PARSER_ENABLED = ConfigOption(
        "decode.json-parser.enabled",
        BOOLEAN,
        "Flink: decode with the streaming JsonParser rather than a JsonNode tree (faster, same results).",
        default=True,
    )


def _json_error_modes(check: FormatCheck) -> None:
    fail = check.options.get(JsonOptions.FAIL_ON_MISSING_FIELD)
    ignore = check.options.get(JsonOptions.IGNORE_PARSE_ERRORS)
    if fail and ignore:
        check.report(
            "option-conflict",
            f"{check.key(JsonOptions.FAIL_ON_MISSING_FIELD)} and "
            f"{check.key(JsonOptions.IGNORE_PARSE_ERRORS)} "
            "shouldn't both be true.",
            JsonOptions.IGNORE_PARSE_ERRORS.key,
        )


_JSON_SQL = TextRules(
    date=r"^\d{4}-\d{2}-\d{2}$",
    timestamp=rf"^\d{{4}}-\d{{2}}-\d{{2}} \d{{2}}:\d{{2}}:\d{{2}}{FRACTION}$",
    timestamp_ltz=rf"^\d{{4}}-\d{{2}}-\d{{2}} \d{{2}}:\d{{2}}:\d{{2}}{FRACTION}Z$",
    ltz_suffix="",
    truncates_fractions=True,  # Jackson's asInt() of 12.7 is 12, as Flink reads it
)
_JSON_ISO = TextRules(
    date=_JSON_SQL.date,
    timestamp=rf"^\d{{4}}-\d{{2}}-\d{{2}}T\d{{2}}:\d{{2}}(:\d{{2}}{FRACTION})?$",
    timestamp_ltz=rf"^\d{{4}}-\d{{2}}-\d{{2}}T\d{{2}}:\d{{2}}(:\d{{2}}{FRACTION})?Z$",
    ltz_suffix="",
    truncates_fractions=True,  # Jackson's asInt() of 12.7 is 12, as Flink reads it
)


def _json_temporal_options(standard: str) -> dict[str, str]:
    """Spark's from_json/to_json options for timestamps nested in ROW/ARRAY/MAP values."""
    separator = "'T'" if standard == "ISO-8601" else " "
    return {
        "dateFormat": "yyyy-MM-dd",
        "timestampNTZFormat": f"yyyy-MM-dd{separator}HH:mm:ss[.SSSSSSSSS]",
        "timestampFormat": f"yyyy-MM-dd{separator}HH:mm:ss[.SSSSSSSSS]X",
        "timeZone": "UTC",
    }


def _parsed_by_spark(data_type: DataType) -> bool:
    """JSON fields Spark parses with their type: DECIMAL keeps every digit of a JSON number that way,
    and nested values need Spark's structure; the others are read as text and converted as Flink does."""
    from pyspark.sql.types import ArrayType, DecimalType, MapType, StructType

    return isinstance(data_type, DecimalType | StructType | ArrayType | MapType)


def json_decode(payload: Column, fmt: PayloadFormat, stage_prefix: str) -> Decoded:
    """The table's fields from one JSON object (also the row images of the JSON changelog formats)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import DecimalType, StringType, StructField, StructType

    standard = str(fmt.options.get("timestamp-format.standard", "SQL"))
    rules = _JSON_ISO if standard == "ISO-8601" else _JSON_SQL
    spark_options = {
        "mode": "PERMISSIVE",
        "columnNameOfCorruptRecord": CORRUPT,
        **_json_temporal_options(standard),
    }
    by_spark = [f for f in fmt.fields if _parsed_by_spark(f.data_type)]
    schema = StructType(
        [StructField(f.name, f.data_type if f in by_spark else StringType()) for f in fmt.fields]
        + [StructField(CORRUPT, StringType())]
    )
    text_name, parsed_name = f"{stage_prefix}_text", f"{stage_prefix}_parsed"
    text_expr = payload.cast(StringType())
    stage = {text_name: text_expr, parsed_name: F.from_json(text_expr, schema, spark_options)}
    text, parsed = F.col(text_name), F.col(parsed_name)

    corrupt = parsed.getField(CORRUPT).isNotNull()  # not an object, or a Spark-parsed field failed
    absent = text.isNull() | (F.trim(text) == F.lit("null"))
    blank = F.trim(text) == F.lit("")  # a 0-byte value: Flink's parser fails on it, it is not a NULL message
    invalid = invalid_utf8(text)
    not_object = ~absent & (blank | F.coalesce(corrupt & F.json_object_keys(text).isNull(), F.lit(False)))
    # Text of the Spark-parsed fields, read again only for records Spark flagged.
    texts = F.from_json(text, StructType([StructField(f.name, StringType()) for f in by_spark]))

    values: dict[str, Column] = {}
    problems: list[Column] = []
    for f in fmt.fields:
        raw = parsed.getField(f.name)
        if isinstance(f.data_type, DecimalType):
            source = texts.getField(f.name)
            error = corrupt & raw.isNull() & source.isNotNull() & ~source.rlike(DECIMAL_TEXT)
            value = raw
        elif f in by_spark:
            source = texts.getField(f.name)
            alone = StructType([StructField(f.name, f.data_type), StructField(CORRUPT, StringType())])
            error = corrupt & F.from_json(text, alone, spark_options).getField(CORRUPT).isNotNull()
            value = raw
        else:
            source = raw
            value, error = from_text(raw, f.data_type, rules)
        values[f.column] = value
        problems.append(field_problem(f, error, source))

    if fmt.ignore_parse_errors:
        return Decoded(stage, values, absent, not_object | invalid, F.lit(None).cast(StringType()))
    if fmt.options.get("fail-on-missing-field"):
        keys = F.json_object_keys(text)
        missing = [
            F.when(
                ~F.array_contains(keys, f.name),
                F.lit(f"could not find field '{f.name}' (fail-on-missing-field is true)"),
            )
            for f in fmt.fields
        ]
        problems = missing + problems
    problem = (
        F.when(absent, F.lit(None).cast(StringType()))
        .when(invalid, F.concat(F.lit(f"{INVALID_UTF8}: "), snippet(text)))
        .when(not_object, F.concat(F.lit("not a JSON object: "), snippet(text)))
        .otherwise(first_problem(problems))
    )
    return Decoded(stage, values, absent, F.lit(False), problem)


def _json_text(value: Column, data_type: DataType, standard: str) -> Column:
    from pyspark.sql.types import TimestampNTZType, TimestampType

    if isinstance(data_type, TimestampType | TimestampNTZType):
        return flink_timestamp_text(value, data_type, "'T'" if standard == "ISO-8601" else " ")
    return value


_DECIMAL_PLACEHOLDER = "__kafka_sql_decimal_"


def _regex_replacement(text: str) -> str:
    """`text` as a literal in a Java regex replacement."""
    return text.replace("\\", "\\\\").replace("$", "\\$")


def _decimal_text(value: Column, plain: bool) -> Column:
    """A DECIMAL as Flink's JSON format writes it: Jackson's number node strips trailing zeros
    (BigDecimal.stripTrailingZeros), then writes toString() (47.5, -3E+2, 1E-7) or, with
    'encode.decimal-as-plain-number', toPlainString() (47.5, -300, 0.0000001)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType

    text = value.cast(StringType())  # plain, with the type's scale: '-300.00'
    sign = F.when(text.startswith("-"), F.lit("-")).otherwise(F.lit(""))
    digits = F.regexp_replace(text, "^-", "")
    whole = F.regexp_extract(digits, r"^(\d+)", 1)
    fraction = F.regexp_replace(F.regexp_extract(digits, r"\.(\d+)$", 1), "0+$", "")
    has_fraction = F.length(fraction) > 0
    plain_text = F.when(F.regexp_replace(digits, "[0.]", "") == "", F.lit("0")).otherwise(
        F.concat(sign, whole, F.when(has_fraction, F.concat(F.lit("."), fraction)).otherwise(F.lit("")))
    )
    if plain:
        return F.when(value.isNotNull(), plain_text)
    whole_stripped = F.regexp_replace(whole, "0+$", "")
    unscaled = F.when(has_fraction, F.regexp_replace(F.concat(whole, fraction), "^0+", "")).otherwise(whole_stripped)
    scale = F.when(has_fraction, F.length(fraction)).otherwise(F.length(whole_stripped) - F.length(whole))
    adjusted = F.length(unscaled) - F.lit(1) - scale
    mantissa = F.concat(
        F.substring(unscaled, 1, 1),
        F.when(F.length(unscaled) > 1, F.concat(F.lit("."), unscaled.substr(F.lit(2), F.length(unscaled)))).otherwise(
            F.lit("")
        ),
    )
    scientific = F.concat(
        sign,
        mantissa,
        F.lit("E"),
        F.when(adjusted > 0, F.lit("+")).otherwise(F.lit("")),
        adjusted.cast(StringType()),
    )
    formatted = F.when((plain_text == "0") | ((scale >= 0) & (adjusted >= -6)), plain_text).otherwise(scientific)
    return F.when(value.isNotNull(), formatted)


class JsonCodec(Codec):
    """JSON records with Flink's lenient field conversion; a top-level array holds several records."""

    label = "JSON"

    def decode(self, payload: Column, fmt: PayloadFormat, stage_prefix: str) -> Decoded:
        return json_decode(payload, fmt, stage_prefix)

    def reader_fields(self, fmt: PayloadFormat) -> tuple[tuple[str, str], ...]:
        """All of a value's fields when Arrow's parser reads each of their types as Flink does (`json_arrow`);
        'fail-on-missing-field' needs the Spark side, which tells an absent field from a null one."""
        names = tuple((f.name, f.data_type.simpleString()) for f in fmt.fields)
        if fmt.role != "value" or fmt.options.get("fail-on-missing-field") or not names:
            return ()
        return names if all(type_name in ARROW_TYPES for _, type_name in names) else ()

    def encode(self, fmt: PayloadFormat, row: Mapping[str, Column]) -> Column:
        """Spark's to_json, except that DECIMAL fields are written as Flink writes them (`_decimal_text`): as
        text under a placeholder name first, then put back in place as a number."""
        from pyspark.sql import functions as F
        from pyspark.sql.types import BinaryType, DecimalType

        standard = str(fmt.options.get("timestamp-format.standard", "SQL"))
        plain = bool(fmt.options.get("encode.decimal-as-plain-number"))
        fields: list[Column] = []
        decimals: dict[str, str] = {}
        for index, f in enumerate(fmt.fields):
            if isinstance(f.data_type, DecimalType):
                placeholder = f"{_DECIMAL_PLACEHOLDER}{index}"
                decimals[placeholder] = f.name
                fields.append(_decimal_text(row[f.column], plain).alias(placeholder))
            else:
                fields.append(_json_text(row[f.column], f.data_type, standard).alias(f.name))
        spark_options = {
            **_json_temporal_options(standard),
            "timestampNTZFormat": "yyyy-MM-dd" + ("'T'" if standard == "ISO-8601" else " ") + "HH:mm:ss.SSS",
            "timestampFormat": "yyyy-MM-dd" + ("'T'" if standard == "ISO-8601" else " ") + "HH:mm:ss.SSS'Z'",
            "ignoreNullFields": "true" if fmt.options.get("encode.ignore-null-fields") else "false",
        }
        text = F.to_json(F.struct(*fields), spark_options)
        for placeholder, name in decimals.items():
            # A field name sits after '{' or ',' and an unescaped quote, which no string value can contain.
            key = _regex_replacement(json.dumps(name))
            text = F.regexp_replace(text, f'([{{,])"{placeholder}":"([^"]*)"', f"$1{key}:$2")
            text = F.regexp_replace(text, f'([{{,])"{placeholder}":null', f"$1{key}:null")
        return text.cast(BinaryType())

    def records(self, payload: Column, fmt: PayloadFormat) -> Column:
        """The elements of a top-level JSON array (JSON values only, as Flink), else the payload alone.

        A NULL payload is one NULL record, and a payload that is not a valid array is one record (which
        `decode` then reports), so nothing is lost; `[]` holds none.
        """
        from pyspark.sql import functions as F
        from pyspark.sql.types import ArrayType, StringType

        if fmt.role != "value":
            return F.array(payload)
        text = payload.cast(StringType())
        elements = F.from_json(text, ArrayType(StringType()))
        is_array = F.ltrim(text).startswith("[") & elements.isNotNull()
        return F.when(is_array, elements).otherwise(F.array(text))

    def spark_files(self, values: Mapping[str, Any]) -> tuple[str, dict[str, str]]:
        separator = "'T'" if values.get("timestamp-format.standard") == "ISO-8601" else " "
        return "json", {
            "ignoreNullFields": "true" if values.get("encode.ignore-null-fields") else "false",
            "timestampNTZFormat": f"yyyy-MM-dd{separator}HH:mm:ss.SSS",
            "timestampFormat": f"yyyy-MM-dd{separator}HH:mm:ss.SSS'Z'",
            "timeZone": "UTC",
            "dateFormat": "yyyy-MM-dd",
        }


JSON = Format(
    "json",
    "JSON objects, one per message (Kafka) or per line (filesystem).",
    options=tuple(v for v in vars(JsonOptions).values() if isinstance(v, ConfigOption)),
    codec=JsonCodec(),
    rules=(_json_error_modes,),
)
FORMATS = (JSON,)
