"""Formats Flink has that kafka-sql declares but cannot run yet: a table using one gets 'not supported yet'."""

from __future__ import annotations

from connector.options.factory import Format

FORMATS = (
    Format(
        "protobuf",
        "Protocol Buffers.",
        refusal=(
            "Flink's protobuf format decodes with a compiled Java class ('protobuf.message-class-name'), and "
            "Spark's protobuf module (spark-protobuf) is not served for Spark 4 here; decode the bytes with a "
            "Python function (CREATE FUNCTION ... LANGUAGE PYTHON) over the 'raw' format instead."
        ),
    ),
)
