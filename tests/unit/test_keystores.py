"""Flink's 'properties.ssl.truststore.*' / 'properties.ssl.keystore.*' (Java's stores) become the PEM texts
librdkafka reads, and a store that cannot be used is an error naming the property, at `validate` already."""

from __future__ import annotations

import json
import logging
import tempfile
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.serialization import load_pem_private_key
from support.stores import jks_key_store, trust_store

from connector.connectors.kafka.java_properties import librdkafka_properties
from connector.connectors.kafka.keystores import StoreError
from connector.dev.certificates import Authority
from connector.entrypoints.cli import main


@pytest.fixture(scope="module")
def authority() -> Authority:
    return Authority()


def subjects(pem: str) -> list[str]:
    return [c.subject.rfc4514_string() for c in x509.load_pem_x509_certificates(pem.encode())]


@pytest.mark.parametrize("store_type", ["JKS", "PKCS12"])
def test_a_trust_store_becomes_its_ca_certificates(store_type: str, authority: Authority, tmp_path: Path) -> None:
    other = Authority("another CA")
    store = trust_store(tmp_path / "trust.store", {"ca": authority.certificate, "other": other.certificate},
                        "changeit", store_type)

    client = librdkafka_properties({"security.protocol": "SSL", "ssl.truststore.location": str(store),
                                    "ssl.truststore.password": "changeit", "ssl.truststore.type": store_type})

    assert sorted(client) == ["security.protocol", "ssl.ca.pem"]
    assert sorted(subjects(client["ssl.ca.pem"])) == ["CN=another CA", "CN=kafka-sql test CA"]


def test_a_pkcs12_store_without_a_stated_type_is_read_as_java_reads_it(authority: Authority, tmp_path: Path) -> None:
    """Kafka's default type is JKS, but Java's loader recognises PKCS12 files too."""
    store = trust_store(tmp_path / "trust.p12", {"ca": authority.certificate}, "changeit", "PKCS12")
    client = librdkafka_properties({"ssl.truststore.location": str(store), "ssl.truststore.password": "changeit"})
    assert subjects(client["ssl.ca.pem"]) == ["CN=kafka-sql test CA"]


def test_a_jks_key_store_with_a_key_password_becomes_the_certificate_and_key(
    authority: Authority, tmp_path: Path
) -> None:
    issued = authority.issue("alice")
    store = jks_key_store(tmp_path / "alice.jks", issued, "store-secret", "key-secret")
    before = set(Path(tempfile.gettempdir()).glob("kafka-sql-store-*"))

    client = librdkafka_properties({"ssl.keystore.location": str(store), "ssl.keystore.password": "store-secret",
                                    "ssl.key.password": "key-secret"})

    assert sorted(client) == ["ssl.certificate.pem", "ssl.key.pem"]
    assert subjects(client["ssl.certificate.pem"]) == ["CN=alice"]
    key = load_pem_private_key(client["ssl.key.pem"].encode(), None)  # unencrypted: it never leaves memory
    assert key.public_key() == x509.load_pem_x509_certificate(issued.certificate.encode()).public_key()
    assert set(Path(tempfile.gettempdir()).glob("kafka-sql-store-*")) == before  # keytool's copy is gone


def test_pem_stores_in_properties_or_files_work_too(authority: Authority, tmp_path: Path) -> None:
    issued = authority.issue("bob")
    (tmp_path / "bob.pem").write_text(issued.key + issued.certificate)
    (tmp_path / "ca.pem").write_text(authority.certificate)

    inline = librdkafka_properties({"ssl.truststore.type": "PEM", "ssl.truststore.certificates": authority.certificate,
                                    "ssl.keystore.type": "PEM", "ssl.keystore.key": issued.key,
                                    "ssl.keystore.certificate.chain": issued.certificate})
    files = librdkafka_properties({"ssl.truststore.type": "PEM", "ssl.truststore.location": str(tmp_path / "ca.pem"),
                                   "ssl.keystore.type": "PEM", "ssl.keystore.location": str(tmp_path / "bob.pem")})

    assert inline == files
    assert subjects(inline["ssl.certificate.pem"]) == ["CN=bob"]


def test_librdkafka_spellings_pass_unchanged(tmp_path: Path) -> None:
    native = {"ssl.ca.location": str(tmp_path / "ca.pem"), "ssl.key.location": "k.pem", "ssl.key.password": "x"}
    assert librdkafka_properties(native) == native


def test_java_names_with_a_librdkafka_equivalent_are_renamed() -> None:
    java = {"fetch.max.wait.ms": "100", "max.request.size": "2097152", "ssl.endpoint.identification.algorithm": ""}
    assert librdkafka_properties(java) == {
        "fetch.wait.max.ms": "100", "message.max.bytes": "2097152", "ssl.endpoint.identification.algorithm": "none",
    }  # fmt: skip


