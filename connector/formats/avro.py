"""The `avro` format (Flink's AvroRowDataDeserializationSchema / SerializationSchema): Avro binary records whose
schema is derived from the table's columns (`connector.formats.avro_schema`), decoded and encoded in bulk by
Spark's own Avro functions (`from_avro` / `to_avro`, the `spark-avro` module).

With 'avro.encoding' = 'json' records are in Avro's JSON encoding (unions as {"type": value}, bytes as ISO-8859-1
text), which Spark's functions do not read: fastavro turns each record into the binary encoding before
`from_avro` (`prepare`) and each written record back into JSON after `to_avro`, in Python functions, written
compact as Avro's Java JsonEncoder writes it (Python's float text differs from Java's for numbers below 1e-3 or
from 1e7 up: 1e+20 against 1.0E20; both read back as the same number).

As in Flink, a NULL message yields no row, and a record that does not decode with the table's schema fails the
query (Flink's avro format has no 'ignore-parse-errors'); the message names topic, partition and offset.
A record with bytes left over after its last field is read as Flink reads it: those bytes are not looked at.
"""

from __future__ import annotations

import functools
import io
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import fastavro

from connector.catalog.model import Table
from connector.formats.avro_schema import AvroSchemaError, decoded_value, encoded_value, table_schema
from connector.formats.payload import Codec, Decoded, PayloadField, PayloadFormat, fail
from connector.options.declarations import ConfigOption
from connector.options.factory import Format, FormatCheck
from connector.options.types import BOOLEAN, ENUM

if TYPE_CHECKING:
    from pyspark.sql import Column

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
    """The table's columns must have an Avro schema."""
    check_columns(check, check.options.get(AvroOptions.TIMESTAMP_MAPPING_LEGACY) is not False)


@functools.lru_cache(maxsize=16)
def _parsed(schema: str) -> Any:
    return fastavro.parse_schema(json.loads(schema))


def json_to_binary(schema: str, record: bytes | None) -> tuple[bytes | None, str | None]:
    """A record in Avro's JSON encoding as (its binary encoding, None), or (None, why it does not read)."""
    if record is None:
        return None, None
    try:
        # one line, as fastavro reads: Flink starts each record after a task's first with a newline
        line = json.dumps(json.loads(bytes(record).decode("utf-8")))
        value = next(fastavro.json_reader(io.StringIO(line), _parsed(schema)))
        out = io.BytesIO()
        fastavro.schemaless_writer(out, _parsed(schema), value)
        return out.getvalue(), None
    except Exception as err:  # any way a text is not a record of the schema
        shown = bytes(record)[:64].decode("utf-8", "replace")
        return None, f"is not a record of the table's Avro schema in Avro's JSON encoding ({err}): {shown}"


def binary_to_json(schema: str, record: bytes | None) -> bytes | None:
    """A record's binary encoding as Avro's JSON encoding, compact as Avro's Java JsonEncoder writes it."""
    if record is None:
        return None
    value = fastavro.schemaless_reader(io.BytesIO(bytes(record)), _parsed(schema), None)
    out = io.StringIO()
    fastavro.json_writer(out, _parsed(schema), [value])
    return json.dumps(json.loads(out.getvalue()), separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def require_spark_avro(fmt: PayloadFormat, table: Table, format_key: str) -> None:
    from pyspark.sql import SparkSession

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

    def prepare(self, payload: Column, fmt: PayloadFormat, stage_prefix: str) -> dict[str, Column]:
        from pyspark.sql import functions as F
        from pyspark.sql.types import BinaryType, StringType, StructField, StructType

        if not _json_encoded(fmt):
            return {}
        converted = functools.partial(json_to_binary, json.dumps(_spark_schema(fmt)))
        returned = StructType([StructField("binary", BinaryType()), StructField("problem", StringType())])
        return {f"{stage_prefix}_avro_json": F.udf(converted, returned, useArrow=True)(payload)}

    def decode(self, payload: Column, fmt: PayloadFormat, stage_prefix: str) -> Decoded:
        from pyspark.sql import functions as F
        from pyspark.sql.avro.functions import from_avro
        from pyspark.sql.types import StringType

        writer = _spark_schema(fmt)
        reader = {**writer, "fields": [*writer["fields"], {"name": _DECODED, "type": "boolean", "default": True}]}
        options = {"mode": "PERMISSIVE", "avroSchema": json.dumps(reader)}
        json_problem: Column = F.lit(None).cast(StringType())
        if _json_encoded(fmt):
            converted = F.col(f"{stage_prefix}_avro_json")
            payload, json_problem = converted.getField("binary"), converted.getField("problem")
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
        null_value = bytes_.isNull() & json_problem.isNull()
        return Decoded(stage, values, null_value, F.lit(False), F.coalesce(json_problem, problem))

    def encode(self, fmt: PayloadFormat, row: Mapping[str, Column]) -> Column:
        from pyspark.sql import functions as F
        from pyspark.sql.avro.functions import to_avro
        from pyspark.sql.types import BinaryType

        schema = _spark_schema(fmt)
        members = [encoded_value(row[f.column], f.flink_type).alias(f.name) for f in fmt.fields if f.flink_type]
        encoded = to_avro(F.struct(*members), json.dumps(schema))
        if not _json_encoded(fmt):
            return encoded
        written = F.udf(functools.partial(binary_to_json, json.dumps(schema)), BinaryType(), useArrow=True)(encoded)
        return written.alias("avro_json")  # named: Spark cannot name a Python function of a nested struct itself


def _json_encoded(fmt: PayloadFormat) -> bool:
    return fmt.options.get(AvroOptions.ENCODING.key, AvroOptions.ENCODING.default) == "json"


def _spark_schema(fmt: PayloadFormat) -> dict[str, Any]:
    """The payload's Avro schema as Spark's Avro functions take it (`table_schema`'s twin)."""
    legacy = bool(fmt.options.get("timestamp_mapping.legacy", True))
    return table_schema(avro_fields(fmt.fields), legacy, for_spark=True)


AVRO = Format(
    "avro",
    "Apache Avro records, binary or JSON-encoded; their schema is derived from the table's columns as Flink does.",
    options=tuple(v for v in vars(AvroOptions).values() if isinstance(v, ConfigOption)),
    codec=AvroCodec(),
    carrier="messages",
    rules=(_schema_rule,),
)
FORMATS = (AVRO,)
