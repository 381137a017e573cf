"""Kafka payload formats (json, csv, raw) as Spark Column expressions: bytes to table fields and back.

Every record is decoded and encoded by Spark SQL expressions (from_json, from_csv, byte arithmetic),
never by Python code per record. The semantics are Flink's json, csv and raw formats:

* JSON (`JsonRowDataDeserializationSchema`): a record that is not a JSON object (syntax error, a bare
  number...) is a *malformed record*. A field whose text does not convert to the column type is a
  *field error*; Flink's converters are lenient the same way here (`"12"` reads as INT 12, BOOLEAN is
  `'true'` case-insensitively and false otherwise). With `json.ignore-parse-errors`, malformed records
  are skipped and counted, and field errors read as NULL ("fields are set to null in case of errors");
  without it, either one fails the query. `json.fail-on-missing-field` makes an absent key an error
  (a JSON `null` is present). A message that is NULL or the JSON literal `null` yields no row and no
  error. Top-level JSON arrays yield one row per element (`records`). TIMESTAMP text follows
  `json.timestamp-format.standard`: 'SQL' `2020-12-30 12:13:14.123` (TIMESTAMP_LTZ with a trailing
  `Z`), 'ISO-8601' `2020-12-30T12:13:14.123`; fractions are written without trailing zeros, as Flink.
* CSV (`CsvRowDataDeserializationSchema`): a row with the wrong number of fields or an unclosed quote
  fails the query; with `csv.ignore-parse-errors` it is kept, with the missing fields and the fields
  that do not convert as NULL (Flink never drops a CSV row for this). Empty messages and, with
  `csv.allow-comments`, lines starting with `#` yield no row. ARRAY columns are split on
  `csv.array-element-delimiter`.
* raw: the whole payload is the single column; numbers are `raw.endianness` two's complement / IEEE 754
  of exactly the type's size (otherwise the query fails: "Size of data received for deserializing INT
  type is not 4."); NULL payloads are NULL values.

Known differences from Flink, all in rare corners: a fractional JSON number in an integer column is a
field error (Flink truncates it); an empty unquoted CSV field reads as NULL (Flink: '' for strings, an
error for numbers); values nested in ROW/ARRAY/MAP use Spark's JSON conversion rules and timestamp
text with a fixed 3-digit fraction when written; `json.encode.decimal-as-plain-number` is rejected.

How a caller uses it (see `connector.connectors.sources`): `staged(frame, records(payload, fmt), decode...)` gives
one row per record with the parsed payload; then read `Decoded.values`, drop rows where `absent` or
`malformed`, count `malformed`, and fail the query where `problem` is not NULL with `failure(...)`,
which names the record's origin:
"Malformed JSON record in topic 'orders' partition 0 offset 17: field 'amount' (DECIMAL(10, 2))
cannot be read from "12x". Set 'json.ignore-parse-errors' = 'true' to skip malformed records."
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    AtomicType,
    BinaryType,
    BooleanType,
    ByteType,
    CharType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
    VarcharType,
)

from connector.diagnostics import Diagnostic, PipelineError
from connector.options import framework as options
from connector.sql.catalog import Column as TableColumn
from connector.sql.catalog import Table
from connector.sql.types import spark_type

JSON, CSV, RAW = "json", "csv", "raw"
SUPPORTED = (JSON, CSV, RAW)

_CORRUPT = "__corrupt_record"
_SNIPPET_CHARS = 200
# Java's BigDecimal(String) grammar: text Flink turns into a DECIMAL (NULL when it overflows).
_DECIMAL_TEXT = r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$"
# Spark's decode/encode accept only these charsets (spark.sql.legacy.javaCharsets is off).
_SPARK_CHARSETS = ("US-ASCII", "ISO-8859-1", "UTF-8", "UTF-16BE", "UTF-16LE", "UTF-16", "UTF-32")
_RAW_SIZES: dict[type[DataType], int] = {
    ByteType: 1,
    ShortType: 2,
    IntegerType: 4,
    LongType: 8,
    FloatType: 4,
    DoubleType: 8,
    BooleanType: 1,
}
_RAW_BITS_OF: dict[type[DataType], tuple[str, str]] = {
    FloatType: ("java.lang.Float", "intBitsToFloat"),
    DoubleType: ("java.lang.Double", "longBitsToDouble"),
}
_RAW_BITS_TO: dict[type[DataType], tuple[str, str]] = {
    FloatType: ("java.lang.Float", "floatToRawIntBits"),
    DoubleType: ("java.lang.Double", "doubleToRawLongBits"),
}


@dataclass(frozen=True)
class PayloadField:
    """A table column carried in a key or value payload."""

    column: str  # the table column it fills
    name: str  # its name inside the payload ('key.fields-prefix' stripped from key fields)
    data_type: DataType  # Spark type of the column
    type_sql: str  # the declared Flink type, for messages


@dataclass(frozen=True)
class PayloadFormat:
    """The format of a table's key or value, its typed options and the columns it (de)serializes."""

    identifier: str
    role: str  # "key" or "value"
    options: Mapping[str, Any]
    fields: tuple[PayloadField, ...]
    option_prefix: str  # how this format's options are spelled in the table: 'json.', 'value.json.', 'key.raw.'
    table: str

    @classmethod
    def of(cls, table: Table, role: str, columns: Sequence[TableColumn] | None = None) -> PayloadFormat | None:
        """The table's format in `role`, or None when it has none; unsupported formats raise PipelineError."""
        found = options.format_options(table, role)
        if found is None:
            return None
        identifier, values = found
        format_key = (
            "key.format" if role == "key" else ("value.format" if "value.format" in table.options else "format")
        )
        if identifier not in SUPPORTED:
            _fail(
                table,
                format_key,
                f"Format '{identifier}' cannot encode Kafka records; use one of {', '.join(SUPPORTED)}.",
            )
        prefix = "key." if role == "key" else ("value." if format_key == "value.format" else "")
        strip = (table.options.get("key.fields-prefix") or "") if role == "key" else ""
        chosen = options.format_columns(table, role) if columns is None else list(columns)
        fields = tuple(
            PayloadField(
                c.name,
                c.name[len(strip) :] if strip and c.name.startswith(strip) else c.name,
                _spark_type_of(c),
                c.type_sql or (c.data_type.sql() if c.data_type is not None else ""),
            )
            for c in chosen
        )
        fmt = cls(identifier, role, values, fields, f"{prefix}{identifier}.", table.name)
        fmt._check_supported(table, format_key)
        return fmt

    @property
    def ignore_parse_errors(self) -> bool:
        return bool(self.options.get("ignore-parse-errors", False))

    @property
    def label(self) -> str:
        return {JSON: "JSON", CSV: "CSV", RAW: "raw"}[self.identifier]

    def _check_supported(self, table: Table, format_key: str) -> None:
        """Rejects what Spark cannot do, at the option that asks for it."""
        if self.identifier == RAW:
            if len(self.fields) != 1:
                _fail(
                    table,
                    format_key,
                    f"The 'raw' format needs exactly one column in the {self.role}, not {len(self.fields)}.",
                )
            charset = str(self.options.get("charset", "UTF-8"))
            if isinstance(self.fields[0].data_type, StringType | CharType | VarcharType) and not _spark_charset(
                charset
            ):
                _fail(
                    table,
                    self.option_prefix + "charset",
                    f"Charset '{charset}' is not supported on Spark; use one of {', '.join(_SPARK_CHARSETS)}.",
                )
        if self.identifier == JSON and self.options.get("encode.decimal-as-plain-number"):
            _fail(
                table,
                self.option_prefix + "encode.decimal-as-plain-number",
                "'encode.decimal-as-plain-number' = 'true' is not supported: Spark writes DECIMAL values as "
                "Java's BigDecimal.toString does (the Flink default).",
            )
        if self.identifier == CSV:
            for f in self.fields:
                nested = f.data_type.elementType if isinstance(f.data_type, ArrayType) else f.data_type
                if not isinstance(nested, AtomicType):
                    _fail(
                        table,
                        format_key,
                        f"The 'csv' format cannot hold column '{f.column}' of type {f.type_sql}: only atomic "
                        "types and arrays of them.",
                    )


