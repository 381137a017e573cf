"""The `debezium-avro-confluent` format (Flink's DebeziumAvroDeserializationSchema): Debezium change events in
Avro, in the Confluent wire format with a schema registry, as a changelog.

A record is decoded with its writer schema (a version of the table's subject, as `avro-confluent` finds it) into
Flink's reader schema, `ROW<before ROW<...>, after ROW<...>, op STRING>` of the table's columns: Avro schema
resolution matches Debezium's `Value` records to them by structure and skips `source`, `ts_ms`, `transaction`.
Then, as `debezium-json`: c (create) and r (snapshot read) insert `after`, u retracts `before` (UPDATE_BEFORE) and
adds `after`, d deletes `before`; a NULL or empty value (Debezium's tombstone) is no row. An update or delete
without `before` fails the query (Postgres needs REPLICA IDENTITY FULL), as do an unknown op and records that do
not decode; Flink's format has no 'ignore-parse-errors'.

Writing (`encode_change`) is Flink's: the envelope of each change, `after` with op c for an insert or new row, `before`
with op d for a delete or old row, its schema registered under the subject. Flink's options for the registry are
declared ('schema' and 'auto.register.schemas' are not: the envelope is derived from the columns and registered).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from connector.catalog.model import Table
from connector.formats.avro import AvroCodec, avro_fields, check_columns
from connector.formats.avro_confluent import (
    AvroConfluentOptions,
    WireFormat,
    registry_failure,
    registry_rules,
    schema_id,
    subject_of,
)
from connector.formats.avro_schema import RECORD_NAME, decoded_value, encoded_value, table_schema
from connector.formats.debezium_json import REPLICA_IDENTITY
from connector.formats.payload import Decoded, PayloadFormat, refuse_changelog_key
from connector.formats.schema_registry import RegistryRequestError, registered_id
from connector.options.declarations import ConfigOption
from connector.options.factory import Format, FormatCheck

if TYPE_CHECKING:
    from pyspark.sql import Column

_OPS = ("c", "r", "u", "d")
# avro-confluent's options for reading: the registry and the subject ('schema' and 'auto.register.schemas' write).
_READING = tuple(
    option
    for option in vars(AvroConfluentOptions).values()
    if isinstance(option, ConfigOption)
    and (option.key in ("url", "subject") or option.key.startswith(("basic-auth.", "bearer-auth.", "ssl.")))
)


def envelope_schema(fmt: PayloadFormat, for_spark: bool = True) -> dict[str, Any]:
    """Flink's schema for Debezium records of the table's columns (DebeziumAvro(De)SerializationSchema's
    `createDebeziumAvroRowType`, converted as Flink converts a row type); `for_spark`: the twin Spark reads."""
    row = table_schema(avro_fields(fmt.fields), for_spark=for_spark)

    def image(name: str) -> dict[str, Any]:
        return {"name": name, "type": ["null", {**row, "name": f"{RECORD_NAME}_{name}"}], "default": None}

    op = {"name": "op", "type": ["null", "string"], "default": None}
    return {"type": "record", "name": RECORD_NAME, "fields": [image("before"), image("after"), op]}


def _event(
    deleted: Column, problem: Column, image: Column, update_before: bool = False, update_after: bool = False
) -> Column:
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType

    return F.struct(
        (deleted | F.lit(update_before)).alias("deleted"),
        F.lit(update_before).alias("update_before"),
        F.lit(update_after).alias("update_after"),
        problem.cast(StringType()).alias("problem"),
        image.alias("image"),
    )


class DebeziumAvroConfluentCodec(AvroCodec):
    label = "Debezium Avro (Confluent)"

    def records(self, payload: Column, fmt: PayloadFormat) -> Column:
        from pyspark.sql import functions as F

        wire = WireFormat(fmt)
        record = wire.record(payload, envelope_schema(fmt))
        op, before, after = record.getField("op"), record.getField("before"), record.getField("after")
        deleted = op == F.lit("d")
        problem = F.coalesce(
            wire.problem(payload, schema_id(payload), record),
            F.when(op.isNull(), F.lit('no "op" field'))
            .when(~op.isin(*_OPS), F.concat(F.lit('unknown "op" value "'), op, F.lit('"')))
            .when((op == F.lit("u")) & before.isNull(), F.lit(REPLICA_IDENTITY.format(kind="UPDATE")))
            .when(deleted & before.isNull(), F.lit(REPLICA_IDENTITY.format(kind="DELETE")))
            .when(~deleted & after.isNull(), F.lit('the "after" field is null')),
        )
        tombstone = payload.isNull() | (F.length(payload) == F.lit(0))
        old = _event(F.lit(False), problem, before, update_before=True)
        new = _event(F.lit(False), problem, after, update_after=True)
        update = F.array(old, new)
        single = F.array(_event(deleted, problem, F.when(deleted, before).otherwise(after)))
        return (
            F.when(tombstone, F.array(F.when(F.lit(False), single[0])))  # one NULL event: no row, no error
            .when((op == F.lit("u")) & problem.isNull(), update)
            .otherwise(single)
        )

    def decode(self, payload: Column, fmt: PayloadFormat, stage_prefix: str) -> Decoded:
        from pyspark.sql import functions as F

        name = f"{stage_prefix}_event"
        stage = {name: payload}  # the event `records` made; the expressions below read it by name
        event = F.col(name)
        image = event.getField("image")
        values = {f.column: decoded_value(image.getField(f.name), f.flink_type) for f in fmt.fields if f.flink_type}
        absent = event.isNull()
        deleted = F.coalesce(event.getField("deleted"), F.lit(False))
        update_before = F.coalesce(event.getField("update_before"), F.lit(False))
        update_after = F.coalesce(event.getField("update_after"), F.lit(False))
        problem = event.getField("problem")
        return Decoded(stage, values, absent, F.lit(False), problem, deleted, {}, update_before, update_after)

    def encode_change(self, fmt: PayloadFormat, row: Mapping[str, Column], retracts: Column) -> Column:
        """Flink's DebeziumAvroSerializationSchema: an INSERT or UPDATE_AFTER as `after` with op c, a DELETE or
        UPDATE_BEFORE as `before` with op d; the envelope's schema registered under the subject when the query
        starts ('<topic>-value' by default), its id in every record."""
        from pyspark.sql import functions as F
        from pyspark.sql.avro.functions import to_avro

        subject = subject_of(fmt)
        try:
            schema_id = registered_id(fmt.options, subject, envelope_schema(fmt, for_spark=False), True)
        except RegistryRequestError as err:
            raise registry_failure(fmt, err) from None
        image = F.struct(
            *[encoded_value(row[f.column], f.flink_type).alias(f.name) for f in fmt.fields if f.flink_type]
        )
        envelope = F.struct(
            F.when(retracts, image).alias("before"),
            F.when(~retracts, image).alias("after"),
            F.when(retracts, F.lit("d")).otherwise(F.lit("c")).alias("op"),
        )
        body = to_avro(envelope, json.dumps(envelope_schema(fmt)))
        return F.concat(F.lit(b"\x00" + schema_id.to_bytes(4, "big")), body)

    def check(self, fmt: PayloadFormat, table: Table, format_key: str) -> None:
        super().check(fmt, table, format_key)
        refuse_changelog_key(fmt, table, format_key)


def _rules(check: FormatCheck) -> None:
    check_columns(check)
    registry_rules(check)


DEBEZIUM_AVRO_CONFLUENT = Format(
    "debezium-avro-confluent",
    "Debezium CDC change events in Avro, in the Confluent wire format with a schema registry, read as a changelog "
    "(inserts, updates with their old row, deletes).",
    options=_READING,
    codec=DebeziumAvroConfluentCodec(),
    changelog=True,
    carrier="messages",
    passthrough_prefixes=("properties.",),
    rules=(_rules,),
)
FORMATS = (DEBEZIUM_AVRO_CONFLUENT,)
