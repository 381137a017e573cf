"""What the JSON changelog (CDC) formats share: a message is parsed once into its change events, each event's row
image is read with the `json` format's rules (Flink reads it with its JSON row converter), and a delete is flagged.

A format module's `records` turns a message into an ARRAY of `event(...)` structs: the message text (for errors),
whether the event retracts its row (a DELETE, or the UPDATE_BEFORE of an update), whether it is an
UPDATE_BEFORE, why the event cannot be read (or NULL), and the row image as JSON text. An update yields its old
row, then its new one, as Flink's deserializers do: an aggregate retracts the old row
(`connector.planning.operators.retractions`);
a projection into a keyed upsert sink drops it, as Flink's planner does (DropUpdateBefore). A NULL or empty Kafka
value is a tombstone: no row, no error.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from connector.catalog.model import Table
from connector.formats.json import JsonCodec, JsonOptions, json_decode
from connector.formats.payload import (
    INVALID_UTF8,
    Codec,
    Decoded,
    PayloadFormat,
    invalid_utf8,
    refuse_changelog_key,
    snippet,
)

if TYPE_CHECKING:
    from pyspark.sql import Column
    from pyspark.sql.types import StructField

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
    text: Column,
    deleted: Column,
    problem: Column,
    image: Column,
    metadata: Mapping[str, Column] | None = None,
    update_before: bool = False,
    update_after: bool = False,
) -> Column:
    """One change event of a message, as `records` returns them; `metadata` holds the message's metadata the table
    reads (`read_metadata`), typed. An `update_before` event retracts the old row of an update, an `update_after`
    one adds its new row."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType

    fields = [
        text.alias("text"),
        (deleted | F.lit(update_before)).alias("deleted"),
        F.lit(update_before).alias("update_before"),
        F.lit(update_after).alias("update_after"),
        problem.cast(StringType()).alias("problem"),
        image.cast(StringType()).alias("image"),
    ]
    if metadata:
        fields.append(F.struct(*[value.alias(key) for key, value in metadata.items()]).alias("metadata"))
    return F.struct(*fields)


def message_problem(text: Column) -> Column:
    """Why a message is no change event at all (bad UTF-8, not a JSON object), or NULL."""
    from pyspark.sql import functions as F

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


def old_image(new: Column, old: Column, changed: Column | None = None) -> Column:
    """Canal's and Maxwell's old row: the new row's JSON with the fields of `old` (those the update changed, an
    explicit null included) in place; the JSON reader takes the last of repeated keys, so `old`'s fields, written
    after, win. A field in `changed` (the names any row of a Canal message changed) but not in `old` is NULL:
    Flink's deserializers copy a field from the new row only when no "old" object of the message has it
    (`JsonNode.findValue` over the whole "old" array)."""
    from pyspark.sql import functions as F


    def members(text: Column) -> Column:  # the object's text between its braces; NULL when it has none
        body = F.regexp_extract(text, r"(?s)^\s*\{(.*)\}\s*$", 1)
        return F.when(F.trim(body) != F.lit(""), body)

    parts = [members(new)]
    if changed is not None:
        escaped = F.transform(changed, lambda k: F.regexp_replace(k, r'(["\\])', r"\\$1"))
        quoted = F.transform(escaped, lambda k: F.concat(F.lit('"'), k, F.lit('":null')))
        parts.append(F.when(F.size(changed) > F.lit(0), F.concat_ws(",", quoted)))
    parts.append(members(old))
    return F.concat(F.lit("{"), F.concat_ws(",", *parts), F.lit("}"))


def row_text(fmt: PayloadFormat, row: Mapping[str, Column]) -> Column:
    """A row as the `json` format writes it (Flink's changelog serializers wrap its JSON row converter)."""
    from pyspark.sql.types import StringType

    return JsonCodec().encode(fmt, row).cast(StringType())


def message(*parts: str | Column) -> Column:
    """The bytes of a change message written from its text `parts` (literal text and columns, in order)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import BinaryType

    return F.concat(*[F.lit(part) if isinstance(part, str) else part for part in parts]).cast(BinaryType())


def because(words: str, text: Column) -> Column:
    """An event problem: `words`, then the message."""
    from pyspark.sql import functions as F

    return F.concat(F.lit(f"{words}: "), snippet(text))


def unknown(field: str, value: Column, text: Column) -> Column:
    """The problem of a message whose `field` has a value the format does not know."""
    from pyspark.sql import functions as F

    return F.concat(F.lit(f'unknown "{field}" value "'), value, F.lit('": '), snippet(text))


def is_tombstone(text: Column) -> Column:
    """A NULL or empty Kafka value (Debezium writes one after each delete): no row, no error."""
    from pyspark.sql import functions as F

    return text.isNull() | (text == F.lit(""))


class ChangelogJsonCodec(Codec):
    """Reads the events `records` gives; a format module subclasses it with its envelope."""

    def decode(self, payload: Column, fmt: PayloadFormat, stage_prefix: str) -> Decoded:
        from pyspark.sql import functions as F
        from pyspark.sql.types import StringType

        row = json_decode(payload.getField("image"), fmt, stage_prefix)
        # The other expressions run outside the generator that computes the stage: they may only read stage columns.
        parts = ("event_text", "deleted", "update_before", "update_after", "event_problem")
        names = {part: f"{stage_prefix}_{part}" for part in parts}
        text = payload.getField("text")
        stage = {
            names["event_text"]: text,
            names["deleted"]: payload.getField("deleted"),
            names["update_before"]: payload.getField("update_before"),
            names["update_after"]: payload.getField("update_after"),
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
        update_before = F.coalesce(F.col(names["update_before"]), F.lit(False))
        update_after = F.coalesce(F.col(names["update_after"]), F.lit(False))
        event_problem = F.col(names["event_problem"])
        if fmt.ignore_parse_errors:
            malformed = ~absent & (event_problem.isNotNull() | row.malformed)
            no_problem = F.lit(None).cast(StringType())
            return Decoded(
                stage, row.values, absent, malformed, no_problem, deleted, metadata, update_before, update_after
            )
        problem = F.when(~absent, F.coalesce(event_problem, row.problem))
        return Decoded(stage, row.values, absent, F.lit(False), problem, deleted, metadata, update_before, update_after)

    def check(self, fmt: PayloadFormat, table: Table, format_key: str) -> None:
        refuse_changelog_key(fmt, table, format_key)
