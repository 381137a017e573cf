"""The `avro-confluent` format (Flink's RegistryAvroFormatFactory): Avro binary records in the Confluent wire format
(a 0 magic byte, the writer schema's 4-byte id, the Avro body) with a Confluent-compatible schema registry.

Reading: each record is decoded with the schema its id names (the writer's) into the table's schema (the reader's,
derived from the columns as `avro` derives it), with Avro's schema resolution: added fields with defaults, removed
fields, widened types. The writer schemas are the versions of the table's subject ('avro-confluent.subject', by
default '<topic>-value' / '<topic>-key') when the query starts; Spark's Avro functions then decode in bulk, on the
JVM, with no registry call per record. A record whose id is none of them (a version registered later, or another
subject) fails the query naming topic, partition, offset and the id: restarting the query reads the new versions.
Flink looks ids up on the fly; here the subject is what says where to look.

Writing: the table's schema (or 'avro-confluent.schema', which must have the table's shape) is registered under
the subject when the query starts ('auto.register.schemas', default true; else it must be registered already),
and every record carries its id.

As in Flink, a NULL message yields no row, and a record that does not decode fails the query (the format has no
'ignore-parse-errors'). The registry is reached over HTTPS with the 'ssl.*' options' Java stores (`schema_registry`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from connector.diagnostics import Diagnostic, PipelineError
from connector.formats.avro import AvroCodec, avro_fields, check_columns
from connector.formats.avro_schema import AvroSchemaError, decoded_value, encoded_value, table_schema
from connector.formats.payload import Decoded, PayloadFormat
from connector.formats.schema_registry import RegistryRequestError, registered_id, shown_url, subject_schemas
from connector.options.declarations import ConfigOption
from connector.options.factory import Format, FormatCheck
from connector.options.types import BOOLEAN, STRING

if TYPE_CHECKING:
    from pyspark.sql import Column

_DECODED = "__kafka_sql_decoded"  # as in `avro`: a reader-only field, true in every record that decodes
_HEADER_BYTES = 5


class AvroConfluentOptions:
    """Options of the `avro-confluent` format, written 'avro-confluent.<key>'."""

    URL = ConfigOption(
        "url",
        STRING,
        "The URL of the Confluent Schema Registry to fetch/register schemas.",
        required=True,
        fallback_keys=("schema-registry.url",),
    )
    SUBJECT = ConfigOption(
        "subject",
        STRING,
        "The subject the table's schema is registered under (writing) and whose versions records may be written "
        "with (reading). Default for 'kafka' and 'upsert-kafka': '<topic>-value' or '<topic>-key'.",
        fallback_keys=("schema-registry.subject",),
    )
    SCHEMA = ConfigOption(
        "schema",
        STRING,
        "The Avro schema to register instead of the one derived from the table; it must have the table's shape.",
        fallback_keys=("schema-registry.schema",),
    )
    AUTO_REGISTER_SCHEMAS = ConfigOption(
        "auto.register.schemas",
        BOOLEAN,
        "Register the schema when writing if the subject does not hold it; when false it must be registered.",
        default=True,
    )
    BASIC_AUTH_CREDENTIALS_SOURCE = ConfigOption(
        "basic-auth.credentials-source", STRING, "Basic auth credentials source for Schema Registry (USER_INFO)."
    )
    BASIC_AUTH_USER_INFO = ConfigOption(
        "basic-auth.user-info", STRING, "Basic auth user info for schema registry ('user:password')."
    )
    BEARER_AUTH_CREDENTIALS_SOURCE = ConfigOption(
        "bearer-auth.credentials-source", STRING, "Bearer auth credentials source for Schema Registry (STATIC_TOKEN)."
    )
    BEARER_AUTH_TOKEN = ConfigOption("bearer-auth.token", STRING, "Bearer auth token for Schema Registry.")
    SSL_KEYSTORE_LOCATION = ConfigOption("ssl.keystore.location", STRING, "Location / File of SSL keystore.")
    SSL_KEYSTORE_PASSWORD = ConfigOption("ssl.keystore.password", STRING, "Password for SSL keystore.")
    SSL_TRUSTSTORE_LOCATION = ConfigOption("ssl.truststore.location", STRING, "Location / File of SSL truststore.")
    SSL_TRUSTSTORE_PASSWORD = ConfigOption("ssl.truststore.password", STRING, "Password for SSL truststore.")


def _shape(schema: Any) -> Any:
    """What must agree for records encoded with one schema to be read with the other as the same values: types
    and field order, not names, docs or defaults (timestamp-millis and local-timestamp-millis alike)."""
    if isinstance(schema, list):
        return [_shape(branch) for branch in schema]
    if isinstance(schema, str):
        return schema
    kind = schema.get("type")
    if kind == "record":
        return ("record", [(f["name"], _shape(f["type"])) for f in schema.get("fields", [])])
    if kind == "array":
        return ("array", _shape(schema["items"]))
    if kind == "map":
        return ("map", _shape(schema["values"]))
    if isinstance(kind, dict | list):
        return _shape(kind)
    logical = str(schema.get("logicalType", "")).replace("local-", "")
    return (kind, logical, schema.get("precision"), schema.get("scale"))


def _explicit_schema_rule(check: FormatCheck) -> None:
    text = check.options.get(AvroConfluentOptions.SCHEMA)
    if text is None:
        return
    where = AvroConfluentOptions.SCHEMA.key
    try:
        given = json.loads(text)
    except json.JSONDecodeError as err:
        check.report("invalid-option-value", f"'{check.key(AvroConfluentOptions.SCHEMA)}' is not JSON: {err}.", where)
        return
    try:
        derived = table_schema([(c.name, c.data_type, c.nullable) for c in check.columns if c.data_type])
    except AvroSchemaError:
        return  # reported by the column rule
    if _shape(given) != _shape(derived):
        check.report(
            "invalid-option-value",
            f"'{check.key(AvroConfluentOptions.SCHEMA)}' does not match the table's columns; the table's schema is "
            f"{json.dumps(derived)}",
            where,
        )


def _rules(check: FormatCheck) -> None:
    check_columns(check)
    registry_rules(check)
    _explicit_schema_rule(check)


def registry_rules(check: FormatCheck) -> None:
    """What the registry options need: a subject to read and register under."""
    if check.options.get(AvroConfluentOptions.SUBJECT) is None:
        named = check.factory.topic_option
        topic = check.table.options.get(named) if named else None
        if not topic or ";" in topic:
            check.report(
                "missing-option",
                f"'{check.prefix}subject' is required: the table has no single Kafka topic to name the subject after.",
                AvroConfluentOptions.URL.key,
            )


def subject_of(fmt: PayloadFormat) -> str:
    explicit = fmt.options.get("subject")
    return str(explicit) if explicit else f"{fmt.topic}-{fmt.role}"


def registry_failure(fmt: PayloadFormat, err: RegistryRequestError) -> PipelineError:
    assert fmt.position is not None
    return PipelineError([Diagnostic.at(fmt.position, "schema-registry", f"Table '{fmt.table}': {err}.")])


def schema_id(payload: Column) -> Column:
    """The writer schema's id of a Confluent wire format record; NULL for a payload not in the format."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import IntegerType

    framed = (F.length(payload) >= _HEADER_BYTES) & (F.substring(payload, 1, 1) == F.lit(b"\x00"))
    return F.when(framed, F.conv(F.hex(F.substring(payload, 2, 4)), 16, 10).cast(IntegerType()))


