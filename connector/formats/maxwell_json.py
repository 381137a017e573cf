"""The `maxwell-json` format (Flink's MaxwellJsonDeserializationSchema): Maxwell binlog messages as a changelog.

A message `{"database": ..., "table": ..., "type": "insert|update|delete", "data": {...}, "old": {...}}` holds one
row: `data`, inserted, updated (its new values) or deleted (see `connector.formats.changelog_json`).
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from connector.formats.changelog_json import (
    JSON_OPTIONS,
    PARSE,
    ChangelogJsonCodec,
    because,
    event,
    message_problem,
    unknown,
)
from connector.formats.payload import PayloadFormat
from connector.options.factory import Format

_TYPES = ("insert", "update", "delete")



_MESSAGE = StructType([StructField(name, StringType()) for name in ("data", "old", "type")])


class MaxwellJsonCodec(ChangelogJsonCodec):
    label = "Maxwell JSON"

    def records(self, payload: Column, fmt: PayloadFormat) -> Column:
        text = payload.cast(StringType())
        parsed = F.from_json(text, _MESSAGE, PARSE)
        kind, data = parsed.getField("type"), parsed.getField("data")
        old_missing = (kind == F.lit("update")) & parsed.getField("old").isNull()
        problem = F.coalesce(
            message_problem(text),
            F.when(kind.isNull(), because('no "type" field', text))
            .when(~kind.isin(*_TYPES), unknown("type", kind, text))
            .when(data.isNull(), because('the "data" field is null', text))
            .when(old_missing, because('the "old" field of an update is null', text)),
        )
        return F.array(event(text, kind == F.lit("delete"), problem, data))


MAXWELL_JSON = Format(
    "maxwell-json",
    "Maxwell binlog messages in JSON, read as a changelog (upserts and deletes of the row's key).",
    options=JSON_OPTIONS,
    codec=MaxwellJsonCodec(),
    changelog=True,
    connectors=("kafka",),
)
FORMATS = (MAXWELL_JSON,)
