"""The `debezium-avro-confluent` format against a real schema registry (Apicurio's Confluent API): Debezium's Avro
envelopes, written by confluent-kafka's own Avro serializer, read as Flink's changelog rows; what Flink cannot read
fails naming the record's offset."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from support.formats import decode_rows, failure_of, table, values

from connector.dev.schema_registry_server import RegistryInfo
from connector.diagnostics import PipelineError
from connector.formats.payload import PayloadFormat
from connector.sql.frontend import compile_file

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

NAMESPACE = "dbserver1.inventory.products"
VALUE = {
    "type": "record", "name": "Value", "namespace": NAMESPACE,
    "fields": [{"name": "id", "type": "int"}, {"name": "name", "type": ["null", "string"], "default": None}],
}  # fmt: skip
ENVELOPE = {
    "type": "record", "name": "Envelope", "namespace": NAMESPACE,
    "fields": [
        {"name": "before", "type": ["null", VALUE], "default": None},
        {"name": "after", "type": ["null", "Value"], "default": None},
        {"name": "source", "type": {"type": "map", "values": "string"}},  # not in Flink's reader schema: skipped
        {"name": "op", "type": "string"},
        {"name": "ts_ms", "type": ["null", "long"], "default": None},
    ],
}  # fmt: skip
COLUMNS = "id INT, name STRING"


@pytest.fixture
def subject_topic(schema_registry: RegistryInfo) -> str:
    """A topic name whose '<topic>-value' subject no other test uses."""
    return f"products-{uuid.uuid4().hex[:8]}"


def _writer(registry: RegistryInfo, topic: str) -> Callable[..., bytes]:
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    serializer = AvroSerializer(SchemaRegistryClient({"url": registry.url}), json.dumps(ENVELOPE))

    def event(op: str, before: dict[str, Any] | None, after: dict[str, Any] | None) -> bytes:
        record = {"before": before, "after": after, "source": {"table": "products"}, "op": op, "ts_ms": 1}
        encoded = serializer(record, SerializationContext(topic, MessageField.VALUE))
        assert encoded is not None
        return encoded

    return event


def _table(registry: RegistryInfo, topic: str) -> Any:
    options = {"topic": topic, "format": "debezium-avro-confluent", "debezium-avro-confluent.url": registry.url}
    return table(COLUMNS, options)


def test_events_become_inserts_updates_with_their_old_row_and_deletes(
    spark: SparkSession, schema_registry: RegistryInfo, subject_topic: str
) -> None:
    event = _writer(schema_registry, subject_topic)
    one, renamed = {"id": 1, "name": "scooter"}, {"id": 1, "name": "e-scooter"}
    records = [event("r", None, one), event("u", one, renamed), event("d", renamed, None), None, b""]
    rows, malformed = decode_rows(spark, _table(schema_registry, subject_topic), records)
    assert values(rows, "id", "name", "__deleted", "__update_before", "__offset") == [
        (1, "scooter", False, False, 0),
        (1, "scooter", True, True, 1),  # UPDATE_BEFORE
        (1, "e-scooter", False, False, 1),  # UPDATE_AFTER
        (1, "e-scooter", True, False, 2),  # DELETE; the tombstone and the empty value after it: no row
    ]
    assert malformed == 0


@pytest.mark.parametrize(
    ("op", "before", "after", "expected"),
    [
        ("u", None, {"id": 1, "name": "x"}, 'the "before" field of UPDATE message is null'),
        ("d", None, None, 'the "before" field of DELETE message is null'),
        ("x", None, {"id": 1, "name": "x"}, 'unknown "op" value "x"'),
        ("c", None, None, 'the "after" field is null'),
    ],
)
def test_an_event_flink_cannot_read_fails_the_query_naming_its_offset(
    spark: SparkSession,
    schema_registry: RegistryInfo,
    subject_topic: str,
    op: str,
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
    expected: str,
) -> None:
    event = _writer(schema_registry, subject_topic)
    records = [event("c", None, {"id": 1, "name": "x"}), event(op, before, after)]
    message = failure_of(spark, _table(schema_registry, subject_topic), records)
    assert message.startswith("Malformed Debezium Avro (Confluent) record in topic 'orders' partition 0 offset 1: ")
    assert expected in message


def test_a_record_not_in_the_wire_format_fails_naming_its_offset(
    spark: SparkSession, schema_registry: RegistryInfo, subject_topic: str
) -> None:
    event = _writer(schema_registry, subject_topic)
    message = failure_of(spark, _table(schema_registry, subject_topic), [event("c", None, {"id": 1}), b'{"id": 1}'])
    assert "offset 1: not in the Confluent wire format" in message


def test_it_is_a_value_format_whose_registry_options_are_checked(tmp_path: Path, schema_registry: RegistryInfo) -> None:
    keyed = table(COLUMNS, {
        "key.format": "debezium-avro-confluent", "key.debezium-avro-confluent.url": schema_registry.url,
        "key.fields": "id", "value.format": "json",
    })  # fmt: skip
    with pytest.raises(PipelineError) as error:
        PayloadFormat.of(keyed, "key")
    assert "A key format should only deal with INSERT-only records" in str(error.value)
    options = f"'format' = 'debezium-avro-confluent', 'debezium-avro-confluent.url' = '{schema_registry.url}'"
    pipeline = tmp_path / "write.sql"
    pipeline.write_text(
        f"CREATE TABLE src ({COLUMNS}) WITH ('connector' = 'datagen');\n"
        f"CREATE TABLE dst ({COLUMNS}) WITH ('connector' = 'kafka', 'topic' = 't', "
        f"'properties.bootstrap.servers' = 'x', {options});\n"
        "INSERT INTO dst SELECT * FROM src;\n"
    )
    assert compile_file(pipeline).errors == []  # written as Flink does: conformance debezium_avro_confluent_sink
    url_option = "'debezium-avro-confluent.url'"
    pipeline.write_text(pipeline.read_text().replace(url_option, "'debezium-avro-confluent.schema'"))
    errors = [d.message for d in compile_file(pipeline).errors]
    assert any("debezium-avro-confluent.schema" in e and "debezium-avro-confluent.url" in e for e in errors), errors


def test_ssl_options_of_the_registry_are_taken(schema_registry: RegistryInfo) -> None:
    """As avro-confluent's (tested over HTTPS in test_avro_confluent), not refused; a misspelt one is."""
    from connector.connectors import registry

    options = {
        "topic": "t", "format": "debezium-avro-confluent", "debezium-avro-confluent.url": schema_registry.url,
        "debezium-avro-confluent.ssl.truststore.location": "/tmp/trust.jks",
        "debezium-avro-confluent.ssl.truststore.password": "secret",
        "debezium-avro-confluent.ssl.trustore.type": "JKS",
    }  # fmt: skip
    problems = [d.message for d in registry.validate_table(table(COLUMNS, options))]
    about_ssl = [p for p in problems if "ssl" in p]
    assert len(about_ssl) == 1 and "'debezium-avro-confluent.ssl.trustore.type'" in about_ssl[0], problems
