"""The `debezium-json` format (Flink's DebeziumJsonDeserializationSchema): Debezium change events as a changelog.

A change event `{"before": {...}, "after": {...}, "op": "c|r|u|d", ...}` (under `"payload"` with
'debezium-json.schema-include') becomes one row (see `connector.formats.changelog_json`): the `after` image for c
(create) and r (snapshot read), the `before` image for d, marked as a DELETE of its key; u (update) becomes
its `before` image as UPDATE_BEFORE, then its `after` image.

Writing (`encode_change`) is Flink's: an INSERT or UPDATE_AFTER as op c with `after`, a DELETE or UPDATE_BEFORE
as op d with `before`. A query writes it when it carries its old rows: a projection of a changelog, or a query of
inserts; an aggregate's updates (Spark's update mode) carry none and are refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from connector.formats.changelog_json import (
    JSON_OPTIONS,
    PARSE,
    ChangelogJsonCodec,
    because,
    event,
    message,
    message_problem,
    metadata_fields,
    read_metadata,
    row_text,
    unknown,
)
from connector.formats.payload import PayloadFormat
from connector.options.declarations import ConfigOption
from connector.options.factory import Format
from connector.options.types import BOOLEAN

if TYPE_CHECKING:
    from pyspark.sql import Column

REPLICA_IDENTITY = (
    'the "before" field of {kind} message is null; if you are using the Debezium Postgres connector, check that the '
    "Postgres table has REPLICA IDENTITY FULL"
)
_OPS = ("c", "r", "u", "d")


class DebeziumJsonOptions:
    """Options of the `debezium-json` format, written 'debezium-json.<key>' (or 'value.debezium-json.<key>')."""

    SCHEMA_INCLUDE = ConfigOption(
        "schema-include",
        BOOLEAN,
        "The messages carry their schema (Kafka Connect's 'value.converter.schemas.enable'): the change event is "
        "read from their 'payload' field.",
        default=False,
    )


_SOURCE_KEYS = ("source.timestamp", "source.database", "source.schema", "source.table", "source.properties")
# Flink's DebeziumJsonDecodingFormat.ReadableMetadata, read as 'value.<key>'.
METADATA = {
    "schema": "STRING",
    "ingestion-timestamp": "TIMESTAMP_LTZ(3)",
    "source.timestamp": "TIMESTAMP_LTZ(3)",
    "source.database": "STRING",
    "source.schema": "STRING",
    "source.table": "STRING",
    "source.properties": "MAP<STRING, STRING>",
}


def _millis(value: Column) -> Column:
    from pyspark.sql import functions as F
    from pyspark.sql.types import LongType

    return F.timestamp_millis(value.cast(LongType()))


class DebeziumJsonCodec(ChangelogJsonCodec):
    label = "Debezium JSON"

    def records(self, payload: Column, fmt: PayloadFormat) -> Column:
        from pyspark.sql import functions as F
        from pyspark.sql.types import LongType, MapType, StringType, StructField, StructType

        text = payload.cast(StringType())
        included = bool(fmt.options.get("schema-include"))
        event_fields = [StructField(name, StringType()) for name in ("before", "after", "op")]
        event_metadata = [
            (StructField("ts_ms", LongType()), ("ingestion-timestamp",)),
            (StructField("source", MapType(StringType(), StringType())), _SOURCE_KEYS),
        ]
        event_type = StructType([*event_fields, *metadata_fields(fmt, event_metadata)])
        schema_field = StructField("schema", StringType())
        schema = (
            StructType([StructField("payload", event_type), *metadata_fields(fmt, [(schema_field, ("schema",))])])
            if included
            else event_type
        )
        parsed = F.from_json(text, schema, PARSE)
        found = parsed.getField("payload") if included else parsed
        op, before, after = found.getField("op"), found.getField("before"), found.getField("after")
        deleted = op == F.lit("d")
        problem = F.coalesce(
            message_problem(text),
            F.when(found.isNull() | op.isNull(), because('no "op" field', text))
            .when(~op.isin(*_OPS), unknown("op", op, text))
            .when((op == F.lit("u")) & before.isNull(), F.lit(REPLICA_IDENTITY.format(kind="UPDATE")))
            .when(deleted & before.isNull(), F.lit(REPLICA_IDENTITY.format(kind="DELETE")))
            .when(~deleted & after.isNull(), because('the "after" field is null', text)),
        )
        source = found.getField("source")
        metadata = read_metadata(fmt, {
            "schema": lambda: parsed.getField("schema") if included else F.lit(None).cast(StringType()),
            "ingestion-timestamp": lambda: _millis(found.getField("ts_ms")),
            "source.timestamp": lambda: _millis(source.getItem("ts_ms")),
            "source.database": lambda: source.getItem("db"),
            "source.schema": lambda: source.getItem("schema"),
            "source.table": lambda: source.getItem("table"),
            "source.properties": lambda: source,
        })  # fmt: skip
        update = F.array(
            event(text, F.lit(False), problem, before, metadata, update_before=True),
            event(text, F.lit(False), problem, after, metadata, update_after=True),
        )
        single = F.array(event(text, deleted, problem, F.when(deleted, before).otherwise(after), metadata))
        return F.when((op == F.lit("u")) & problem.isNull(), update).otherwise(single)


    def encode_change(self, fmt: PayloadFormat, row: Mapping[str, Column], retracts: Column) -> Column:
        """Flink's DebeziumJsonSerializationSchema: INSERT and UPDATE_AFTER as `{"before":null,"after":row,
        "op":"c"}`, DELETE and UPDATE_BEFORE as `{"before":row,"after":null,"op":"d"}`, the row as `json` writes
        it."""
        from pyspark.sql import functions as F

        image = row_text(fmt, row)
        before = F.when(retracts, image).otherwise(F.lit("null"))
        after = F.when(retracts, F.lit("null")).otherwise(image)
        op = F.when(retracts, F.lit("d")).otherwise(F.lit("c"))
        return message('{"before":', before, ',"after":', after, ',"op":"', op, '"}')


DEBEZIUM_JSON = Format(
    "debezium-json",
    "Debezium CDC change events in JSON, read as a changelog (inserts, updates with their old row, deletes).",
    options=(*(v for v in vars(DebeziumJsonOptions).values() if isinstance(v, ConfigOption)), *JSON_OPTIONS),
    codec=DebeziumJsonCodec(),
    changelog=True,
    carrier="messages",
    readable_metadata=METADATA,
)
FORMATS = (DEBEZIUM_JSON,)
