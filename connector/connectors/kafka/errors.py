"""The kafka source's errors meant for the user; a module of their own because every layer raises them.

Spark wraps them in its own exception, whose message contains `KafkaSourceError: <message>` or
`DataLossError: <message>` (the runner shows that message without a traceback).
"""

from __future__ import annotations

from connector.errors import KafkaSqlError


class KafkaSourceError(KafkaSqlError):
    """A problem the user must act on (bad option, missing committed offset, lost data); no traceback."""


class DataLossError(KafkaSourceError):
    """Offsets the query must read no longer exist in Kafka (retention, deleted or recreated topic)."""
