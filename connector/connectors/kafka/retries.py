"""Retrying Kafka requests through broker restarts and leader changes, for a bounded time.

Java clients retry what Kafka calls retriable (a leader moving, a fenced leader epoch, a coordinator still
loading, a broker unreachable for a while) until `default.api.timeout.ms`; librdkafka's admin requests fail at
once. The planner's requests go through `retrying`, so a pipeline lives through a broker restart, as a Flink job
does, and fails with the last error once 'scan.retry-timeout' has passed. A broker's refusal (a failed SASL
authentication or TLS handshake) is not transient: `refusal` says what it means, and retrying stops.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import AdminClient, ClusterMetadata, TopicMetadata

from connector.connectors.kafka.client_log import LOGGER
from connector.errors import KafkaSqlError

log = logging.getLogger(__name__)

T = TypeVar("T")
_Client = AdminClient | Producer
# How often a metadata request looks for a refusal while it waits.
REFUSAL_CHECK_SECONDS = 0.5

# Codes that are transient although librdkafka does not flag them retriable on every path (admin results).
_TRANSIENT = frozenset(
    {
        KafkaError._TRANSPORT,
        KafkaError._ALL_BROKERS_DOWN,
        KafkaError._TIMED_OUT,
        KafkaError._WAIT_COORD,
        KafkaError._NOENT,  # admin ListOffsets: "No leaders found" while the partitions' leaders are elected
        KafkaError.REQUEST_TIMED_OUT,
        KafkaError.NETWORK_EXCEPTION,
        KafkaError.LEADER_NOT_AVAILABLE,
        KafkaError.NOT_LEADER_FOR_PARTITION,
        KafkaError.FENCED_LEADER_EPOCH,
        KafkaError.UNKNOWN_LEADER_EPOCH,
        KafkaError.REPLICA_NOT_AVAILABLE,
        KafkaError.OFFSET_NOT_AVAILABLE,
        KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
        KafkaError.COORDINATOR_NOT_AVAILABLE,
        KafkaError.NOT_COORDINATOR,
        KafkaError.KAFKA_STORAGE_ERROR,
    }
)
FIRST_BACKOFF_SECONDS = 0.5
MAX_BACKOFF_SECONDS = 5.0


def is_transient(error: object) -> bool:
    """Whether a Kafka error (a KafkaError, or a KafkaException carrying one) may go away when retried."""
    if isinstance(error, KafkaException):
        error = error.args[0] if error.args else None
    if not isinstance(error, KafkaError) or error.fatal():
        return False
    return bool(error.retriable()) or error.code() in _TRANSIENT


def raise_transient_topic_error(topics: Mapping[str, TopicMetadata], wanted: Callable[[str], bool]) -> None:
    """Raise a wanted topic's transient metadata error (no leader while a broker restarts) as a KafkaException, for
    `retrying` to ask again: such a topic is not missing. Other topic errors are answers the caller judges."""
    for name, meta in topics.items():
        if meta.error is not None and is_transient(meta.error) and wanted(name):
            raise KafkaException(meta.error)


def retrying(
    request: Callable[[], T], what: str, timeout_seconds: float, before_retry: Callable[[], None] | None = None
) -> T:
    """`request()`, called again with exponential backoff while it raises a transient KafkaException, until
    `timeout_seconds` have passed; then its last exception propagates. `before_retry` runs before each new
    attempt: a client whose cached metadata is stale (a fenced leader epoch after a broker restart) keeps failing,
    so the planner replaces it there."""
    deadline = time.monotonic() + timeout_seconds
    backoff = FIRST_BACKOFF_SECONDS
    failing_since: float | None = None
    while True:
        try:
            result = request()
        except KafkaException as error:
            if not is_transient(error) or time.monotonic() + backoff > deadline:
                raise
            if failing_since is None:
                failing_since = time.monotonic()
                log.warning("Kafka %s failed, retrying for up to %.0f s: %s", what, timeout_seconds, error)
            time.sleep(backoff)
            backoff = min(backoff * 2, MAX_BACKOFF_SECONDS)
            if before_retry is not None:
                before_retry()
            continue
        if failing_since is not None:
            log.warning("Kafka %s succeeded after %.1f s of retries", what, time.monotonic() - failing_since)
        return result


# librdkafka's words for a TLS client at a PLAINTEXT listener (a transport error, though no retry can help).
_TLS_AT_PLAINTEXT = "connecting to a PLAINTEXT broker listener?"


def is_refusal(error: KafkaError) -> bool:
    """A failed SASL authentication or TLS handshake; with TLS 1.3 a broker's alert about the client's certificate
    arrives after the handshake, as a transport error, and so does a TLS client's handshake with a PLAINTEXT
    listener."""
    text = error.str()
    return error.code() in (KafkaError._AUTHENTICATION, KafkaError._SSL) or (
        error.code() == KafkaError._TRANSPORT and ("SSL alert number" in text or _TLS_AT_PLAINTEXT in text)
    )


def refusal(error: KafkaError, properties: Mapping[str, str], servers: str) -> str:
    """What a broker's refusal (a failed SASL authentication or TLS handshake) means, in the options' terms."""
    text = re.sub(r"^\w+://\S+: ", "", error.str())  # librdkafka's "sasl_ssl://host:port/bootstrap: "
    text = re.sub(r", verify that ssl\.ca\.location is correctly configured.*?package\)", "", text)
    protocol = properties.get("security.protocol", "PLAINTEXT").upper()
    if _TLS_AT_PLAINTEXT in text or (error.code() == KafkaError._AUTHENTICATION and "supported mechanisms:  " in text):
        return (f"The listener at {servers} does not speak 'properties.security.protocol' = '{protocol}': "
                f"{text}. It is a PLAINTEXT{'' if 'SSL' in protocol else ' or SSL'} listener; set the protocol "
                "its port serves (PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL).")
    if error.code() != KafkaError._AUTHENTICATION:
        hint = "Check 'properties.ssl.*'"
        if "certificate verify failed" in text:
            hint = ("The broker's certificate is not signed by a CA of the trust store ('properties.ssl.truststore.*') "
                    "or does not name the host ('properties.ssl.endpoint.identification.algorithm')")
        elif "alert bad certificate" in text or "alert certificate required" in text:
            hint = ("The broker refused the client's certificate: a listener that requires one needs "
                    "'properties.ssl.keystore.*' signed by a CA the broker trusts")
        return f"The TLS handshake failed at {servers}: {text}. {hint}."
    mechanism = properties.get("sasl.mechanism")
    user, client = properties.get("sasl.username"), properties.get("sasl.oauthbearer.client.id")
    who = f" for user '{user}'" if user else f" for client '{client}'" if client else ""
    who += f" ({mechanism})" if who and mechanism else ""
    return (f"SASL authentication failed{who} at {servers}: {text}. Check the security options "
            "('properties.security.protocol', 'properties.sasl.*').")


# A client whose protocol lacks what the listener expects: a TLS listener closes a client without TLS at its first
# request (librdkafka's state APIVERSION_QUERY); a SASL listener closes a client without SASL at its first request
# after ApiVersions (state UP). A broker going down closes each connection once and then refuses new ones, so
# this many closes in a row, with nothing else failing between them, are the protocol, not an outage.
_CLOSED_AT_REQUEST = re.compile(r"connection closed by peer: receive 0 after POLLIN \(after \d+ms in state (\w+)\)")
PROTOCOL_MISMATCH_CLOSES = 5


class Refused(KafkaSqlError):
    """The broker refused the client; the message says what failed (`refusal`)."""


class Refusals:
    """A client's `error_cb` that keeps the broker's first refusal, in the options' terms, and metadata requests
    that end as soon as one arrives (librdkafka reports a refused authentication or TLS handshake only there, and
    its requests would wait out their timeout)."""

    def __init__(self, properties: Mapping[str, str], servers: str) -> None:
        self.properties, self.servers = properties, servers
        self.message: str | None = None
        self._closes = 0  # connections the listener closed at a request, in a row (`log`)

    def __call__(self, error: KafkaError) -> None:
        if self.message is None and is_refusal(error):
            self.message = refusal(error, self.properties, self.servers)

    def client_config(self, config: Mapping[str, Any]) -> dict[str, Any]:
        """`config` for a client whose errors and log this watches (its log still goes to `client_log.LOGGER`)."""
        return {**config, "error_cb": self, "logger": self}

    def log(self, level: int, text: str, *args: Any) -> None:
        """librdkafka's log line (the client's `logger`): passed on, and watched for a listener that closes every
        connection at its first request because the client does not speak its protocol."""
        LOGGER.log(level, text, *args)
        line = text % args if args else text
        if "Disconnected" not in line and "failed" not in line.lower():
            return
        closed = _CLOSED_AT_REQUEST.search(line)
        protocol = self.properties.get("security.protocol", "PLAINTEXT").upper()
        expects = None
        if closed is not None and closed.group(1) == "APIVERSION_QUERY" and "SSL" not in protocol:
            expects = "TLS (SSL or SASL_SSL)"
        elif closed is not None and closed.group(1) == "UP" and "SASL" not in protocol:
            expects = "SASL (SASL_PLAINTEXT or SASL_SSL)"
        self._closes = self._closes + 1 if expects else 0
        if expects and self._closes >= PROTOCOL_MISMATCH_CLOSES and self.message is None:
            self.message = (
                f"The listener at {self.servers} closed each of {self._closes} connections at the client's first "
                f"request: it expects {expects}, not 'properties.security.protocol' = '{protocol}'. Set the protocol "
                "its port serves (PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL) with the options that go with it."
            )

    def list_topics(self, client: _Client, timeout: float, topic: str | None = None) -> ClusterMetadata:
        """`client.list_topics`, asked in slices; Refused as soon as the broker refused the client."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                return client.list_topics(topic, timeout=REFUSAL_CHECK_SECONDS)
            except KafkaException:
                client.poll(0)  # serves the error callback
                if self.message is not None:
                    raise Refused(self.message) from None
                if time.monotonic() >= deadline:
                    raise