@dataclass(frozen=True)
class Decoded:
    """Spark expressions that turn a payload column into table fields, with Flink's error policy.

    `stage` columns must be added to the frame first; the other expressions refer to them by name.
    """

    stage: dict[str, Column]
    values: dict[str, Column]  # table column -> value of the declared type
    absent: Column  # the payload yields no row and that is not an error
    malformed: Column  # the record is skipped and counted (ignore-parse-errors)
    problem: Column  # why the record fails the query, or NULL


def _fail(table: Table, key: str, message: str) -> None:
    raise PipelineError([Diagnostic.at(table.option_position(key), "unsupported-format", message)])


def _spark_type_of(column: TableColumn) -> DataType:
    if column.data_type is None:
        raise ValueError(f"column '{column.name}' has no data type")
    return spark_type(column.data_type)


def _spark_charset(charset: str) -> bool:
    return charset.upper().replace("_", "-") in _SPARK_CHARSETS


def _is_string(data_type: DataType) -> bool:
    return isinstance(data_type, StringType | CharType | VarcharType)


# ---------------------------------------------------------------------------------------------------------
# Decoding
# ---------------------------------------------------------------------------------------------------------


def decode(payload: Column, fmt: PayloadFormat, stage_prefix: str) -> Decoded:
    """The fields of one payload (BINARY or STRING column); `stage_prefix` names the staged columns."""
    if fmt.identifier == JSON:
        return _json_decode(payload, fmt, stage_prefix)
    if fmt.identifier == CSV:
        return _csv_decode(payload, fmt, stage_prefix)
    return _raw_decode(payload, fmt, stage_prefix)


