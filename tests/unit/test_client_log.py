"""librdkafka's log, rate-limited: a condition is shown once per interval, its repeats are counted."""

from __future__ import annotations

import logging

import pytest

from connector.connectors.kafka.client_log import OncePerInterval, RetriedByTheClient


def record(level: int, message: str) -> logging.LogRecord:
    fac, name, text = "FAIL", "app-reader#consumer-1", message
    return logging.LogRecord("kafka_sql.librdkafka", level, __file__, 1, "%s [%s] %s", (fac, name, text), None)


def test_a_condition_is_shown_once_per_interval_and_its_repeats_are_counted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("KAFKA_SQL_DEBUG", raising=False)
    clock = [100.0]
    monkeypatch.setattr("connector.connectors.kafka.client_log.time.monotonic", lambda: clock[0])
    limit = OncePerInterval(interval=30)
    refused = "127.0.0.1:{0}/bootstrap: Connect to ipv4#127.0.0.1:{0} failed: Connection refused (after {1}ms)"

    assert limit.filter(record(logging.ERROR, refused.format(9092, 0)))
    repeats = [record(logging.ERROR, refused.format(9092, ms)) for ms in (1, 2, 3)]
    assert not any(limit.filter(r) for r in repeats)  # the numbers differ; the condition is the same
    assert {r.levelno for r in repeats} == {logging.DEBUG}
    assert limit.filter(record(logging.ERROR, "Disconnected: connection reset by peer"))  # another condition
    assert limit.filter(record(logging.INFO, refused.format(9092, 0)))  # below WARNING: the level decides

    clock[0] += 31
    shown = record(logging.ERROR, refused.format(9092, 5))
    assert limit.filter(shown)
    assert shown.getMessage().endswith("(3 more like it in the last 30 s)")


def test_kafka_sql_debug_shows_every_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAFKA_SQL_DEBUG", "1")
    limit = OncePerInterval()
    assert all(limit.filter(record(logging.ERROR, "Connect failed")) for _ in range(3))


def test_a_start_up_condition_librdkafka_retries_is_info_and_others_keep_their_level() -> None:
    demote = RetriedByTheClient()
    pid = record(
        logging.WARNING,
        "Failed to acquire idempotence PID from broker 127.0.0.1:9092/1: "
        "Broker: Coordinator load in progress: retrying",
    )
    assert demote.filter(pid)
    assert (pid.levelno, pid.levelname) == (logging.INFO, "INFO")
    refused = record(logging.ERROR, "Connect to ipv4#127.0.0.1:9092 failed: Connection refused")
    assert demote.filter(refused)
    assert refused.levelno == logging.ERROR
