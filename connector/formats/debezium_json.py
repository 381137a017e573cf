"""The `debezium-json` format (Flink's DebeziumJsonDeserializationSchema): Debezium change events as a changelog.

A change event `{"before": {...}, "after": {...}, "op": "c|r|u|d", ...}` (under `"payload"` with
'debezium-json.schema-include') becomes one row: the `after` image for c (create), r (snapshot read) and u
(update), the `before` image for d, marked as a DELETE of its key. Flink also emits the `before` image of an
update as UPDATE_BEFORE; the sinks a changelog may be written to here (upsert-kafka, jdbc with a PRIMARY KEY,
print) are keyed upserts, for which Flink's planner drops UPDATE_BEFORE too (DropUpdateBefore), so the tables
they end with are the same. The images are read with the `json` format's rules, as Flink reads them with its
JSON row converter. A NULL or empty Kafka value is a tombstone and yields no row.

Writing is refused: Flink writes an update as a delete of the old row and an insert of the new one, and the
updating queries here carry no before-image to write.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from connector.formats.json import JsonOptions, json_decode
from connector.formats.payload import (
    CORRUPT,
    INVALID_UTF8,
    Codec,
    Decoded,
    PayloadFormat,
    fail,
    invalid_utf8,
    snippet,
)
from connector.options.declarations import ConfigOption
from connector.options.factory import Format
from connector.options.types import BOOLEAN
from connector.sql.catalog import Table

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
    IGNORE_PARSE_ERRORS = JsonOptions.IGNORE_PARSE_ERRORS
    TIMESTAMP_FORMAT_STANDARD = JsonOptions.TIMESTAMP_FORMAT_STANDARD
    MAP_NULL_KEY_MODE = JsonOptions.MAP_NULL_KEY_MODE
    MAP_NULL_KEY_LITERAL = JsonOptions.MAP_NULL_KEY_LITERAL
    ENCODE_DECIMAL_AS_PLAIN_NUMBER = JsonOptions.ENCODE_DECIMAL_AS_PLAIN_NUMBER


_EVENT = StructType([StructField(name, StringType()) for name in ("before", "after", "op")])
_PARSE = {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": CORRUPT}


class DebeziumJsonCodec(Codec):
    """Change events parsed once per message (`records`), their row image read by the JSON rules (`decode`)."""

    label = "Debezium JSON"

    def records(self, payload: Column, fmt: PayloadFormat) -> Column:
        """One element per message: its text and its event, whose images stay JSON text for `decode`."""
        text = payload.cast(StringType())
        envelope = (
            StructType([StructField("payload", _EVENT), StructField(CORRUPT, StringType())])
            if fmt.options.get("schema-include")
            else StructType([*_EVENT.fields, StructField(CORRUPT, StringType())])
        )
        return F.array(F.struct(text.alias("text"), F.from_json(text, envelope, _PARSE).alias("envelope")))

    def decode(self, payload: Column, fmt: PayloadFormat, stage_prefix: str) -> Decoded:
        envelope = payload.getField("envelope")
        event = envelope.getField("payload") if fmt.options.get("schema-include") else envelope
        image = F.when(event.getField("op") == F.lit("d"), event.getField("before")).otherwise(event.getField("after"))
        row = json_decode(image, fmt, stage_prefix)
        # The other expressions run outside the generator that computes the stage: they may only read stage columns.
        names = {part: f"{stage_prefix}_{part}" for part in ("event_text", "op", "no_event", "no_before", "no_after")}
        stage = {
            names["event_text"]: payload.getField("text"),
            names["op"]: event.getField("op"),
            names["no_event"]: event.isNull(),
            names["no_before"]: event.getField("before").isNull(),
            names["no_after"]: event.getField("after").isNull(),
            **row.stage,
        }
        text, op = F.col(names["event_text"]), F.col(names["op"])
        before_null, after_null = F.col(names["no_before"]), F.col(names["no_after"])
        deleted = op == F.lit("d")

        absent = text.isNull() | (text == F.lit(""))  # a tombstone: Flink skips it
        not_object = F.coalesce(F.json_object_keys(text).isNull(), F.lit(True))
        event_problem = (
            F.when(absent, F.lit(None).cast(StringType()))
            .when(invalid_utf8(text), F.concat(F.lit(f"{INVALID_UTF8}: "), snippet(text)))
            .when(not_object, F.concat(F.lit("not a JSON object: "), snippet(text)))
            .when(F.col(names["no_event"]) | op.isNull(), F.concat(F.lit('no "op" field: '), snippet(text)))
            .when(~op.isin(*_OPS), F.concat(F.lit('unknown "op" value "'), op, F.lit('": '), snippet(text)))
            .when((op == F.lit("u")) & before_null, F.lit(REPLICA_IDENTITY.format(kind="UPDATE")))
            .when(deleted & before_null, F.lit(REPLICA_IDENTITY.format(kind="DELETE")))
            .when(~deleted & after_null, F.concat(F.lit('the "after" field is null: '), snippet(text)))
        )
        if fmt.ignore_parse_errors:
            malformed = ~absent & (event_problem.isNotNull() | row.malformed)
            return Decoded(stage, row.values, absent, malformed, F.lit(None).cast(StringType()), deleted)
        problem = F.when(~absent, F.coalesce(event_problem, row.problem))
        return Decoded(stage, row.values, absent, F.lit(False), problem, deleted)

    def check(self, fmt: PayloadFormat, table: Table, format_key: str) -> None:
        if fmt.role == "key":
            fail(
                table,
                format_key,
                "A key format should only deal with INSERT-only records, but 'debezium-json' is a changelog "
                "format; use it as the value format.",
            )


DEBEZIUM_JSON = Format(
    "debezium-json",
    "Debezium CDC change events in JSON, read as a changelog (upserts and deletes of the row's key).",
    options=tuple(v for v in vars(DebeziumJsonOptions).values() if isinstance(v, ConfigOption)),
    codec=DebeziumJsonCodec(),
    changelog=True,
    connectors=("kafka",),
)
FORMATS = (DEBEZIUM_JSON,)