def records(payload: Column, fmt: PayloadFormat) -> Column:
    """The records of one payload as an ARRAY, to `decode` one by one: the elements of a top-level JSON
    array (JSON values only, as Flink), else the payload alone.

    A NULL payload is one NULL record, and a payload that is not a valid array is one record (which
    `decode` then reports), so nothing is lost; `[]` holds none.
    """
    if fmt.identifier != JSON or fmt.role != "value":
        return F.array(payload)
    text = payload.cast(StringType())
    elements = F.from_json(text, ArrayType(StringType()))
    is_array = F.ltrim(text).startswith("[") & elements.isNotNull()
    return F.when(is_array, elements).otherwise(F.array(text))


def staged(
    frame: DataFrame, records: Column, decode_record: Callable[[Column], Sequence[Decoded]]
) -> tuple[DataFrame, list[Decoded]]:
    """`frame` with one row per element of `records` (an ARRAY column) plus the `stage` columns of the
    decoders `decode_record` builds for one element.

    The stage is computed inside a generator (`inline`): Spark pushes filters down through projections,
    inlining their expressions, but never below a generator's outputs, so each payload is parsed once
    even under the filters that fail the query or drop rows.
    """
    built: list[Sequence[Decoded]] = []

    def stage_of(record: Column) -> Column:
        decoded = decode_record(record)
        built.append(decoded)
        return F.struct(*[column.alias(name) for d in decoded for name, column in d.stage.items()])

    frame = frame.select("*", F.inline(F.transform(records, stage_of)))
    return frame, list(built[0])


def failure(fmt: PayloadFormat, problem: Column, origin: Column) -> Column:
    """A boolean filter condition that is true, or fails the query with a message naming `origin`
    (e.g. "topic 'orders' partition 0 offset 17") when `problem` is not NULL."""
    what = "record" if fmt.role == "value" else "key"
    hint = (
        f" Set '{fmt.option_prefix}ignore-parse-errors' = 'true' to skip malformed records."
        if fmt.identifier in (JSON, CSV)
        else ""
    )
    message = F.concat(F.lit(f"Malformed {fmt.label} {what} in "), origin, F.lit(": "), problem, F.lit("." + hint))
    return F.when(problem.isNotNull(), F.raise_error(message)).otherwise(F.lit(True))


