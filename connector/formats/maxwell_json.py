"""The `maxwell-json` format (Flink's MaxwellJsonDeserializationSchema): Maxwell binlog messages as a changelog.

A message `{"database": ..., "table": ..., "type": "insert|update|delete", "data": {...}, "old": {...}}` holds one
row: `data`, inserted, updated (its old row, `data` with the changed fields of `old` in place, then `data`) or
deleted (see `connector.formats.changelog_json`).
Writing (`encode_change`) is Flink's: `insert` for an insert or new row, `delete` for a delete
or old row.
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
    old_image,
    read_metadata,
    row_text,
    unknown,
)
from connector.formats.payload import PayloadFormat
from connector.options.factory import Format

if TYPE_CHECKING:
    from pyspark.sql import Column

_TYPES = ("insert", "update", "delete")

# Flink's MaxwellJsonDecodingFormat.ReadableMetadata, read as 'value.<key>'.
METADATA = {
    "database": "STRING",
    "table": "STRING",
    "primary-key-columns": "ARRAY<STRING>",
    "ingestion-timestamp": "TIMESTAMP_LTZ(3)",
}


class MaxwellJsonCodec(ChangelogJsonCodec):
    label = "Maxwell JSON"

    def records(self, payload: Column, fmt: PayloadFormat) -> Column:
        from pyspark.sql import functions as F
        from pyspark.sql.types import ArrayType, LongType, StringType, StructField, StructType

        message_fields = [StructField(name, StringType()) for name in ("data", "old", "type")]
        message_metadata = [
            (StructField("database", StringType()), ("database",)),
            (StructField("table", StringType()), ("table",)),
            (StructField("primary_key_columns", ArrayType(StringType())), ("primary-key-columns",)),
            (StructField("ts", LongType()), ("ingestion-timestamp",)),
        ]
        text = payload.cast(StringType())
        parsed = F.from_json(text, StructType([*message_fields, *metadata_fields(fmt, message_metadata)]), PARSE)
        kind, data = parsed.getField("type"), parsed.getField("data")
        old_missing = (kind == F.lit("update")) & parsed.getField("old").isNull()
        problem = F.coalesce(
            message_problem(text),
            F.when(kind.isNull(), because('no "type" field', text))
            .when(~kind.isin(*_TYPES), unknown("type", kind, text))
            .when(data.isNull(), because('the "data" field is null', text))
            .when(old_missing, because('the "old" field of an update is null', text)),
        )
        metadata = read_metadata(fmt, {
            "database": lambda: parsed.getField("database"),
            "table": lambda: parsed.getField("table"),
            "primary-key-columns": lambda: parsed.getField("primary_key_columns"),
            "ingestion-timestamp": lambda: F.timestamp_seconds(parsed.getField("ts")),  # Maxwell's ts: seconds
        })  # fmt: skip
        update = F.array(
            event(text, F.lit(False), problem, old_image(data, parsed.getField("old")), metadata, update_before=True),
            event(text, F.lit(False), problem, data, metadata, update_after=True),
        )
        single = F.array(event(text, kind == F.lit("delete"), problem, data, metadata))
        return F.when((kind == F.lit("update")) & problem.isNull(), update).otherwise(single)

    def encode_change(self, fmt: PayloadFormat, row: Mapping[str, Column], retracts: Column) -> Column:
        """Flink's MaxwellJsonSerializationSchema: `{"data":row,"type":"insert"}` for an INSERT or UPDATE_AFTER,
        `"delete"` for a DELETE or UPDATE_BEFORE."""
        from pyspark.sql import functions as F

        kind = F.when(retracts, F.lit("delete")).otherwise(F.lit("insert"))
        return message('{"data":', row_text(fmt, row), ',"type":"', kind, '"}')


MAXWELL_JSON = Format(
    "maxwell-json",
    "Maxwell binlog messages in JSON, read as a changelog (inserts, updates with their old row, deletes).",
    options=JSON_OPTIONS,
    codec=MaxwellJsonCodec(),
    changelog=True,
    carrier="messages",
    readable_metadata=METADATA,
)
FORMATS = (MAXWELL_JSON,)