class WireFormat:
    """Confluent wire format records of a table's subject: decoded with their writer schemas, the versions of the
    subject when the query starts (fetched once, here), into a reader schema."""

    def __init__(self, fmt: PayloadFormat) -> None:
        self.subject = subject_of(fmt)
        try:
            self.writers = subject_schemas(fmt.options, self.subject)
        except RegistryRequestError as err:
            raise registry_failure(fmt, err) from None
        self.where = f"subject '{self.subject}' of schema registry {shown_url(str(fmt.options['url']))}"

    def record(self, payload: Column, reader: dict[str, Any]) -> Column:
        """The payload's record in the `reader` schema, its `_DECODED` field NULL when it does not decode."""
        from pyspark.sql import functions as F
        from pyspark.sql.avro.functions import from_avro

        with_flag = {**reader, "fields": [*reader["fields"], {"name": _DECODED, "type": "boolean", "default": True}]}
        options = {"mode": "PERMISSIVE", "avroSchema": json.dumps(with_flag)}
        body = F.substring(payload, _HEADER_BYTES + 1, 2**31 - 1)
        identified = schema_id(payload)
        decoded = F.when(F.lit(False), from_avro(body, json.dumps(reader), options))
        for writer in self.writers:
            decoded = decoded.when(identified == writer.schema_id, from_avro(body, json.dumps(writer.schema), options))
        return decoded

    def problem(self, payload: Column, identified: Column, record: Column) -> Column:
        """Why the payload (`identified` its `schema_id`, `record` its `record`) cannot be read, or NULL."""
        from pyspark.sql import functions as F
        from pyspark.sql.types import StringType

        ids = [w.schema_id for w in self.writers]
        known = ", ".join(str(i) for i in ids) or "none"
        return (
            F.when(payload.isNull(), F.lit(None).cast(StringType()))
            .when(
                identified.isNull(),
                F.concat(
                    F.lit("not in the Confluent wire format (a 0 byte, a 4-byte schema id, the Avro record): "),
                    F.length(payload).cast(StringType()),
                    F.lit(" bytes starting "),
                    F.substring(F.hex(payload), 1, 16),
                ),
            )
            .when(
                ~identified.isin(ids) if ids else F.lit(True),
                F.concat(
                    F.lit("schema id "),
                    identified.cast(StringType()),
                    F.lit(
                        f" is not a version of {self.where} when the query started (ids {known}); restart the query "
                        "to read records of versions registered since"
                    ),
                ),
            )
            .when(
                record.getField(_DECODED).isNull(),
                F.concat(
                    F.lit("does not decode with schema id "),
                    identified.cast(StringType()),
                    F.lit(f" of {self.where} into the table's columns"),
                ),
            )
        )