def kafka_origin(topic: Column, partition: Column, offset: Column) -> Column:
    """ "topic 'orders' partition 0 offset 17", for `failure`."""
    return F.concat(
        F.lit("topic '"),
        topic,
        F.lit("' partition "),
        partition.cast("string"),
        F.lit(" offset "),
        offset.cast("string"),
    )


def _snippet(text: Column) -> Column:
    """The payload text quoted for a message, cut after a few hundred characters."""
    cut = F.when(F.length(text) > _SNIPPET_CHARS, F.concat(F.substring(text, 1, _SNIPPET_CHARS), F.lit("...")))
    return F.concat(F.lit('"'), cut.otherwise(text), F.lit('"'))


def _first(problems: Sequence[Column]) -> Column:
    if not problems:
        return F.lit(None).cast(StringType())
    return problems[0] if len(problems) == 1 else F.coalesce(*problems)


@dataclass(frozen=True)
class _TextRules:
    """Which temporal text a format accepts (regular expressions checked before Spark's lenient casts)."""

    date: str
    timestamp: str
    timestamp_ltz: str  # must end in 'Z' or be read as UTC (see ltz_suffix)
    ltz_suffix: str  # appended before casting so that Spark reads the text as UTC


_FRACTION = r"(\.\d{1,9})?"
_JSON_SQL = _TextRules(
    date=r"^\d{4}-\d{2}-\d{2}$",
    timestamp=rf"^\d{{4}}-\d{{2}}-\d{{2}} \d{{2}}:\d{{2}}:\d{{2}}{_FRACTION}$",
    timestamp_ltz=rf"^\d{{4}}-\d{{2}}-\d{{2}} \d{{2}}:\d{{2}}:\d{{2}}{_FRACTION}Z$",
    ltz_suffix="",
)
_JSON_ISO = _TextRules(
    date=_JSON_SQL.date,
    timestamp=rf"^\d{{4}}-\d{{2}}-\d{{2}}T\d{{2}}:\d{{2}}(:\d{{2}}{_FRACTION})?$",
    timestamp_ltz=rf"^\d{{4}}-\d{{2}}-\d{{2}}T\d{{2}}:\d{{2}}(:\d{{2}}{_FRACTION})?Z$",
    ltz_suffix="",
)
# java.sql.Date.valueOf / Timestamp.valueOf, as Flink's CSV converters use; TIMESTAMP_LTZ read as UTC.
_CSV_TEXT = _TextRules(
    date=r"^\d{4}-\d{1,2}-\d{1,2}$",
    timestamp=r"^\d{4}-\d{1,2}-\d{1,2} \d{1,2}:\d{1,2}:\d{1,2}(\.\d{0,9})?$",
    timestamp_ltz=r"^\d{4}-\d{1,2}-\d{1,2} \d{1,2}:\d{1,2}:\d{1,2}(\.\d{0,9})?$",
    ltz_suffix="Z",
)


def _from_text(raw: Column, data_type: DataType, rules: _TextRules) -> tuple[Column, Column]:
    """Flink's conversion of a field's text to `data_type`: (value, error), error being true when the
    text is there but does not convert (the value is then NULL)."""
    if _is_string(data_type):
        return raw, F.lit(False)
    if isinstance(data_type, BooleanType):
        return F.lower(F.trim(raw)) == F.lit("true"), F.lit(False)  # Boolean.parseBoolean
    if isinstance(data_type, DecimalType):
        value = raw.try_cast(data_type)  # NULL on overflow, as DecimalData.fromBigDecimal
        return value, raw.isNotNull() & ~raw.rlike(_DECIMAL_TEXT)
    if isinstance(data_type, ByteType | ShortType | IntegerType | LongType | FloatType | DoubleType):
        value = F.trim(raw).try_cast(data_type)
    elif isinstance(data_type, BinaryType):
        value = F.try_to_binary(raw, F.lit("base64"))
    elif isinstance(data_type, DateType):
        value = F.when(raw.rlike(rules.date), raw.try_cast(data_type))
    elif isinstance(data_type, TimestampNTZType):
        value = F.when(raw.rlike(rules.timestamp), raw.try_cast(data_type))
    elif isinstance(data_type, TimestampType):
        text = F.concat(raw, F.lit(rules.ltz_suffix)) if rules.ltz_suffix else raw
        value = F.when(raw.rlike(rules.timestamp_ltz), text.try_cast(data_type))
    else:
        value = raw.try_cast(data_type)
    return value, raw.isNotNull() & value.isNull()


