"""Options several connectors declare with one meaning (Flink's FactoryUtil): declared once here, listed by each
connector that takes them."""

from __future__ import annotations

from connector.options.declarations import ConfigOption, at_least
from connector.options.types import INT

SCAN_PARALLELISM = ConfigOption("scan.parallelism", INT, "Parallelism of the source.", constraint=at_least(1))
SINK_PARALLELISM = ConfigOption(
    "sink.parallelism", INT, "Parallelism of the sink; the upstream parallelism by default.", constraint=at_least(1)
)
