"""Formats Flink has that kafka-sql declares but cannot run yet: a table using one gets 'not supported yet'."""

from __future__ import annotations

from connector.options.factory import Format

FORMATS = (
    Format("protobuf", "Protocol Buffers."),
)