def _field_problem(field: PayloadField, error: Column, raw: Column) -> Column:
    return F.when(
        error, F.concat(F.lit(f"field '{field.name}' ({field.type_sql}) cannot be read from "), _snippet(raw))
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
    return isinstance(data_type, DecimalType | StructType | ArrayType | MapType)


def _json_decode(payload: Column, fmt: PayloadFormat, stage_prefix: str) -> Decoded:
    standard = str(fmt.options.get("timestamp-format.standard", "SQL"))
    rules = _JSON_ISO if standard == "ISO-8601" else _JSON_SQL
    spark_options = {
        "mode": "PERMISSIVE",
        "columnNameOfCorruptRecord": _CORRUPT,
        **_json_temporal_options(standard),
    }
    by_spark = [f for f in fmt.fields if _parsed_by_spark(f.data_type)]
    schema = StructType(
        [StructField(f.name, f.data_type if f in by_spark else StringType()) for f in fmt.fields]
        + [StructField(_CORRUPT, StringType())]
    )
    text_name, parsed_name = f"{stage_prefix}_text", f"{stage_prefix}_parsed"
    text_expr = payload.cast(StringType())
    stage = {text_name: text_expr, parsed_name: F.from_json(text_expr, schema, spark_options)}
    text, parsed = F.col(text_name), F.col(parsed_name)

    corrupt = parsed.getField(_CORRUPT).isNotNull()  # not an object, or a Spark-parsed field failed
    absent = text.isNull() | (F.trim(text) == F.lit("null"))
    not_object = ~absent & corrupt & F.json_object_keys(text).isNull()
    # Text of the Spark-parsed fields, read again only for records Spark flagged.
    texts = F.from_json(text, StructType([StructField(f.name, StringType()) for f in by_spark]))

    values: dict[str, Column] = {}
    problems: list[Column] = []
    for f in fmt.fields:
        raw = parsed.getField(f.name)
        if isinstance(f.data_type, DecimalType):
            source = texts.getField(f.name)
            error = corrupt & raw.isNull() & source.isNotNull() & ~source.rlike(_DECIMAL_TEXT)
            value = raw
        elif f in by_spark:
            source = texts.getField(f.name)
            alone = StructType([StructField(f.name, f.data_type), StructField(_CORRUPT, StringType())])
            error = corrupt & F.from_json(text, alone, spark_options).getField(_CORRUPT).isNotNull()
            value = raw
        else:
            source = raw
            value, error = _from_text(raw, f.data_type, rules)
        values[f.column] = value
        problems.append(_field_problem(f, error, source))

    if fmt.ignore_parse_errors:
        return Decoded(stage, values, absent, not_object, F.lit(None).cast(StringType()))
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
        .when(not_object, F.concat(F.lit("not a JSON object: "), _snippet(text)))
        .otherwise(_first(problems))
    )
    return Decoded(stage, values, absent, F.lit(False), problem)


def _csv_spark_options(fmt: PayloadFormat) -> dict[str, str]:
    """Spark CSV options for Flink's: RFC 4180 quote doubling unless an escape character is set."""
    quote = "\u0000" if fmt.options.get("disable-quote-character") else str(fmt.options.get("quote-character", '"'))
    spark_options = {
        "sep": str(fmt.options.get("field-delimiter", ",")),
        "quote": quote,
        "escape": str(fmt.options.get("escape-character") or quote),
        "emptyValue": "",
    }
    null_literal = fmt.options.get("null-literal")
    if null_literal is not None:
        spark_options["nullValue"] = str(null_literal)
    return spark_options


