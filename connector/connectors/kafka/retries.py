"""Retrying Kafka requests through broker restarts and leader changes, for a bounded time.

Java clients retry what Kafka calls retriable (a leader moving, a fenced leader epoch, a coordinator still
loading, a broker unreachable for a while) until `default.api.timeout.ms`; librdkafka's admin requests fail at
once. The planner's requests go through `retrying`, so a pipeline lives through a broker restart, as a Flink job
does, and fails with the last error once 'scan.retry-timeout' has passed.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TypeVar

from confluent_kafka import KafkaError, KafkaException

log = logging.getLogger(__name__)

T = TypeVar("T")

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
