"""A table's key or value format on Spark: bytes to table fields and back, as Spark Column expressions.

Each format module (`connector.formats.json`, `.csv`, `.raw`, ...) implements a `Codec`; this module holds
what they share.

Records are decoded and encoded by Spark SQL expressions (from_json, from_csv, byte arithmetic), never by Python
code per record; the one shortcut is JSON values of simple types, which the Kafka source's readers decode batch by
batch with Arrow's parser when that gives the same rows (`Codec.reader_fields`, `connector.formats.json_arrow`).
The semantics are Flink's json, csv and raw formats:

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

Known differences from Flink, all in rare corners: a fractional number read into a JSON integer field is
truncated, as Flink does, also when it is written as a JSON string ("12.7"), where Flink fails; values nested
in ROW/ARRAY/MAP use Spark's JSON conversion rules and timestamp text with a fixed 3-digit fraction when
written.

How a caller uses it (see the connectors' `reading` modules): `staged(frame, records(payload, fmt), decode...)` gives
one row per record with the parsed payload; then read `Decoded.values`, drop rows where `absent` or
`malformed`, count `malformed`, and fail the query where `problem` is not NULL with `failure(...)`,
which names the record's origin:
"Malformed JSON record in topic 'orders' partition 0 offset 17: field 'amount' (DECIMAL(10, 2))
cannot be read from "12x". Set 'json.ignore-parse-errors' = 'true' to skip malformed records."
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from connector.catalog.model import Column as TableColumn
from connector.catalog.model import ColumnKind, Table
from connector.connectors import registry
from connector.diagnostics import Diagnostic, PipelineError, Position
from connector.formats import registry as formats

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame
    from pyspark.sql.types import DataType

CORRUPT = "__corrupt_record"  # Spark's column for a record it cannot parse
_SNIPPET_CHARS = 200
# Java's BigDecimal(String) grammar: text Flink turns into a DECIMAL (NULL when it overflows).
DECIMAL_TEXT = r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$"


@dataclass(frozen=True)
class PayloadField:
    """A table column carried in a key or value payload."""

    column: str  # the table column it fills
    name: str  # its name inside the payload ('key.fields-prefix' stripped from key fields)
    data_type: DataType  # Spark type of the column
    type_sql: str  # the declared Flink type, for messages
    flink_type: exp.DataType | None = None  # the declared Flink type (formats that derive a schema from it)
    nullable: bool = True  # the column is not declared NOT NULL


class Codec:
    """What a format does on Spark. A format module subclasses it and declares an instance as its `Format`'s
    `codec`; the methods it does not override are what the format cannot do."""

    label = ""  # the format as messages name it ('JSON')
    spark_packages: tuple[str, ...] = ()  # Maven coordinates of Spark modules its functions need in the session

    def decode(self, payload: Column, fmt: PayloadFormat, stage_prefix: str) -> Decoded:
        """The fields of one payload (BINARY or STRING column); `stage_prefix` names the staged columns."""
        raise NotImplementedError(f"format '{fmt.identifier}' does not decode records")

    def encode(self, fmt: PayloadFormat, row: Mapping[str, Column]) -> Column:
        """The payload (BINARY) of one row; `row` maps table column names to their values."""
        raise NotImplementedError(f"format '{fmt.identifier}' does not encode records")

    def encode_change(self, fmt: PayloadFormat, row: Mapping[str, Column], retracts: Column) -> Column:
        """The payload (BINARY) of one changelog row: `retracts` is true for a DELETE or UPDATE_BEFORE, false for
        an INSERT or UPDATE_AFTER. Only changelog formats that write (debezium-json) implement it."""
        raise NotImplementedError(f"format '{fmt.identifier}' does not write changelogs")

    @property
    def writes_changes(self) -> bool:
        """Whether the format writes changelog rows (`encode_change`), retractions included."""
        return type(self).encode_change is not Codec.encode_change

    def prepare(self, payload: Column, fmt: PayloadFormat, stage_prefix: str) -> dict[str, Column]:
        """Columns computed from the whole payload before its records are staged, which `decode` reads by name:
        what Spark cannot compute inside the higher-order function that stages records (a Python function)."""
        return {}

    def records(self, payload: Column, fmt: PayloadFormat) -> Column:
        """The records of one payload as an ARRAY, to `decode` one by one: the payload alone, unless the
        format packs several (a top-level JSON array). A NULL payload is one NULL record."""
        from pyspark.sql import functions as F

        return F.array(payload)

    def reader_fields(self, fmt: PayloadFormat) -> tuple[tuple[str, str], ...]:
        """The fields (payload name, Spark type name) a Kafka reader may decode itself from JSON payloads
        (`connector.formats.json_arrow`), or none: then Spark decodes every record with `decode`."""
        return ()

    def check(self, fmt: PayloadFormat, table: Table, format_key: str) -> None:
        """Raise PipelineError, at the option that asks for it, for what Spark cannot do with this format."""

    @property
    def handles_records(self) -> bool:
        """Whether the format decodes and encodes single records (Kafka messages, lines of a file)."""
        return type(self).decode is not Codec.decode

    def spark_files(self, values: Mapping[str, Any]) -> tuple[str, dict[str, str]] | None:
        """Spark's own file format and its options for files of this format (its typed options `values`), or
        None when Spark has no such format."""
        return None

    @property
    def reads_lines(self) -> bool:
        """Whether files are read line by line with `decode` (otherwise with Spark's own reader)."""
        return self.handles_records


@dataclass(frozen=True)
class PayloadFormat:
    """The format of a table's key or value, its typed options and the columns it (de)serializes."""

    identifier: str
    codec: Codec
    role: str  # "key" or "value"
    options: Mapping[str, Any]
    fields: tuple[PayloadField, ...]
    option_prefix: str  # how this format's options are spelled in the table: 'json.', 'value.json.', 'key.raw.'
    table: str
    skips_parse_errors: bool  # the format has an 'ignore-parse-errors' option
    position: Position | None = None  # where the table chooses the format, for errors found when it is used
    topic: str | None = None  # the Kafka topic of a kafka / upsert-kafka table with a single topic
    metadata: tuple[str, ...] = ()  # the format metadata the table reads: 'source.table' for 'value.source.table'

    @classmethod
    def of(cls, table: Table, role: str, columns: Sequence[TableColumn] | None = None) -> PayloadFormat | None:
        """The table's format in `role`, or None when it has none; unsupported formats raise PipelineError."""
        found = registry.format_options(table, role)
        if found is None:
            return None
        identifier, values = found
        format_key = (
            "key.format" if role == "key" else ("value.format" if "value.format" in table.options else "format")
        )
        declared = formats.get(identifier)
        codec = declared.codec if declared is not None else None
        if declared is None or codec is None or not codec.handles_records:
            usable = [f.identifier for f in formats.formats() if f.codec is not None and f.codec.handles_records]
            fail(
                table,
                format_key,
                f"Format '{identifier}' cannot encode records; use one of {', '.join(usable)}.",
            )
            raise AssertionError("unreachable")
        prefix = "key." if role == "key" else ("value." if format_key == "value.format" else "")
        strip = (table.options.get("key.fields-prefix") or "") if role == "key" else ""
        chosen = registry.format_columns(table, role) if columns is None else list(columns)
        fields = tuple(
            PayloadField(
                c.name,
                c.name[len(strip) :] if strip and c.name.startswith(strip) else c.name,
                spark_type_of(c),
                c.type_sql or (c.data_type.sql() if c.data_type is not None else ""),
                c.data_type,
                c.nullable,
            )
            for c in chosen
        )
        skips = any(o.key == "ignore-parse-errors" for o in declared.options)
        factory = registry.connector_factory(table)
        topic = table.options.get(factory.topic_option) if factory is not None and factory.topic_option else None
        fmt = cls(
            identifier,
            codec,
            role,
            values,
            fields,
            f"{prefix}{identifier}.",
            table.name,
            skips,
            table.option_position(format_key),
            topic if topic and ";" not in topic else None,
            _format_metadata(table, role, declared.readable_metadata),
        )
        codec.check(fmt, table, format_key)
        return fmt

    @property
    def ignore_parse_errors(self) -> bool:
        return bool(self.options.get("ignore-parse-errors", False))

    @property
    def label(self) -> str:
        return self.codec.label or self.identifier


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
    deleted: Column | None = None  # changelog formats: the row retracts (DELETE, UPDATE_BEFORE), else adds
    metadata: dict[str, Column] = field(default_factory=dict)  # the format's readable metadata, by key
    update_before: Column | None = None  # CDC formats: the row is the old row of an update (UPDATE_BEFORE)
    update_after: Column | None = None  # CDC formats: the row is the new row of an update (UPDATE_AFTER)


def _format_metadata(table: Table, role: str, readable: Mapping[str, str]) -> tuple[str, ...]:
    """The keys of `readable` (a format's metadata) that the table's metadata columns read as '<role>.<key>'."""
    prefix = f"{role}."
    keys = ((c.metadata_key or c.name) for c in table.columns if c.kind is ColumnKind.METADATA)
    return tuple(dict.fromkeys(k[len(prefix) :] for k in keys if k.startswith(prefix) and k[len(prefix) :] in readable))


def fail(table: Table, key: str, message: str) -> None:
    raise PipelineError([Diagnostic.at(table.option_position(key), "unsupported-format", message)])


def refuse_changelog_key(fmt: PayloadFormat, table: Table, format_key: str) -> None:
    """A changelog format (debezium-json, ...) as the key format: Flink refuses it, and so does this."""
    if fmt.role == "key":
        fail(
            table,
            format_key,
            f"A key format should only deal with INSERT-only records, but '{fmt.identifier}' is a changelog format; "
            "use it as the value format.",
        )


def spark_type_of(column: TableColumn) -> DataType:
    from connector.catalog.spark_types import spark_type

    if column.data_type is None:
        raise ValueError(f"column '{column.name}' has no data type")
    return spark_type(column.data_type)


def is_string(data_type: DataType) -> bool:
    from pyspark.sql.types import CharType, StringType, VarcharType

    return isinstance(data_type, StringType | CharType | VarcharType)


def decode(payload: Column, fmt: PayloadFormat, stage_prefix: str) -> Decoded:
    """The fields of one payload (BINARY or STRING column); `stage_prefix` names the staged columns."""
    return fmt.codec.decode(payload, fmt, stage_prefix)


def records(payload: Column, fmt: PayloadFormat) -> Column:
    """The records of one payload as an ARRAY, to `decode` one by one (see `Codec.records`)."""
    return fmt.codec.records(payload, fmt)


def encode(fmt: PayloadFormat, row: Mapping[str, Column]) -> Column:
    """The payload (BINARY) of one row; `row` maps table column names to their values."""
    return fmt.codec.encode(fmt, row)


def staged(
    frame: DataFrame,
    records: Column,
    decode_record: Callable[[Column], Sequence[Decoded]],
    decoded_before: Column | None = None,
) -> tuple[DataFrame, list[Decoded]]:
    """`frame` with one row per element of `records` (an ARRAY column) plus the `stage` columns of the
    decoders `decode_record` builds for one element (`stage`'s generator)."""
    from pyspark.sql import functions as F

    generated, decoded = stage(records, decode_record, decoded_before)
    return frame.select("*", F.inline(generated)), decoded


def stage(
    records: Column,
    decode_record: Callable[[Column], Sequence[Decoded]],
    decoded_before: Column | None = None,
) -> tuple[Column, list[Decoded]]:
    """The generator (for `F.inline`) of one row per element of `records` (an ARRAY column) with the `stage`
    columns of the decoders `decode_record` builds for one element, and those decoders. A row where
    `decoded_before` (a BOOLEAN column) is true, whose payload was decoded already, gives one row whose stage is
    that of a NULL record, and `records` is not evaluated for it.

    The stage is computed inside a generator (`inline`): Spark pushes filters down through projections,
    inlining their expressions, but never below a generator's outputs, so each payload is parsed once
    even under the filters that fail the query or drop rows. The generator runs row by row outside Spark's
    generated code: for the rows decoded before, the NULL record's stage is a constant (Spark folds it), where
    `records` and `transform` took a fifth of the JVM's time in a JSON pipeline (measured with JFR).
    """
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType

    built: list[Sequence[Decoded]] = []

    def stage_of(record: Column) -> Column:
        decoded = decode_record(record)
        built.append(decoded)
        return F.struct(*[column.alias(name) for d in decoded for name, column in d.stage.items()])

    generated = F.transform(records, stage_of)
    if decoded_before is not None:
        generated = F.when(decoded_before, F.array(stage_of(F.lit(None).cast(StringType())))).otherwise(generated)
    return generated, list(built[0])


def failure(fmt: PayloadFormat, problem: Column, origin: Column) -> Column:
    """A boolean filter condition that is true, or fails the query with a message naming `origin`
    (e.g. "topic 'orders' partition 0 offset 17") when `problem` is not NULL."""
    from pyspark.sql import functions as F

    what = "record" if fmt.role == "value" else "key"
    hint = (
        f" Set '{fmt.option_prefix}ignore-parse-errors' = 'true' to skip malformed records."
        if fmt.skips_parse_errors
        else ""
    )
    message = F.concat(F.lit(f"Malformed {fmt.label} {what} in "), origin, F.lit(": "), problem, F.lit("." + hint))
    return F.when(problem.isNotNull(), F.raise_error(message)).otherwise(F.lit(True))


def kafka_origin(topic: Column, partition: Column, offset: Column) -> Column:
    """ "topic 'orders' partition 0 offset 17", for `failure`."""
    from pyspark.sql import functions as F

    return F.concat(
        F.lit("topic '"),
        topic,
        F.lit("' partition "),
        partition.cast("string"),
        F.lit(" offset "),
        offset.cast("string"),
    )


INVALID_UTF8 = "invalid UTF-8 text"


def invalid_utf8(text: Column) -> Column:
    """Whether a payload cast to STRING holds bytes that are no UTF-8 (Spark keeps them as they are, and would
    show them as U+FFFD): Flink's text formats (Jackson) fail on such a record, it is malformed."""
    from pyspark.sql import functions as F

    return F.coalesce(~F.is_valid_utf8(text), F.lit(False))


def snippet(text: Column) -> Column:
    """The payload text quoted for a message, cut after a few hundred characters."""
    from pyspark.sql import functions as F

    cut = F.when(F.length(text) > _SNIPPET_CHARS, F.concat(F.substring(text, 1, _SNIPPET_CHARS), F.lit("...")))
    return F.concat(F.lit('"'), cut.otherwise(text), F.lit('"'))


def first_problem(problems: Sequence[Column]) -> Column:
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType

    if not problems:
        return F.lit(None).cast(StringType())
    return problems[0] if len(problems) == 1 else F.coalesce(*problems)


@dataclass(frozen=True)
class TextRules:
    """Which text a format accepts (regular expressions checked before Spark's lenient casts)."""

    date: str
    timestamp: str
    timestamp_ltz: str  # must end in 'Z' or be read as UTC (see ltz_suffix)
    ltz_suffix: str  # appended before casting so that Spark reads the text as UTC
    truncates_fractions: bool = False  # a number with a fraction reads into an integer column, truncated


FRACTION = r"(\.\d{1,9})?"


def from_text(raw: Column, data_type: DataType, rules: TextRules) -> tuple[Column, Column]:
    """Flink's conversion of a field's text to `data_type`: (value, error), error being true when the
    text is there but does not convert (the value is then NULL)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import (
        BinaryType,
        BooleanType,
        ByteType,
        DateType,
        DecimalType,
        DoubleType,
        FloatType,
        IntegerType,
        LongType,
        ShortType,
        TimestampNTZType,
        TimestampType,
    )

    if is_string(data_type):
        return raw, F.lit(False)
    if isinstance(data_type, BooleanType):
        return F.lower(F.trim(raw)) == F.lit("true"), F.lit(False)  # Boolean.parseBoolean
    if isinstance(data_type, DecimalType):
        value = raw.try_cast(data_type)  # NULL on overflow, as DecimalData.fromBigDecimal
        return value, raw.isNotNull() & ~raw.rlike(DECIMAL_TEXT)
    if isinstance(data_type, ByteType | ShortType | IntegerType | LongType | FloatType | DoubleType):
        value = F.trim(raw).try_cast(data_type)
        if rules.truncates_fractions and not isinstance(data_type, FloatType | DoubleType):
            exact = F.trim(raw).try_cast(DecimalType(38, 18)).try_cast(data_type)
            value = F.coalesce(value, F.when(raw.rlike(DECIMAL_TEXT), exact))
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


def field_problem(field: PayloadField, error: Column, raw: Column) -> Column:
    from pyspark.sql import functions as F

    return F.when(error, F.concat(F.lit(f"field '{field.name}' ({field.type_sql}) cannot be read from "), snippet(raw)))


def _utc_wall_clock(instant: Column) -> Column:
    """The UTC date-time of a TIMESTAMP_LTZ as TIMESTAMP_NTZ, whatever the session time zone."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import DecimalType, TimestampNTZType

    seconds = (F.unix_micros(instant) / F.lit(1_000_000)).cast(DecimalType(18, 6))
    return F.lit("1970-01-01 00:00:00").cast(TimestampNTZType()) + F.make_dt_interval(
        F.lit(0), F.lit(0), F.lit(0), seconds
    )


def flink_timestamp_text(value: Column, data_type: DataType, separator: str) -> Column:
    """Flink's SQL_TIMESTAMP_FORMAT / ISO_LOCAL_DATE_TIME: fraction without trailing zeros; LTZ in UTC + 'Z'."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import TimestampType

    local = _utc_wall_clock(value) if isinstance(data_type, TimestampType) else value
    text = F.regexp_replace(F.date_format(local, f"yyyy-MM-dd{separator}HH:mm:ss.SSSSSS"), r"\.?0+$", "")
    return F.concat(text, F.lit("Z")) if isinstance(data_type, TimestampType) else text