class AvroConfluentCodec(AvroCodec):
    """Confluent wire format records, their schemas in a schema registry, through Spark's Avro functions (the
    `avro` codec's module check and Spark packages)."""

    label = "Avro (Confluent)"

    def decode(self, payload: Column, fmt: PayloadFormat, stage_prefix: str) -> Decoded:
        from pyspark.sql import functions as F

        wire = WireFormat(fmt)
        reader = table_schema(avro_fields(fmt.fields), for_spark=True)
        names = {k: f"{stage_prefix}_{k}" for k in ("payload", "id", "avro")}
        # The stage's columns are computed together from the payload; the expressions below read them by name.
        stage = {
            names["payload"]: payload,
            names["id"]: schema_id(payload),
            names["avro"]: wire.record(payload, reader),
        }
        bytes_, record = F.col(names["payload"]), F.col(names["avro"])
        values = {f.column: decoded_value(record.getField(f.name), f.flink_type) for f in fmt.fields if f.flink_type}
        problem = wire.problem(bytes_, F.col(names["id"]), record)
        return Decoded(stage, values, bytes_.isNull(), F.lit(False), problem)

    def encode(self, fmt: PayloadFormat, row: Mapping[str, Column]) -> Column:
        from pyspark.sql import functions as F
        from pyspark.sql.avro.functions import to_avro

        subject = subject_of(fmt)
        fields = avro_fields(fmt.fields)
        explicit = fmt.options.get("schema")
        schema = json.loads(str(explicit)) if explicit else table_schema(fields)
        try:
            schema_id = registered_id(
                fmt.options, subject, schema, bool(fmt.options.get("auto.register.schemas", True))
            )
        except RegistryRequestError as err:
            raise registry_failure(fmt, err) from None
        members = [encoded_value(row[f.column], f.flink_type).alias(f.name) for f in fmt.fields if f.flink_type]
        body = to_avro(F.struct(*members), json.dumps(table_schema(fields, for_spark=True)))
        return F.concat(F.lit(b"\x00" + schema_id.to_bytes(4, "big")), body)


AVRO_CONFLUENT = Format(
    "avro-confluent",
    "Avro records in the Confluent wire format, their schemas in a Confluent-compatible schema registry.",
    options=tuple(v for v in vars(AvroConfluentOptions).values() if isinstance(v, ConfigOption)),
    codec=AvroConfluentCodec(),
    carrier="messages",
    passthrough_prefixes=("properties.",),
    rules=(_rules,),
)
FORMATS = (AVRO_CONFLUENT,)