def _csv_decode(payload: Column, fmt: PayloadFormat, stage_prefix: str) -> Decoded:
    schema = StructType([StructField(f.name, StringType()) for f in fmt.fields] + [StructField(_CORRUPT, StringType())])
    spark_options = {**_csv_spark_options(fmt), "mode": "PERMISSIVE", "columnNameOfCorruptRecord": _CORRUPT}
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
    for f in fmt.fields:
        raw = parsed.getField(f.name)
        if isinstance(f.data_type, ArrayType):
            value, error = _csv_array(raw, f.data_type, delimiter)
        else:
            value, error = _from_text(raw, f.data_type, _CSV_TEXT)
        values[f.column] = value
        problems.append(_field_problem(f, error, raw))
    if fmt.ignore_parse_errors:
        return Decoded(stage, values, absent, F.lit(False), F.lit(None).cast(StringType()))
    corrupt = parsed.getField(_CORRUPT).isNotNull()
    count = len(fmt.fields)
    problem = (
        F.when(absent, F.lit(None).cast(StringType()))
        .when(corrupt, F.concat(F.lit(f"expected {count} field{'s' if count != 1 else ''} in "), _snippet(text)))
        .otherwise(_first(problems))
    )
    return Decoded(stage, values, absent, F.lit(False), problem)


def _csv_array(raw: Column, data_type: ArrayType, delimiter: str) -> tuple[Column, Column]:
    elements = F.split(raw, _regex_literal(delimiter))
    element_type = data_type.elementType
    value = F.transform(elements, lambda e: _from_text(e, element_type, _CSV_TEXT)[0])
    bad = F.exists(elements, lambda e: _from_text(e, element_type, _CSV_TEXT)[1])
    return value, raw.isNotNull() & bad


def _regex_literal(text: str) -> str:
    return "".join("\\" + c if c in r"\^$.|?*+()[]{}" else c for c in text)


def _raw_decode(record: Column, fmt: PayloadFormat, stage_prefix: str) -> Decoded:
    field = fmt.fields[0]
    payload_name = f"{stage_prefix}_payload"
    stage = {payload_name: record}
    payload = F.col(payload_name)
    data_type = field.data_type
    nothing = F.lit(None).cast(StringType())
    if _is_string(data_type):
        charset = str(fmt.options.get("charset", "UTF-8"))
        text = payload.cast(StringType()) if charset.upper() == "UTF-8" else F.decode(payload, charset)
        return Decoded(stage, {field.column: text}, F.lit(False), F.lit(False), nothing)
    size = _RAW_SIZES.get(type(data_type))
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
            owner, method = _RAW_BITS_OF[type(data_type)]
            argument = bits.cast(IntegerType()) if isinstance(data_type, FloatType) else bits
            value = F.reflect(F.lit(owner), F.lit(method), argument).cast(data_type)
        else:
            value = bits.cast(data_type)
    type_name = field.type_sql.split("(")[0].upper() or data_type.simpleString().upper()
    wrong_size = payload.isNotNull() & (F.length(payload) != F.lit(size))
    problem = F.when(wrong_size, F.lit(f"Size of data received for deserializing {type_name} type is not {size}"))
    readable = payload.isNotNull() & ~wrong_size  # reflect() must not see NULL
    return Decoded(stage, {field.column: F.when(readable, value)}, F.lit(False), F.lit(False), problem)


# ---------------------------------------------------------------------------------------------------------
# Encoding
# ---------------------------------------------------------------------------------------------------------


