"""The `avro-confluent` format against a real schema registry (Apicurio Registry's Confluent API, started by
`connector.dev.schema_registry_server`) and records written and read by confluent-kafka's own Avro serializers: schema
evolution
read as Avro resolves it, the table's schema registered on write, bad records failing with their offset."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from support.commands import run
from support.stores import jks_key_store, trust_store
from support.topics import read_topic

from connector.dev.schema_registry_server import RegistryInfo

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.slow

V1 = {
    "type": "record", "name": "Order", "namespace": "shop",
    "fields": [{"name": "id", "type": "int"}, {"name": "name", "type": "string"}, {"name": "extra", "type": "string"}],
}  # fmt: skip
V2 = {
    **V1,
    "fields": [
        {"name": "id", "type": "long"},  # widened
        {"name": "name", "type": "string"},
        {"name": "extra", "type": "string"},  # not in the table: skipped
        {"name": "amount", "type": "double", "default": 0.0},  # added with a default
    ],
}
PIPELINE = """
CREATE TABLE orders (id BIGINT, name STRING, amount DOUBLE) WITH (
  'connector' = 'kafka', 'topic' = '{{ var("src") }}', 'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset',
  'format' = '{{ var("in") }}'
  {%- if var("in") == "avro-confluent" %}, 'avro-confluent.url' = '{{ var("registry") }}'{{ trust }}{% endif %}
);
CREATE TABLE copied (id BIGINT, name STRING, amount DOUBLE) WITH (
  'connector' = 'kafka', 'topic' = '{{ var("dst") }}', 'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = '{{ var("out") }}'
  {%- if var("out") == "avro-confluent" %}, 'avro-confluent.url' = '{{ var("registry") }}'{{ trust }}{% endif %}
);
INSERT INTO copied SELECT id, name, amount FROM orders;
"""
TRUST = """
{%- set trust -%}
{%- if var("truststore", "") -%}
, 'avro-confluent.ssl.truststore.location' = '{{ var("truststore") }}',
  'avro-confluent.ssl.truststore.password' = '{{ var("store_password") }}',
  'avro-confluent.ssl.keystore.location' = '{{ var("keystore") }}',
  'avro-confluent.ssl.keystore.password' = 'key-pass'
{%- endif -%}
{%- endset -%}
"""


def _serializer(registry: RegistryInfo, schema: dict[str, Any]) -> Callable[[dict[str, Any], str], bytes]:
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    serializer = AvroSerializer(SchemaRegistryClient({"url": registry.url}), json.dumps(schema))
    return lambda record, topic: serializer(record, SerializationContext(topic, MessageField.VALUE))


def _run(capsys: pytest.CaptureFixture[str], tmp_path: Path, **variables: str) -> Any:
    (tmp_path / "copy.sql").write_text(TRUST + PIPELINE)
    return run(capsys, tmp_path / "copy.sql", tmp_path / f"cp-{variables['dst']}", **variables)


def test_records_of_every_registered_version_are_read_into_the_table_and_written_back(
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Callable[[str, Sequence[Any]], None],
    schema_registry: RegistryInfo,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroDeserializer

    src, dst, out = topic_factory(), topic_factory(), topic_factory()
    old, new = _serializer(schema_registry, V1), _serializer(schema_registry, V2)
    produce(src, [
        (None, old({"id": 1, "name": "a", "extra": "x"}, src), None, None, None),
        (None, new({"id": 2**40, "name": "b", "extra": "y", "amount": 2.5}, src), None, None, None),
    ])  # fmt: skip
    common = {"brokers": kafka_bootstrap, "registry": schema_registry.url}

    to_avro = _run(capsys, tmp_path, src=src, dst=dst, **common, **{"in": "avro-confluent", "out": "avro-confluent"})
    assert to_avro.code == 0, to_avro.err
    to_json = _run(capsys, tmp_path, src=dst, dst=out, **common, **{"in": "avro-confluent", "out": "json"})
    assert to_json.code == 0, to_json.err

    expected = [{"id": 1, "name": "a", "amount": None}, {"id": 2**40, "name": "b", "amount": 2.5}]
    assert read_topic(kafka_bootstrap, out) == expected
    client = SchemaRegistryClient({"url": schema_registry.url})
    deserialize = AvroDeserializer(client)
    assert read_topic(kafka_bootstrap, dst, lambda value: deserialize(value, None)) == expected  # the Confluent way
    registered = json.loads(client.get_latest_version(f"{dst}-value").schema.schema_str or "")
    assert registered["name"] == "org.apache.flink.avro.generated.record"  # the table's schema, as Flink's
    assert [f["name"] for f in registered["fields"]] == ["id", "name", "amount"]


def test_a_registry_served_over_https_is_reached_with_the_java_stores_of_its_options(
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Callable[[str, Sequence[Any]], None],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """'avro-confluent.ssl.truststore.*' and '.ssl.keystore.*' (JKS stores, as Flink's Java client takes them): the
    table's schema is registered and read over HTTPS, the client's certificate presented; a trust store without
    the registry's CA, or a certificate the registry does not trust, fails naming the registry and why."""

    from connector.dev import schema_registry_server as registry
    from connector.dev.certificates import Authority

    authority, stranger = Authority(), Authority("another CA")
    issued = authority.issue("registry", ("127.0.0.1", "localhost"))
    (tmp_path / "ca.pem").write_text(authority.certificate)
    (tmp_path / "registry.pem").write_text(issued.certificate)
    (tmp_path / "registry.key").write_text(issued.key)
    clients = trust_store(tmp_path / "clients.p12", {"ca": authority.certificate}, "clients-pass", "PKCS12")
    tls = registry.ServerTls(
        tmp_path / "registry.pem", tmp_path / "registry.key", tmp_path / "ca.pem", (clients, "clients-pass")
    )
    trusted = trust_store(tmp_path / "trust.jks", {"ca": authority.certificate}, "trust-pass")
    untrusted = trust_store(tmp_path / "other.jks", {"other": stranger.certificate}, "trust-pass")
    identity = jks_key_store(tmp_path / "client.jks", authority.issue("kafka-sql"), "key-pass", "key-pass")
    unknown = jks_key_store(tmp_path / "stranger.jks", stranger.issue("stranger"), "key-pass", "key-pass")
    served = registry.start(tmp_path / "registry", tls=tls)
    try:
        assert served.url.startswith("https://")
        src, dst, out = topic_factory(), topic_factory(), topic_factory()
        produce(src, [(None, json.dumps({"id": 1, "name": "a", "amount": 1.5}).encode(), None, None, None)])
        common = {"brokers": kafka_bootstrap, "registry": served.url, "store_password": "trust-pass"}
        stores = {"truststore": str(trusted), "keystore": str(identity)}
        to_avro = {"src": src, "dst": dst, "in": "json", "out": "avro-confluent"}

        refused = _run(capsys, tmp_path, **to_avro, **common, **{**stores, "truststore": str(untrusted)})
        assert refused.code != 0
        assert f"schema registry {served.url} is not reachable" in refused.err
        assert "CERTIFICATE_VERIFY_FAILED" in refused.err
        unknown_client = _run(capsys, tmp_path, **to_avro, **common, **{**stores, "keystore": str(unknown)})
        assert unknown_client.code != 0
        assert f"schema registry {served.url} is not reachable" in unknown_client.err

        written = _run(capsys, tmp_path, **to_avro, **common, **stores)
        assert written.code == 0, written.err
        read = _run(capsys, tmp_path, src=dst, dst=out, **common, **stores, **{"in": "avro-confluent", "out": "json"})
        assert read.code == 0, read.err
        assert read_topic(kafka_bootstrap, out) == [{"id": 1, "name": "a", "amount": 1.5}]
        shown = written.out + written.err + read.out + read.err + refused.err
        assert "trust-pass" not in shown and "key-pass" not in shown
    finally:
        registry.stop(served)


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (b'{"id": 1}', "not in the Confluent wire format"),
        (b"\x00\x00\x00\x27\x0f\x02", "schema id 9999 is not a version of subject"),
    ],
)
def test_a_record_that_is_not_of_a_registered_schema_fails_naming_its_offset(
    payload: bytes,
    message: str,
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Callable[[str, Sequence[Any]], None],
    schema_registry: RegistryInfo,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    src, dst = topic_factory(), topic_factory()
    good = _serializer(schema_registry, V2)({"id": 1, "name": "a", "extra": "x", "amount": 1.0}, src)
    produce(src, [(None, good, None, None, None), (None, payload, None, None, None)])

    result = _run(
        capsys, tmp_path, src=src, dst=dst, brokers=kafka_bootstrap, registry=schema_registry.url,
        **{"in": "avro-confluent", "out": "json"},
    )  # fmt: skip

    assert result.code != 0
    assert f"Malformed Avro (Confluent) record in topic '{src}' partition 0 offset 1: {message}" in result.err


def test_an_unreachable_registry_is_an_error_naming_it(
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    src, dst = topic_factory(), topic_factory()
    result = _run(
        capsys, tmp_path, src=src, dst=dst, brokers=kafka_bootstrap, registry="http://127.0.0.1:9/apis/ccompat/v7",
        **{"in": "avro-confluent", "out": "json"},
    )  # fmt: skip
    assert result.code != 0
    assert "schema registry http://127.0.0.1:9/apis/ccompat/v7 is not reachable" in result.err


def test_kafka_sql_registry_starts_reports_and_stops_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import urllib.request

    from connector.entrypoints import cli

    directory = str(tmp_path / "registry")
    assert cli.main(["registry", "start", "--dir", directory]) == 0
    url = capsys.readouterr().out.strip()
    try:
        assert url.endswith("/apis/ccompat/v7")
        with urllib.request.urlopen(f"{url}/subjects", timeout=10) as answer:
            assert json.loads(answer.read()) == []
        assert cli.main(["registry", "status", "--dir", directory]) == 0
        assert capsys.readouterr().out.strip() == url
    finally:
        assert cli.main(["registry", "stop", "--dir", directory]) == 0
    assert cli.main(["registry", "status", "--dir", directory]) == 1
    assert "no schema registry running" in capsys.readouterr().err
