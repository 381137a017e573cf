"""What the JSON changelog (CDC) formats share: a message is parsed once into its change events, each event's row
image is read with the `json` format's rules (Flink reads it with its JSON row converter), and a delete is flagged.

A format module's `records` turns a message into an ARRAY of `event(...)` structs: the message text (for errors),
whether the event deletes its row, why the event cannot be read (or NULL), and the row image as JSON text. An
update yields its new row only: the sinks a changelog may be written to here (upsert-kafka, jdbc with a PRIMARY
KEY, print) are keyed upserts, for which Flink's planner drops UPDATE_BEFORE too (DropUpdateBefore), so the tables
they end with are the same. A NULL or empty Kafka value is a tombstone: no row, no error.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField

from connector.formats.json import JsonOptions, json_decode
from connector.formats.payload import INVALID_UTF8, Codec, Decoded, PayloadFormat, fail, invalid_utf8, snippet
from connector.sql.catalog import Table

PARSE = {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": "__corrupt_record"}
# The `json` options every JSON changelog format takes too, written '<format>.<key>'.
JSON_OPTIONS = (
    JsonOptions.IGNORE_PARSE_ERRORS,
    JsonOptions.TIMESTAMP_FORMAT_STANDARD,
    JsonOptions.MAP_NULL_KEY_MODE,
    JsonOptions.MAP_NULL_KEY_LITERAL,
    JsonOptions.ENCODE_DECIMAL_AS_PLAIN_NUMBER,
)


def event(
    text: Column, deleted: Column, problem: Column, image: Column, metadata: Mapping[str, Column] | None = None
) -> Column:
    """One change event of a message, as `records` returns them; `metadata` holds the message's metadata the table
    reads (`read_metadata`), typed."""
    fields = [
        text.alias("text"),
        deleted.alias("deleted"),
        problem.cast(StringType()).alias("problem"),
        image.cast(StringType()).alias("image"),
    ]
    if metadata:
        fields.append(F.struct(*[value.alias(key) for key, value in metadata.items()]).alias("metadata"))
    return F.struct(*fields)


def message_problem(text: Column) -> Column:
    """Why a message is no change event at all (bad UTF-8, not a JSON object), or NULL."""
    return F.when(invalid_utf8(text), F.concat(F.lit(f"{INVALID_UTF8}: "), snippet(text))).when(
        F.coalesce(F.json_object_keys(text).isNull(), F.lit(True)),
        F.concat(F.lit("not a JSON object: "), snippet(text)),
    )


def read_metadata(fmt: PayloadFormat, available: Mapping[str, Callable[[], Column]]) -> dict[str, Column]:
    """The metadata the table reads (`fmt.metadata`), of `available` (key -> how to read it)."""
    return {key: available[key]() for key in fmt.metadata}


def metadata_fields(fmt: PayloadFormat, fields: Sequence[tuple[StructField, Sequence[str]]]) -> list[StructField]:
    """The message fields the table's metadata reads, of `fields` (each with the metadata keys that read it): a
    message is parsed with these only, so metadata nobody reads costs nothing per record."""
    return [f for f, keys in fields if set(keys) & set(fmt.metadata)]


def because(words: str, text: Column) -> Column:
    """An event problem: `words`, then the message."""
    return F.concat(F.lit(f"{words}: "), snippet(text))


def unknown(field: str, value: Column, text: Column) -> Column:
    """The problem of a message whose `field` has a value the format does not know."""
    return F.concat(F.lit(f'unknown "{field}" value "'), value, F.lit('": '), snippet(text))


def is_tombstone(text: Column) -> Column:
    """A NULL or empty Kafka value (Debezium writes one after each delete): no row, no error."""
    return text.isNull() | (text == F.lit(""))


class ChangelogJsonCodec(Codec):
    """Reads the events `records` gives; a format module subclasses it with its envelope."""

    def decode(self, payload: Column, fmt: PayloadFormat, stage_prefix: str) -> Decoded:
        row = json_decode(payload.getField("image"), fmt, stage_prefix)
        # The other expressions run outside the generator that computes the stage: they may only read stage columns.
        names = {part: f"{stage_prefix}_{part}" for part in ("event_text", "deleted", "event_problem")}
        text = payload.getField("text")
        stage = {
            names["event_text"]: text,
            names["deleted"]: payload.getField("deleted"),
            names["event_problem"]: F.coalesce(
                payload.getField("problem"),
                F.when(payload.getField("image").isNull(), because("a change event without its row", text)),
            ),
            **row.stage,
        }
        metadata = {}
        for index, key in enumerate(fmt.metadata):
            stage[f"{stage_prefix}_metadata_{index}"] = payload.getField("metadata").getField(key)
            metadata[key] = F.col(f"{stage_prefix}_metadata_{index}")
        absent = is_tombstone(F.col(names["event_text"]))
        deleted = F.coalesce(F.col(names["deleted"]), F.lit(False))
        event_problem = F.col(names["event_problem"])
        if fmt.ignore_parse_errors:
            malformed = ~absent & (event_problem.isNotNull() | row.malformed)
            return Decoded(stage, row.values, absent, malformed, F.lit(None).cast(StringType()), deleted, metadata)
        problem = F.when(~absent, F.coalesce(event_problem, row.problem))
        return Decoded(stage, row.values, absent, F.lit(False), problem, deleted, metadata)

    def check(self, fmt: PayloadFormat, table: Table, format_key: str) -> None:
        if fmt.role == "key":
            fail(
                table,
                format_key,
                f"A key format should only deal with INSERT-only records, but '{fmt.identifier}' is a changelog "
                "format; use it as the value format.",
            )
