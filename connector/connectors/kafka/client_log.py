"""librdkafka's log through Python logging, one line per condition per interval.

Left alone, every Kafka client prints each event to stderr: a 35 s broker outage gave 1,000-1,600 lines of
"Connect to ipv4#... failed" from the readers, the planner, the committer and the producers. Each client the
project makes logs to the `kafka_sql.librdkafka` logger instead (`logged`), where a condition (the message
with its numbers blanked) is shown once per `INTERVAL_SECONDS`; repeats in between go down to DEBUG, with their
count on the next line shown. KAFKA_SQL_DEBUG=1 shows them all. A few conditions that librdkafka retries by itself,
and that a healthy broker shows for its first seconds, are INFO (`RetriedByTheClient`).
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Mapping
from typing import Any

INTERVAL_SECONDS = 30.0
_NUMBERS = re.compile(r"\d+")


class OncePerInterval(logging.Filter):
    """Lets a WARNING-or-worse record of a condition through once per interval; demotes its repeats to DEBUG."""

    def __init__(self, interval: float = INTERVAL_SECONDS) -> None:
        super().__init__()
        self.interval = interval
        self._shown: dict[str, tuple[float, int]] = {}  # condition -> (when last shown, repeats since)

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING or os.environ.get("KAFKA_SQL_DEBUG"):
            return True
        condition = _NUMBERS.sub("#", record.getMessage())
        now = time.monotonic()
        shown, repeats = self._shown.get(condition, (None, 0))
        if shown is not None and now - shown < self.interval:
            self._shown[condition] = (shown, repeats + 1)
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
            return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)
        self._shown[condition] = (now, 0)
        if repeats:
            record.msg = f"{record.msg} ({repeats} more like it in the last {self.interval:.0f} s)"
        return True


# librdkafka's words for conditions it retries by itself that a broker shows while it starts: the transaction
# coordinator still loading its partitions ("Failed to acquire idempotence PID ...: Coordinator load in progress:
# retrying", the first `kafka-sql produce` after `kafka-sql broker start`). Should one last, the request's own
# timeout fails with its error.
RETRIED_BY_THE_CLIENT = ("Coordinator load in progress: retrying",)


class RetriedByTheClient(logging.Filter):
    """Demotes a warning about a start-up condition librdkafka retries by itself to INFO."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.WARNING and any(words in record.getMessage() for words in RETRIED_BY_THE_CLIENT):
            record.levelno, record.levelname = logging.INFO, "INFO"
        return True


LOGGER = logging.getLogger("kafka_sql.librdkafka")
LOGGER.addFilter(RetriedByTheClient())
LOGGER.addFilter(OncePerInterval())


def logged(config: Mapping[str, Any]) -> dict[str, Any]:
    """`config` for a confluent-kafka client that logs through `LOGGER` (served by its poll / consume calls)."""
    return {**config, "logger": LOGGER}
