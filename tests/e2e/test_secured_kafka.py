"""Kafka with SASL and TLS, configured the Java client's way, as Flink SQL users write it.

One broker of its own with three secured listeners, as production clusters offer them: SASL_PLAINTEXT (PLAIN and
SCRAM-SHA-256/512 users), SSL with client certificates (mTLS) and SASL_SSL (SCRAM over TLS), its certificates from a CA
the test makes (`connector.dev.certificates`). The pipelines set `'properties.security.protocol'`,
`'properties.sasl.*'` and `'properties.ssl.truststore.*'` / `'properties.ssl.keystore.*'` (JKS and PKCS12 stores
made by keytool) on the source and the sink: kafka-sql translates them for librdkafka.
"""

from __future__ import annotations

import json
import socket
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from confluent_kafka import Producer
from support.commands import run
from support.pipelines import COPY_TO_KAFKA, named
from support.stores import jks_key_store, pkcs12_key_store, trust_store
from support.topics import committed, read_topic

from connector.dev import broker
from connector.dev.certificates import Authority
from connector.dev.listeners import Listener, OAuth, Tls

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

MODULES = {
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
}
BOOTSTRAP_LINE = "  'properties.bootstrap.servers' = '{{ var(\"brokers\") }}',"
SINK_TOPIC_LINE = "  'topic' = '{{ var(\"out\") }}',"
CLIENT_SECRET = "oidc-client-secret"
SECRETS = ("alice-secret", "store-secret", "key-secret", "changeit", CLIENT_SECRET)
AUDIENCE = "urn:kafka-sql:broker"
pytest_plugins = ["pytester"]
OIDC = Path(__file__).parent / "oidc"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass(frozen=True)
class Secured:
    plaintext: str  # the broker's PLAINTEXT listener, for the test's own clients
    sasl: str
    mtls: str
    sasl_ssl: str
    authority: Authority
    issuer: str  # the OpenID Connect provider's


@pytest.fixture(scope="module")
def identity_provider() -> Iterator[str]:
    """A real OpenID Connect provider (tests/e2e/oidc, from npm's registry) with one client, `kafka-sql`; its issuer."""
    if not (OIDC / "node_modules" / "oidc-provider").is_dir():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=OIDC, check=True, capture_output=True, timeout=600)
    port = free_port()
    process = subprocess.Popen(["node", "server.mjs", str(port), "kafka-sql", CLIENT_SECRET, AUDIENCE], cwd=OIDC,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert process.stdout is not None
    lines = []
    for line in process.stdout:  # the provider says "ready" once it listens
        lines.append(line)
        if line.startswith("ready "):
            break
    else:
        pytest.fail(f"the OpenID Connect provider did not start: {''.join(lines)}")
    try:
        yield line.split()[1]
    finally:
        process.terminate()
        process.wait(30)


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory, identity_provider: str) -> Iterator[Secured]:
    authority = Authority()
    server = authority.issue("broker", ("127.0.0.1", "localhost"))
    users = {"alice": "alice-secret"}
    oauth = OAuth(f"{identity_provider}/jwks", identity_provider, AUDIENCE)
    sasl = Listener(free_port(), users, oauth=oauth)
    mtls = Listener(free_port(), tls=Tls(server.certificate, server.key, authority.certificate, client_auth=True))
    sasl_ssl = Listener(free_port(), users, tls=Tls(server.certificate, server.key, authority.certificate))
    data_dir = tmp_path_factory.mktemp("secured-broker")
    info = broker.start(data_dir, listeners=[sasl, mtls, sasl_ssl])
    address = "127.0.0.1:{}".format
    yield Secured(info.bootstrap, address(sasl.port), address(mtls.port), address(sasl_ssl.port), authority,
                  identity_provider)
    broker.stop(data_dir)


def produce_plain(bootstrap: str, topic: str, count: int) -> None:
    """Records {"id": n, "name": "n<n>"} over two partitions, through the broker's PLAINTEXT listener."""
    producer = Producer({"bootstrap.servers": bootstrap})
    for partition, value in named(range(count), 2):
        producer.produce(topic, json.dumps(value), partition=partition)
    assert producer.flush(30) == 0


