"""The `blackhole` connector's factory."""

from __future__ import annotations

from connector.options.factory import Factory
from connector.quality.options import QUALITY_OPTIONS

FACTORY = Factory(
    "blackhole",
    "Swallows every row; for tests and benchmarks.",
    options=QUALITY_OPTIONS,
    writer="connector.connectors.blackhole.writing",
    updates="all",
)
