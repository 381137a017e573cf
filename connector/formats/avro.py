"""The `avro` format (Flink's AvroRowDataDeserializationSchema / SerializationSchema): Avro binary records whose
schema is derived from the table's columns (`connector.formats.avro_schema`), decoded and encoded in bulk by
Spark's own Avro functions (`from_avro` / `to_avro`, the `spark-avro` module).

As in Flink, a NULL message yields no row, and a record that does not decode with the table's schema fails the
query (Flink's avro format has no 'ignore-parse-errors'); the message names topic, partition and offset.
A record with bytes left over after its last field is read as Flink reads it: those bytes are not looked at.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType

from connector.formats.avro_schema import AvroSchemaError, decoded_value, encoded_value, table_schema
from connector.formats.payload import Codec, Decoded, PayloadField, PayloadFormat, fail
from connector.options.declarations import ConfigOption
from connector.options.factory import Format, FormatCheck
from connector.options.types import BOOLEAN, ENUM
from connector.sql.catalog import Table

# Spark's Avro functions live in this module, which pip's pyspark does not ship. Maven Central serves it up to
# 4.2.0 here (not 4.3.0, the installed pyspark's version); 4.2.0 runs on Spark 4.3.0, as the tests show.
SPARK_AVRO = "org.apache.spark:spark-avro_2.13:4.2.0"
_SPARK_AVRO_CLASS = "org.apache.spark.sql.avro.AvroDataToCatalyst"
# A field only the reader's schema has, with a default: true in every record that decodes. Spark's from_avro
# gives a row of NULLs for a record that does not (PERMISSIVE mode), which a record of NULLs would also be.
_DECODED = "__kafka_sql_decoded"


class AvroOptions:
    """Options of the `avro` format, written 'avro.<key>' (or 'key.avro.<key>' / 'value.avro.<key>')."""

    ENCODING = ConfigOption(
        "encoding",
        ENUM("binary", "json"),
        "The encoding of records: 'binary' (compact) or 'json' (Avro's JSON encoding, human-readable).",
        default="binary",
    )
    TIMESTAMP_MAPPING_LEGACY = ConfigOption(
        "timestamp_mapping.legacy",
        BOOLEAN,
        "Use the legacy mapping of timestamps: TIMESTAMP as Avro timestamp-millis and no TIMESTAMP_LTZ. When false, "
        "TIMESTAMP maps to Avro local-timestamp-millis/-micros and TIMESTAMP_LTZ to timestamp-millis/-micros.",
        default=True,
    )
    OPEN_FASTREAD = ConfigOption(
        "open.fastread",
        BOOLEAN,
        "Flink: read with Avro's fast reader. Spark's reader is used either way; the results are the same.",
        default=False,
    )


def avro_fields(fields: tuple[PayloadField, ...]) -> list[tuple[str, Any, bool]]:
    """(name, Flink type, nullable) of the payload's fields, as `table_schema` takes them."""
    return [(f.name, f.flink_type, f.nullable) for f in fields if f.flink_type is not None]


def check_columns(check: FormatCheck, legacy: bool = True) -> None:
    """Each column must have an Avro schema (Flink fails the job otherwise); reported at the column."""
    for column in check.columns:
        if column.data_type is None:
            continue
        try:
            table_schema([(column.name, column.data_type, column.nullable)], legacy)
        except AvroSchemaError as err:
            check.report("unsupported-type", f"Column '{column.name}': {err}", position=column.position)


def _schema_rule(check: FormatCheck) -> None:
    """The table's columns must have an Avro schema, in the encoding Spark reads."""
    check_columns(check, check.options.get(AvroOptions.TIMESTAMP_MAPPING_LEGACY) is not False)
    if check.options.get(AvroOptions.ENCODING) == "json":
        check.report(
            "unsupported-format",
            f"'{check.key(AvroOptions.ENCODING)}' = 'json' is not supported yet: Spark's Avro functions read and "
            "write the binary encoding only. Use 'binary' (the default).",
            AvroOptions.ENCODING.key,
        )


def require_spark_avro(fmt: PayloadFormat, table: Table, format_key: str) -> None:
    spark = SparkSession.getActiveSession()
    if spark is None:
        return
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    if not jvm.org.apache.spark.util.Utils.classIsLoadable(_SPARK_AVRO_CLASS):
        fail(
            table,
            format_key,
            f"Format '{fmt.identifier}' needs Spark's Avro module, which this Spark session has not loaded. "
            f"Start the session with spark.jars.packages = '{SPARK_AVRO}' (`kafka-sql run` does).",
        )


class AvroCodec(Codec):
    """Avro binary records with the table's derived schema, through Spark's Avro functions."""

    label = "Avro"
    spark_packages = (SPARK_AVRO,)

    def check(self, fmt: PayloadFormat, table: Table, format_key: str) -> None:
        require_spark_avro(fmt, table, format_key)

    def decode(self, payload: Column, fmt: PayloadFormat, stage_prefix: str) -> Decoded:
        from pyspark.sql.avro.functions import from_avro

        legacy = bool(fmt.options.get("timestamp_mapping.legacy", True))
        writer = table_schema(avro_fields(fmt.fields), legacy, for_spark=True)
        reader = {**writer, "fields": [*writer["fields"], {"name": _DECODED, "type": "boolean", "default": True}]}
        options = {"mode": "PERMISSIVE", "avroSchema": json.dumps(reader)}
        payload_name, decoded_name = f"{stage_prefix}_payload", f"{stage_prefix}_avro"
        stage = {payload_name: payload, decoded_name: from_avro(payload, json.dumps(writer), options)}
        bytes_, record = F.col(payload_name), F.col(decoded_name)
        values = {f.column: decoded_value(record.getField(f.name), f.flink_type) for f in fmt.fields if f.flink_type}
        broken = bytes_.isNotNull() & record.getField(_DECODED).isNull()
        problem = F.when(
            broken,
            F.concat(
                F.lit("does not decode with the table's Avro schema ("),
                F.length(bytes_).cast(StringType()),
                F.lit(" bytes: "),
                F.substring(F.hex(bytes_), 1, 64),
                F.when(F.length(bytes_) > 32, F.lit("...")).otherwise(F.lit("")),
                F.lit(")"),
            ),
        )
        return Decoded(stage, values, bytes_.isNull(), F.lit(False), problem)

    def encode(self, fmt: PayloadFormat, row: Mapping[str, Column]) -> Column:
        from pyspark.sql.avro.functions import to_avro

        legacy = bool(fmt.options.get("timestamp_mapping.legacy", True))
        schema = table_schema(avro_fields(fmt.fields), legacy, for_spark=True)
        members = [encoded_value(row[f.column], f.flink_type).alias(f.name) for f in fmt.fields if f.flink_type]
        return to_avro(F.struct(*members), json.dumps(schema))


AVRO = Format(
    "avro",
    "Apache Avro binary records; the schema is derived from the table's columns as Flink derives it.",
    options=tuple(v for v in vars(AvroOptions).values() if isinstance(v, ConfigOption)),
    codec=AvroCodec(),
    connectors=("kafka", "upsert-kafka"),
    rules=(_schema_rule,),
)
FORMATS = (AVRO,)