def pipeline(path: Path, properties: dict[str, str], sink: dict[str, str] | None = None) -> Path:
    """COPY_TO_KAFKA with `properties` ('properties.' added) on both tables and `sink` options on the sink."""
    lines = "".join(f"\n  'properties.{key}' = '{value}'," for key, value in properties.items())
    sink_lines = "".join(f"\n  '{key}' = '{value}'," for key, value in (sink or {}).items())
    path.write_text(COPY_TO_KAFKA.replace(BOOTSTRAP_LINE, BOOTSTRAP_LINE + lines)
                    .replace(SINK_TOPIC_LINE, SINK_TOPIC_LINE + sink_lines))
    return path


def topics(secured: Secured, name: str, count: int = 10) -> dict[str, str]:
    broker.create_topic(secured.plaintext, f"in-{name}", partitions=2)
    broker.create_topic(secured.plaintext, f"out-{name}", partitions=1)
    produce_plain(secured.plaintext, f"in-{name}", count)
    return {"topic": f"in-{name}", "out": f"out-{name}", "group": f"g-{name}"}


def jaas(mechanism: str, password: str = "alice-secret") -> str:
    return f'{MODULES[mechanism]} required username="alice" password="{password}";'


@pytest.mark.slow
@pytest.mark.parametrize("mechanism", sorted(MODULES))
def test_a_pipeline_reads_writes_and_commits_with_flinks_sasl_properties(
    mechanism: str, secured: Secured, spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The transactional sink, the group commit and the quality gate's lag reads go through the SASL connection."""
    names = topics(secured, mechanism)
    results = tmp_path / "results"
    sql = pipeline(
        tmp_path / "copy.sql",
        {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": mechanism, "sasl.jaas.config": jaas(mechanism)},
        {"sink.delivery-guarantee": "exactly-once", "sink.transactional-id-prefix": f"sasl-{mechanism}",
         "quality.results.path": str(results)},
    )
    sql.write_text(sql.read_text().replace(
        "CREATE TABLE copied (id BIGINT, name STRING", "CREATE TABLE copied (id BIGINT, name STRING, "
        "CONSTRAINT known EXPECT (id IS NOT NULL) ON VIOLATION DROP ROW"))  # fmt: skip

    result = run(capsys, sql, tmp_path / "cp", brokers=secured.sasl, **names)

    assert result.code == 0, result.err
    assert sorted(r["id"] for r in read_topic(secured.plaintext, names["out"])) == list(range(10))
    assert committed(secured.plaintext, names["group"], names["topic"], 2) == {0: 5, 1: 5}
    record = json.loads((results / "copy.copied" / "batch-000000000000.json").read_text())
    assert record["status"] == "passed" and record["lag"] == {names["topic"]: {"0": 0, "1": 0}}, record
    assert "alice-secret" not in result.err + result.out


def oauthbearer(issuer: str, secret: str = CLIENT_SECRET) -> dict[str, str]:
    """Flink's (Java's) OAUTHBEARER client-credentials properties, as Kafka's docs give them."""
    return {
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "OAUTHBEARER",
        "sasl.login.callback.handler.class":
            "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
        "sasl.oauthbearer.token.endpoint.url": f"{issuer}/token",
        "sasl.jaas.config": "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
                            f'clientId="kafka-sql" clientSecret="{secret}" scope="kafka";',
    }


@pytest.mark.slow
def test_oauthbearer_tokens_of_an_openid_connect_provider_read_write_and_commit(
    secured: Secured, spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    names = topics(secured, "oauth")
    sql = pipeline(tmp_path / "copy.sql", oauthbearer(secured.issuer))

    result = run(capsys, sql, tmp_path / "cp", brokers=secured.sasl, **names)

    assert result.code == 0, result.err
    assert sorted(r["id"] for r in read_topic(secured.plaintext, names["out"])) == list(range(10))
    assert committed(secured.plaintext, names["group"], names["topic"], 2) == {0: 5, 1: 5}
    assert CLIENT_SECRET not in result.err + result.out


@pytest.mark.slow
def test_a_wrong_client_secret_fails_saying_the_provider_refused_the_token(
    secured: Secured, spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    names = topics(secured, "oauth-wrong", count=0)
    sql = pipeline(tmp_path / "copy.sql", oauthbearer(secured.issuer, "not-the-secret"))

    result = run(capsys, sql, tmp_path / "cp", brokers=secured.sasl, **names)

    assert result.code == 1
    message = failure(result.err)
    assert "not-the-secret" not in result.err + result.out
    assert f"SASL authentication failed for client 'kafka-sql' (OAUTHBEARER) at {secured.sasl}: " in message, message
    assert "Failed to acquire SASL OAUTHBEARER token" in message
    assert "client authentication failed" in message  # the provider's own words
    assert "retried for" not in message


@pytest.mark.slow
def test_mutual_tls_with_jks_stores_reads_and_writes_exactly_once(
    secured: Secured, spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Client certificates (the key with a password of its own) and the CA, in JKS stores as Java users keep them;
    the transactional sink and the group commit go through the same TLS connection."""
    names = topics(secured, "mtls")
    truststore = trust_store(tmp_path / "truststore.jks", {"ca": secured.authority.certificate}, "changeit")
    keystore = jks_key_store(tmp_path / "alice.jks", secured.authority.issue("alice"), "store-secret", "key-secret")
    sql = pipeline(
        tmp_path / "copy.sql",
        {"security.protocol": "SSL", "ssl.truststore.location": str(truststore),
         "ssl.truststore.password": "changeit", "ssl.keystore.location": str(keystore),
         "ssl.keystore.password": "store-secret", "ssl.key.password": "key-secret"},
        {"sink.delivery-guarantee": "exactly-once", "sink.transactional-id-prefix": "mtls-copy"},
    )

    result = run(capsys, sql, tmp_path / "cp", brokers=secured.mtls, **names)

    assert result.code == 0, result.err
    assert sorted(r["id"] for r in read_topic(secured.plaintext, names["out"])) == list(range(10))
    assert committed(secured.plaintext, names["group"], names["topic"], 2) == {0: 5, 1: 5}
    assert not any(secret in result.err + result.out for secret in SECRETS)


@pytest.mark.slow
def test_sasl_ssl_with_a_pkcs12_trust_store_reads_and_writes(
    secured: Secured, spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    names = topics(secured, "sasl-ssl")
    truststore = trust_store(tmp_path / "truststore.p12", {"ca": secured.authority.certificate}, "changeit",
                             "PKCS12")
    sql = pipeline(tmp_path / "copy.sql", {
        "security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512", "sasl.jaas.config": jaas("SCRAM-SHA-512"),
        "ssl.truststore.type": "PKCS12", "ssl.truststore.location": str(truststore),
        "ssl.truststore.password": "changeit",
    })

    result = run(capsys, sql, tmp_path / "cp", brokers=secured.sasl_ssl, **names)

    assert result.code == 0, result.err
    assert sorted(r["id"] for r in read_topic(secured.plaintext, names["out"])) == list(range(10))
    assert committed(secured.plaintext, names["group"], names["topic"], 2) == {0: 5, 1: 5}
    assert not any(secret in result.err + result.out for secret in SECRETS)


def failure(result_err: str) -> str:
    return " ".join(result_err.split())


@pytest.mark.slow
def test_a_wrong_password_fails_saying_authentication_failed(
    secured: Secured, spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    names = topics(secured, "wrong", count=0)
    sql = pipeline(tmp_path / "copy.sql", {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-512",
                                           "sasl.jaas.config": jaas("SCRAM-SHA-512", "not-her-password")})

    result = run(capsys, sql, tmp_path / "cp", brokers=secured.sasl, **names)

    assert result.code == 1
    message = failure(result.err)
    assert f"SASL authentication failed for user 'alice' (SCRAM-SHA-512) at {secured.sasl}: " in message
    assert "invalid credentials with SASL mechanism SCRAM-SHA-512" in message
    assert "transport failure" not in message  # the cause, not its symptom (and no retrying until the timeout)
    assert "not-her-password" not in result.err + result.out


@pytest.mark.slow
@pytest.mark.parametrize(
    ("properties", "protocol"),
    [
        ({"security.protocol": "SSL"}, "SSL"),
        ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.jaas.config": jaas("PLAIN")},
         "SASL_PLAINTEXT"),
    ],
    ids=["tls", "sasl"],
)
def test_a_protocol_the_listener_does_not_speak_fails_naming_the_protocol_option(
    properties: dict[str, str],
    protocol: str,
    secured: Secured,
    spark: SparkSession,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A TLS or SASL client at a PLAINTEXT listener: not a transport failure retried for 'scan.retry-timeout', but
    an error at once that names 'properties.security.protocol'."""
    names = topics(secured, f"protocol-{protocol.lower()}", count=0)
    sql = pipeline(tmp_path / "copy.sql", properties)

    result = run(capsys, sql, tmp_path / "cp", brokers=secured.plaintext, **names)

    assert result.code == 1
    message = failure(result.err)
    expected = f"The listener at {secured.plaintext} does not speak 'properties.security.protocol' = '{protocol}'"
    assert expected in message, message
    assert "transport failure" not in message


@pytest.mark.slow
@pytest.mark.parametrize(("listener", "expects"), [("sasl", "SASL"), ("sasl_ssl", "TLS")])
def test_a_plaintext_client_at_a_secured_listener_fails_naming_the_protocol_option(
    listener: str,
    expects: str,
    secured: Secured,
    spark: SparkSession,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A client without TLS or SASL at a listener that expects them: the listener closes each connection at the
    first request, which is no outage to retry for 'scan.retry-timeout' but an error that names the option."""
    names = topics(secured, f"plain-at-{listener}", count=0)
    sql = pipeline(tmp_path / "copy.sql", {})
    address = getattr(secured, listener)

    result = run(capsys, sql, tmp_path / "cp", brokers=address, **names)

    assert result.code == 1
    message = failure(result.err)
    expected = f"The listener at {address} closed each of 5 connections at the client's first request: it expects "
    assert f"{expected}{expects}" in message, message
    assert "not 'properties.security.protocol' = 'PLAINTEXT'" in message
    assert "transport failure" not in message


@pytest.mark.slow
def test_a_broker_certificate_from_an_untrusted_ca_fails_saying_which_check_failed(
    secured: Secured, spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    names = topics(secured, "untrusted", count=0)
    truststore = trust_store(tmp_path / "other.jks", {"other": Authority("another CA").certificate}, "changeit")
    sql = pipeline(tmp_path / "copy.sql", {"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
                                           "sasl.jaas.config": jaas("SCRAM-SHA-512"),
                                           "ssl.truststore.location": str(truststore),
                                           "ssl.truststore.password": "changeit"})

    result = run(capsys, sql, tmp_path / "cp", brokers=secured.sasl_ssl, **names)

    assert result.code == 1
    message = failure(result.err)
    assert f"The TLS handshake failed at {secured.sasl_ssl}: " in message, message
    assert "certificate verify failed" in message
    assert "not signed by a CA of the trust store ('properties.ssl.truststore.*')" in message
    assert "ssl.ca.location" not in message  # librdkafka's name for it, which the user did not write
    assert "transport failure" not in message


@pytest.mark.slow
def test_a_client_without_its_certificate_is_refused_by_a_mutual_tls_listener(
    secured: Secured, spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    names = topics(secured, "no-client-cert", count=0)
    truststore = trust_store(tmp_path / "truststore.jks", {"ca": secured.authority.certificate}, "changeit")
    sql = pipeline(tmp_path / "copy.sql", {"security.protocol": "SSL", "ssl.truststore.location": str(truststore),
                                           "ssl.truststore.password": "changeit"})

    result = run(capsys, sql, tmp_path / "cp", brokers=secured.mtls, **names)

    assert result.code == 1
    message = failure(result.err)
    assert f"The TLS handshake failed at {secured.mtls}: " in message, message
    assert "alert bad certificate" in message  # TLS 1.3: the broker's alert, after the client's handshake
    assert "The broker refused the client's certificate" in message
    assert "'properties.ssl.keystore.*'" in message
    assert "retried for" not in message  # a refusal ends the run at once


def client_config(path: Path, secured: Secured, password: str = "alice-secret") -> Path:
    """A Java client properties file for the SASL_SSL listener, as Kafka's tools take it (JAAS text on continued
    lines, a PKCS12 trust store)."""
    truststore = trust_store(path.with_suffix(".p12"), {"ca": secured.authority.certificate}, "changeit", "PKCS12")
    path.write_text(
        "security.protocol=SASL_SSL\n"
        "sasl.mechanism=SCRAM-SHA-512\n"
        f"sasl.jaas.config={MODULES['SCRAM-SHA-512']} required \\\n"
        f'    username="alice" password="{password}";\n'
        f"ssl.truststore.location={truststore}\n"
        "ssl.truststore.type=PKCS12\n"
        "ssl.truststore.password=changeit\n"
    )
    return path


@pytest.mark.slow
def test_produce_writes_to_a_secured_broker_with_a_client_properties_file(
    secured: Secured, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from connector.entrypoints.cli import main

    lines = tmp_path / "orders.jsonl"
    lines.write_text("".join(json.dumps({"id": i}) + "\n" for i in range(5)))
    config = client_config(tmp_path / "client.properties", secured)

    code = main(["produce", "secured-orders", str(lines), "--bootstrap", secured.sasl_ssl, "--partitions", "2",
                 "--client-config", str(config)])
    assert code == 0, capsys.readouterr().err
    assert sorted(r["id"] for r in read_topic(secured.plaintext, "secured-orders")) == list(range(5))

    wrong = client_config(tmp_path / "wrong.properties", secured, password="not-her-password")
    capsys.readouterr()
    assert main(["produce", "secured-orders", str(lines), "--bootstrap", secured.sasl_ssl,
                 "--client-config", str(wrong)]) == 1
    said = " ".join(capsys.readouterr().err.split())
    assert f"produce: SASL authentication failed for user 'alice' (SCRAM-SHA-512) at {secured.sasl_ssl}" in said
    assert "not-her-password" not in said


PLUGIN_PIPELINE = """
CREATE TABLE orders (id BIGINT, amount DOUBLE) WITH (
  'connector' = 'kafka', 'topic' = 'orders', 'properties.bootstrap.servers' = 'prod-kafka:9093',
  'properties.security.protocol' = 'SASL_SSL', 'properties.sasl.mechanism' = 'PLAIN',
  'properties.sasl.jaas.config' =
    'org.apache.kafka.common.security.plain.PlainLoginModule required username="prod" password="prod-secret";',
  'properties.group.id' = 'etl', 'format' = 'json'
);
CREATE TABLE big (id BIGINT, amount DOUBLE) WITH (
  'connector' = 'kafka', 'topic' = 'big', 'properties.bootstrap.servers' = 'prod-kafka:9093',
  'properties.security.protocol' = 'SASL_SSL', 'properties.sasl.mechanism' = 'PLAIN',
  'properties.sasl.jaas.config' =
    'org.apache.kafka.common.security.plain.PlainLoginModule required username="prod" password="prod-secret";',
  'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = 'big',
  'format' = 'json'
);
INSERT INTO big SELECT id, amount FROM orders WHERE amount > 10;
"""


@pytest.mark.slow
def test_the_pytest_plugin_runs_pipelines_on_a_secured_test_broker(
    secured: Secured, pytester: pytest.Pytester, tmp_path: Path
) -> None:
    """The file's production security properties give way to the test broker's, from --kafka-sql-client-config."""
    (tmp_path / "big.sql").write_text(PLUGIN_PIPELINE)
    config = client_config(tmp_path / "client.properties", secured)
    pytester.makepyfile(
        test_big=f"""
        def test_big_orders(run_pipeline):
            result = run_pipeline({str(tmp_path / "big.sql")!r},
                                  inputs={{"orders": [{{"id": 1, "amount": 5.0}}, {{"id": 2, "amount": 50.0}}]}})
            assert result.rows("big") == [{{"id": 2, "amount": 50.0}}]
        """
    )
    outcome = pytester.runpytest_subprocess(
        "--kafka-sql-bootstrap", secured.sasl_ssl, "--kafka-sql-client-config", str(config),
        "-p", "no:cacheprovider", timeout=600,
    )
    outcome.assert_outcomes(passed=1)


@pytest.mark.slow
@pytest.mark.parametrize("listener", ["mtls", "sasl_ssl"])
def test_spark_sql_reads_and_writes_a_secured_broker(
    listener: str, secured: Secured, spark: SparkSession, tmp_path: Path
) -> None:
    from pyspark.sql.streaming import StreamingQuery

    import connector

    names = topics(secured, f"spark-sql-{listener}")
    truststore = trust_store(tmp_path / "truststore.jks", {"ca": secured.authority.certificate}, "changeit")
    trusted = (f"'properties.ssl.truststore.location' = '{truststore}', "
               "'properties.ssl.truststore.password' = 'changeit'")
    if listener == "mtls":
        keystore = pkcs12_key_store(tmp_path / "alice.p12", secured.authority.issue("alice"), "store-secret")
        security = (f"'properties.security.protocol' = 'SSL', {trusted}, 'properties.ssl.keystore.type' = 'PKCS12', "
                    f"'properties.ssl.keystore.location' = '{keystore}', "
                    "'properties.ssl.keystore.password' = 'store-secret'")
    else:
        security = ("'properties.security.protocol' = 'SASL_SSL', 'properties.sasl.mechanism' = 'SCRAM-SHA-512', "
                    f"'properties.sasl.jaas.config' = '{jaas('SCRAM-SHA-512')}', {trusted}")
    servers = getattr(secured, listener)
    installed = connector.install(spark.newSession(), checkpoint_dir=tmp_path / "checkpoints")
    try:
        session = installed.spark
        session.sql(f"""CREATE TABLE events (id BIGINT, name STRING) WITH ('connector' = 'kafka',
            'topic' = '{names["topic"]}', 'properties.bootstrap.servers' = '{servers}', {security},
            'properties.group.id' = '{names["group"]}', 'scan.startup.mode' = 'earliest-offset',
            'scan.bounded.mode' = 'latest-offset', 'format' = 'json')""")
        session.sql(f"""CREATE TABLE copied (id BIGINT, name STRING) WITH ('connector' = 'kafka',
            'topic' = '{names["out"]}', 'properties.bootstrap.servers' = '{servers}', {security},
            'format' = 'json')""")

        query = session.sql("INSERT INTO copied SELECT id, name FROM events")

        assert isinstance(query, StreamingQuery)
        assert not query.isActive and query.exception() is None
    finally:
        installed.close()
    assert sorted(r["id"] for r in read_topic(secured.plaintext, names["out"])) == list(range(10))
    assert committed(secured.plaintext, names["group"], names["topic"], 2) == {0: 5, 1: 5}


@pytest.mark.slow
def test_a_sink_whose_broker_refuses_the_client_fails_saying_so(
    secured: Secured, spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The source reads a broker that lets it in; the sink's refuses its password: the run fails on the sink."""
    names = topics(secured, "sink-refused", count=4)
    wrong = jaas("SCRAM-SHA-512", "not-her-password")
    sink = {"properties.security.protocol": "SASL_PLAINTEXT", "properties.sasl.mechanism": "SCRAM-SHA-512",
            "properties.sasl.jaas.config": wrong}
    sql = pipeline(tmp_path / "copy.sql", {}, sink)
    sql.write_text(sql.read_text().replace("'{{ var(\"brokers\") }}',\n  'format' = 'json'\n);\n\nINSERT",
                                           f"'{secured.sasl}',\n  'format' = 'json'\n);\n\nINSERT"))

    result = run(capsys, sql, tmp_path / "cp", brokers=secured.plaintext, **names)

    assert result.code == 1
    message = failure(result.err)
    assert f"SASL authentication failed for user 'alice' (SCRAM-SHA-512) at {secured.sasl}" in message, message
    assert "not-her-password" not in result.err + result.out
    assert committed(secured.plaintext, names["group"], names["topic"], 2) == {}
