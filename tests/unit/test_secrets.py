"""Secret masking in options, SQL text and log records."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator

import pytest

from connector.secrets import (
    MASK,
    SecretMaskingFilter,
    is_secret_key,
    mask_options,
    mask_sql,
    mask_text,
)

SECRET_KEYS = [
    "password",
    "properties.sasl.password",
    "PASSWORD",
    "secret",
    "properties.sasl.oauthbearer.client.secret",
    "token",
    "avro-confluent.bearer-auth.token",
    "properties.sasl.jaas.config",
    "properties.ssl.key.password",
    "properties.ssl.keystore.key",
    "properties.ssl.keystore.password",
    "properties.ssl.truststore.password",
    "avro-confluent.basic-auth.user-info",
    "basic.auth.user.info",
    "avro-confluent.ssl.keystore.password",
    "credentials",
    "gcp.credentials",
    "api.key",
    "confluent.api-key",
    "apiKey",
    "clientSecret",
    "aws.access.key",
    "KAFKA_PASSWORD",
]

PLAIN_KEYS = [
    "connector",
    "topic",
    "properties.bootstrap.servers",
    "properties.group.id",
    "properties.security.protocol",
    "properties.sasl.mechanism",
    "properties.ssl.keystore.location",
    "properties.ssl.keystore.type",
    "properties.ssl.truststore.location",
    "avro-confluent.basic-auth.credentials-source",
    "avro-confluent.bearer-auth.credentials-source",
    "properties.sasl.oauthbearer.token.endpoint.url",
    "key.format",
    "key.fields",
    "format",
    "scan.startup.mode",
    "",
]


@pytest.mark.parametrize("key", SECRET_KEYS)
def test_secret_keys(key: str) -> None:
    assert is_secret_key(key)


@pytest.mark.parametrize("key", PLAIN_KEYS)
def test_plain_keys(key: str) -> None:
    assert not is_secret_key(key)


def test_mask_options_masks_only_secret_values() -> None:
    options = {
        "connector": "kafka",
        "properties.bootstrap.servers": "b:9093",
        "properties.ssl.truststore.password": "trust-pw",
        "avro-confluent.basic-auth.user-info": "user:pw",
        "avro-confluent.basic-auth.credentials-source": "USER_INFO",
    }
    assert mask_options(options) == {
        "connector": "kafka",
        "properties.bootstrap.servers": "b:9093",
        "properties.ssl.truststore.password": MASK,
        "avro-confluent.basic-auth.user-info": MASK,
        "avro-confluent.basic-auth.credentials-source": "USER_INFO",
    }


def test_mask_options_keeps_the_jaas_module_and_user_visible() -> None:
    jaas = (
        "org.apache.kafka.common.security.scram.ScramLoginModule required "
        'username="alice" password="s3cr\\"et" clientSecret=bare-secret;'
    )
    masked = mask_options({"properties.sasl.jaas.config": jaas})["properties.sasl.jaas.config"]
    assert masked == (
        "org.apache.kafka.common.security.scram.ScramLoginModule required "
        f'username="alice" password="{MASK}" clientSecret={MASK};'
    )


def test_jaas_value_without_options_is_masked_whole() -> None:
    assert mask_options({"sasl.jaas.config": "opaque-blob"}) == {"sasl.jaas.config": MASK}


DDL = """-- orders source
CREATE TABLE orders (
  id BIGINT,
  note STRING COMMENT 'password = ''not a pair'''
) WITH (
  'connector' = 'kafka',
  'properties.bootstrap.servers' = 'b:9093',
  'properties.sasl.jaas.config' = 'PlainLoginModule required username="bob" password="p''w";',
  'properties.ssl.key.password'='kp1',
  'avro-confluent.basic-auth.user-info' = 'bob:pw2',
  'format' = 'json'
);
SET 'properties.sasl.password' = 'set-pw';
SELECT * FROM orders /*+ OPTIONS('properties.ssl.keystore.password' = 'hint-pw') */;
-- old: 'properties.ssl.truststore.password' = 'comment-pw'
"""


def test_mask_sql_masks_secret_pairs_everywhere_and_keeps_the_rest() -> None:
    masked = mask_sql(DDL)
    for secret in ("p''w", "kp1", "bob:pw2", "set-pw", "hint-pw", "comment-pw"):
        assert secret not in masked
    expected = (
        DDL.replace("password=\"p''w\"", f'password="{MASK}"')
        .replace("'kp1'", f"'{MASK}'")
        .replace("'bob:pw2'", f"'{MASK}'")
        .replace("'set-pw'", f"'{MASK}'")
        .replace("'hint-pw'", f"'{MASK}'")
        .replace("'comment-pw'", f"'{MASK}'")
    )
    assert masked == expected


@pytest.mark.parametrize("key", SECRET_KEYS)
def test_mask_sql_masks_the_value_of_every_secret_key(key: str) -> None:
    assert mask_sql(f"SET '{key}' = 'value-1';") == f"SET '{key}' = '{MASK}';"


def test_mask_sql_without_secrets_is_identical() -> None:
    sql = "SELECT 'a' = 'b', \"password\" FROM t -- don't\n/* x */ WHERE k = 'password';"
    assert mask_sql(sql) == sql


def test_mask_sql_falls_back_when_the_tokenizer_rejects_the_text() -> None:
    assert mask_sql("WITH ('connector' = 'kafka', 'password' = 'unterminated") == (
        f"WITH ('connector' = 'kafka', 'password' = '{MASK}"
    )
    assert mask_sql("SET 'token' = 'abc'; SELECT 'open") == f"SET 'token' = '{MASK}'; SELECT 'open"


def test_mask_text_replaces_every_known_secret() -> None:
    text = "connecting with pw=hunter2 and key hunter2-extended, user bob"
    assert (
        mask_text(text, ["hunter2", "hunter2-extended", ""])
        == f"connecting with pw={MASK} and key {MASK}, user bob"
    )
    assert mask_text(text, []) == text


@pytest.fixture
def logger() -> Iterator[tuple[logging.Logger, io.StringIO, SecretMaskingFilter]]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    masking = SecretMaskingFilter(["hunter2"])
    handler.addFilter(masking)
    log = logging.getLogger("test_secrets.masking")
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False
    yield log, stream, masking
    log.removeHandler(handler)


def test_filter_masks_messages_args_and_child_loggers(
    logger: tuple[logging.Logger, io.StringIO, SecretMaskingFilter],
) -> None:
    log, stream, masking = logger
    log.info("login with %s", "hunter2")
    log.getChild("reader").warning("password is hunter2")
    masking.add("s3cr3t")
    log.info("config %r", {"sasl.password": "s3cr3t"})
    assert stream.getvalue() == (
        f"INFO login with {MASK}\nWARNING password is {MASK}\nINFO config {{'sasl.password': '{MASK}'}}\n"
    )


def test_filter_masks_exception_text(logger: tuple[logging.Logger, io.StringIO, SecretMaskingFilter]) -> None:
    log, stream, _ = logger
    try:
        raise ValueError("bad credentials hunter2")
    except ValueError:
        log.exception("failed")
    assert "hunter2" not in stream.getvalue()
    assert f"ValueError: bad credentials {MASK}" in stream.getvalue()


def test_filter_survives_a_bad_format_string(
    logger: tuple[logging.Logger, io.StringIO, SecretMaskingFilter],
) -> None:
    log, stream, _ = logger
    log.info("%d items for hunter2", "not-a-number")
    assert "hunter2" not in stream.getvalue()