def test_java_only_properties_a_flink_table_carries_reach_no_client() -> None:
    """Properties validate lets through (Java-only ones the clients do by themselves, Flink's source options) are
    given neither to readers nor to producers: a producer is made from a sink's settings (it used to refuse
    'default.api.timeout.ms' at the run's first batch)."""
    from confluent_kafka import Producer

    from connector.connectors.kafka.sink import SinkSettings

    carried = {
        "properties.default.api.timeout.ms": "60000", "properties.max.poll.records": "500",
        "properties.commit.offsets.on.checkpoint": "true", "properties.key.serializer": "x.Serializer",
    }  # fmt: skip
    settings = SinkSettings.from_options({"properties.bootstrap.servers": "127.0.0.1:1", **carried})

    assert not {k.removeprefix("properties.") for k in carried} & set(settings.producer_config)
    Producer({**settings.producer_config, "logger": logging.getLogger("test")}).flush(0)


@pytest.mark.parametrize(
    ("change", "key", "words"),
    [
        ({"ssl.keystore.password": "wrong"}, "ssl.keystore.password", "password was incorrect"),
        ({"ssl.key.password": "wrong"}, "ssl.key.password", "Cannot recover key"),
        ({"ssl.keystore.location": "/no/such/alice.jks"}, "ssl.keystore.location", "does not exist"),
        ({"ssl.keystore.password": None}, "ssl.keystore.password", "needs 'properties.ssl.keystore.password'"),
    ],
    ids=["store-password", "key-password", "missing-file", "no-password"],
)
def test_a_store_that_does_not_open_names_the_property(
    change: dict[str, str | None], key: str, words: str, authority: Authority, tmp_path: Path
) -> None:
    store = jks_key_store(tmp_path / "alice.jks", authority.issue("alice"), "store-secret", "key-secret")
    properties = {"ssl.keystore.location": str(store), "ssl.keystore.password": "store-secret",
                  "ssl.key.password": "key-secret"}
    properties = {k: v for k, v in {**properties, **change}.items() if v is not None}

    with pytest.raises(StoreError) as raised:
        librdkafka_properties(properties)

    assert raised.value.key == key
    assert words in str(raised.value)
    assert "store-secret" not in str(raised.value)
    assert "key-secret" not in str(raised.value)


def test_a_key_that_does_not_match_its_certificate_is_refused(authority: Authority, tmp_path: Path) -> None:
    one, other = authority.issue("one"), authority.issue("other")
    with pytest.raises(StoreError, match="private key does not match its certificate"):
        librdkafka_properties({"ssl.keystore.type": "PEM", "ssl.keystore.key": one.key,
                               "ssl.keystore.certificate.chain": other.certificate})


PIPELINE = """CREATE TABLE orders (id BIGINT) WITH (
  'connector' = 'kafka',
  'topic' = 'orders',
  'properties.bootstrap.servers' = 'localhost:9093',
  'properties.group.id' = 'etl',
  'properties.security.protocol' = 'SSL',
  'properties.ssl.truststore.location' = '{store}',
  'properties.ssl.truststore.password' = '{password}',
  {extra}'format' = 'json'
);
CREATE TABLE output (id BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO output SELECT id FROM orders;
"""


def validate(tmp_path: Path, capsys: pytest.CaptureFixture[str], **fields: str) -> tuple[int, list[dict[str, object]]]:
    path = tmp_path / "secured.sql"
    path.write_text(PIPELINE.format(**{"extra": "", **fields}))
    code = main(["validate", str(path), "--format", "json"])
    return code, json.loads(capsys.readouterr().out)["diagnostics"]


def test_validate_opens_the_stores_offline(
    authority: Authority, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = trust_store(tmp_path / "trust.jks", {"ca": authority.certificate}, "changeit")

    assert validate(tmp_path, capsys, store=str(store), password="changeit") == (0, [])
    code, [error] = validate(tmp_path, capsys, store=str(store), password="not-it")

    assert code == 1
    assert (error["code"], error["line"], error["column"]) == ("security", 8, 3)  # at the password
    assert "does not open with 'properties.ssl.truststore.password'" in str(error["message"])
    assert "not-it" not in str(error["message"])


def test_validate_names_a_java_property_librdkafka_has_no_equivalent_for(
    authority: Authority, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = trust_store(tmp_path / "trust.jks", {"ca": authority.certificate}, "changeit")
    code, [error] = validate(tmp_path, capsys, store=str(store), password="changeit",
                             extra="'properties.ssl.enabled.protocols' = 'TLSv1.3',\n  ")

    assert code == 1
    assert (error["code"], error["line"], error["column"]) == ("unknown-property", 9, 3)
    assert "'properties.ssl.enabled.protocols'" in str(error["message"])
    assert "has no such property" in str(error["message"])
