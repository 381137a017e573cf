"""Nexmark's benchmark events in Python, as its Java generator makes them, and a Kafka producer for them.

`events(count, config)` yields the JSON objects of Nexmark's Kafka table (queries/ddl_kafka.sql), `produce` writes
them to a topic. With the same `NexmarkConfig` the events equal Java's NexmarkGenerator's, field for field,
when the JVM's SplittableRandom.defaultGen starts at `config.seed` (see splittable_random.DefaultGen).
"""

from __future__ import annotations

from connector.dev.nexmark.generator import Event, NexmarkConfig, events
from connector.dev.nexmark.produce import produce, to_json

__all__ = ["Event", "NexmarkConfig", "events", "produce", "to_json"]