def encode(fmt: PayloadFormat, row: Mapping[str, Column]) -> Column:
    """The payload (BINARY) of one row; `row` maps table column names to their values."""
    if fmt.identifier == RAW:
        return _raw_encode(fmt, row[fmt.fields[0].column])
    if fmt.identifier == JSON:
        standard = str(fmt.options.get("timestamp-format.standard", "SQL"))
        struct = F.struct(*[_json_text(row[f.column], f.data_type, standard).alias(f.name) for f in fmt.fields])
        spark_options = {
            **_json_temporal_options(standard),
            "timestampNTZFormat": "yyyy-MM-dd" + ("'T'" if standard == "ISO-8601" else " ") + "HH:mm:ss.SSS",
            "timestampFormat": "yyyy-MM-dd" + ("'T'" if standard == "ISO-8601" else " ") + "HH:mm:ss.SSS'Z'",
            "ignoreNullFields": "true" if fmt.options.get("encode.ignore-null-fields") else "false",
        }
        return F.to_json(struct, spark_options).cast(BinaryType())
    texts = [_csv_text(row[f.column], f.data_type, fmt) for f in fmt.fields]
    if fmt.options.get("disable-quote-character"):
        null_text = F.lit(str(fmt.options.get("null-literal") or ""))
        sep = str(fmt.options.get("field-delimiter", ","))
        return F.concat_ws(sep, *[F.coalesce(t, null_text) for t in texts]).cast(BinaryType())
    struct = F.struct(*[t.alias(f.name) for t, f in zip(texts, fmt.fields, strict=True)])
    spark_options = _csv_spark_options(fmt)
    spark_options.setdefault("nullValue", "")
    return F.to_csv(struct, spark_options).cast(BinaryType())


def _utc_wall_clock(instant: Column) -> Column:
    """The UTC date-time of a TIMESTAMP_LTZ as TIMESTAMP_NTZ, whatever the session time zone."""
    seconds = (F.unix_micros(instant) / F.lit(1_000_000)).cast(DecimalType(18, 6))
    return F.lit("1970-01-01 00:00:00").cast(TimestampNTZType()) + F.make_dt_interval(
        F.lit(0), F.lit(0), F.lit(0), seconds
    )


def _flink_timestamp_text(value: Column, data_type: DataType, separator: str) -> Column:
    """Flink's SQL_TIMESTAMP_FORMAT / ISO_LOCAL_DATE_TIME: fraction without trailing zeros; LTZ in UTC + 'Z'."""
    local = _utc_wall_clock(value) if isinstance(data_type, TimestampType) else value
    text = F.regexp_replace(F.date_format(local, f"yyyy-MM-dd{separator}HH:mm:ss.SSSSSS"), r"\.?0+$", "")
    return F.concat(text, F.lit("Z")) if isinstance(data_type, TimestampType) else text


def _json_text(value: Column, data_type: DataType, standard: str) -> Column:
    if isinstance(data_type, TimestampType | TimestampNTZType):
        return _flink_timestamp_text(value, data_type, "'T'" if standard == "ISO-8601" else " ")
    return value


def _csv_text(value: Column, data_type: DataType, fmt: PayloadFormat) -> Column:
    if isinstance(data_type, ArrayType):
        delimiter = str(fmt.options.get("array-element-delimiter", ";"))
        element_type = data_type.elementType
        return F.array_join(F.transform(value, lambda e: _csv_text(e, element_type, fmt)), delimiter, "")
    if isinstance(data_type, TimestampType | TimestampNTZType):
        return _flink_timestamp_text(value, data_type, " ")
    if isinstance(data_type, BinaryType):
        return F.base64(value)
    return value.cast(StringType())


def _raw_encode(fmt: PayloadFormat, value: Column) -> Column:
    data_type = fmt.fields[0].data_type
    if _is_string(data_type):
        charset = str(fmt.options.get("charset", "UTF-8"))
        return value.cast(BinaryType()) if charset.upper() == "UTF-8" else F.encode(value, charset)
    size = _RAW_SIZES.get(type(data_type))
    if size is None:
        return value
    if isinstance(data_type, BooleanType):
        digits = F.when(value, F.lit("01")).otherwise(F.lit("00"))
    else:
        if isinstance(data_type, FloatType | DoubleType):
            owner, method = _RAW_BITS_TO[type(data_type)]
            bits = F.reflect(F.lit(owner), F.lit(method), value).cast(LongType())
        else:
            bits = value.cast(LongType())
        digits = F.substring(F.lpad(F.hex(bits), 16, "0"), 17 - 2 * size, 2 * size)
    if str(fmt.options.get("endianness", "big-endian")) != "big-endian":
        digits = F.concat(*[F.substring(digits, 2 * i + 1, 2) for i in reversed(range(size))])
    return F.when(value.isNotNull(), F.unhex(digits))
