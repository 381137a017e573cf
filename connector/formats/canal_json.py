"""The `canal-json` format (Flink's CanalJsonDeserializationSchema): Canal binlog messages as a changelog.

A message `{"data": [{...}, ...], "old": [...], "type": "INSERT|UPDATE|DELETE", "database": ..., "table": ...}`
holds one row per element of `data`: inserted, updated (its old row, `data` with the changed fields of `old` in
place, then its new one) or deleted (see `connector.formats.changelog_json`). DDL messages (`"type": "CREATE"`)
and messages of other databases or tables than 'canal-json.database.include' / 'canal-json.table.include' (Java
regular expressions, whole names) are skipped, as in Flink. Writing (`encode_change`) is Flink's: one row per
message, INSERT for an insert or new row, DELETE for a delete or old row.
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
    is_tombstone,
    message,
    message_problem,
    metadata_fields,
    old_image,
    read_metadata,
    row_text,
    unknown,
)
from connector.formats.payload import PayloadFormat
from connector.options.declarations import ConfigOption
from connector.options.factory import Format
from connector.options.types import STRING

if TYPE_CHECKING:
    from pyspark.sql import Column

_TYPES = ("INSERT", "UPDATE", "DELETE")


class CanalJsonOptions:
    """Options of the `canal-json` format, written 'canal-json.<key>' (or 'value.canal-json.<key>')."""

    DATABASE_INCLUDE = ConfigOption(
        "database.include",
        STRING,
        "Only read messages whose 'database' matches this Java regular expression (the whole name).",
    )
    TABLE_INCLUDE = ConfigOption(
        "table.include",
        STRING,
        "Only read messages whose 'table' matches this Java regular expression (the whole name).",
    )


# Flink's CanalJsonDecodingFormat.ReadableMetadata, read as 'value.<key>'.
METADATA = {
    "database": "STRING",
    "table": "STRING",
    "sql-type": "MAP<STRING, INT>",
    "pk-names": "ARRAY<STRING>",
    "ingestion-timestamp": "TIMESTAMP_LTZ(3)",
    "event-timestamp": "TIMESTAMP_LTZ(3)",
}


def _included(value: Column, pattern: object) -> Column:
    from pyspark.sql import functions as F

    if pattern is None:
        return F.lit(True)
    return F.coalesce(value.rlike(f"^(?:{pattern})$"), F.lit(False))


class CanalJsonCodec(ChangelogJsonCodec):
    label = "Canal JSON"

    def records(self, payload: Column, fmt: PayloadFormat) -> Column:
        from pyspark.sql import functions as F
        from pyspark.sql.types import ArrayType, IntegerType, LongType, MapType, StringType, StructField, StructType

        message_fields = [
            StructField("data", ArrayType(StringType())),
            StructField("old", ArrayType(StringType())),
            StructField("type", StringType()),
            StructField("database", StringType()),  # read by the include filters and the metadata
            StructField("table", StringType()),
        ]
        message_metadata = [
            (StructField("sqlType", MapType(StringType(), IntegerType())), ("sql-type",)),
            (StructField("pkNames", ArrayType(StringType())), ("pk-names",)),
            (StructField("ts", LongType()), ("ingestion-timestamp",)),
            (StructField("es", LongType()), ("event-timestamp",)),
        ]
        text = payload.cast(StringType())
        parsed = F.from_json(text, StructType([*message_fields, *metadata_fields(fmt, message_metadata)]), PARSE)
        kind, data = parsed.getField("type"), parsed.getField("data")
        old_missing = (kind == F.lit("UPDATE")) & parsed.getField("old").isNull()
        skipped = F.coalesce(kind == F.lit("CREATE"), F.lit(False)) | ~(
            _included(parsed.getField("database"), fmt.options.get("database.include"))
            & _included(parsed.getField("table"), fmt.options.get("table.include"))
        )
        problem = F.coalesce(
            message_problem(text),
            F.when(kind.isNull(), because('no "type" field', text))
            .when(~kind.isin(*_TYPES, "CREATE"), unknown("type", kind, text))
            .when(kind.isin(*_TYPES) & data.isNull(), because('the "data" field is null', text))
            .when(old_missing, because('the "old" field of an UPDATE is null', text)),
        )
        metadata = read_metadata(fmt, {
            "database": lambda: parsed.getField("database"),
            "table": lambda: parsed.getField("table"),
            "sql-type": lambda: parsed.getField("sqlType"),
            "pk-names": lambda: parsed.getField("pkNames"),
            "ingestion-timestamp": lambda: F.timestamp_millis(parsed.getField("ts")),
            "event-timestamp": lambda: F.timestamp_millis(parsed.getField("es")),
        })  # fmt: skip
        failed = F.array(event(text, F.lit(False), problem, F.lit(None), metadata))
        deletes = kind == F.lit("DELETE")
        rows = F.transform(data, lambda row: event(text, deletes, F.lit(None), row, metadata))
        olds = parsed.getField("old")
        changed = F.array_distinct(F.flatten(F.transform(olds, lambda o: F.coalesce(F.json_object_keys(o), F.array()))))
        updates = F.flatten(
            F.transform(
                data,
                lambda row, i: F.array(
                    event(text, F.lit(False), F.lit(None), old_image(row, olds[i], changed), metadata, True),
                    event(text, F.lit(False), F.lit(None), row, metadata, update_after=True),
                ),
            )
        )
        none = F.filter(failed, lambda _: F.lit(False))
        return (
            F.when(is_tombstone(text), failed)  # `decode` reads it as absent
            .when(problem.isNotNull() & ~(skipped & message_problem(text).isNull()), failed)
            .when(skipped, none)
            .when(kind == F.lit("UPDATE"), updates)
            .otherwise(rows)
        )

    def encode_change(self, fmt: PayloadFormat, row: Mapping[str, Column], retracts: Column) -> Column:
        """Flink's CanalJsonSerializationSchema: `{"data":[row],"type":"INSERT"}` for an INSERT or UPDATE_AFTER,
        `"DELETE"` for a DELETE or UPDATE_BEFORE."""
        from pyspark.sql import functions as F

        kind = F.when(retracts, F.lit("DELETE")).otherwise(F.lit("INSERT"))
        return message('{"data":[', row_text(fmt, row), '],"type":"', kind, '"}')


CANAL_JSON = Format(
    "canal-json",
    "Canal binlog messages in JSON, read as a changelog (inserts, updates with their old row, deletes).",
    options=(*(v for v in vars(CanalJsonOptions).values() if isinstance(v, ConfigOption)), *JSON_OPTIONS),
    codec=CanalJsonCodec(),
    changelog=True,
    carrier="messages",
    readable_metadata=METADATA,
)
FORMATS = (CANAL_JSON,)
