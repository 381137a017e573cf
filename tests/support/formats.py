"""Tables declared in Flink SQL and loaded by the real loader (`table`), and Kafka records decoded and encoded by their
formats in Spark: static DataFrames shaped like the flink-kafka source, decoded by `kafka.reading.kafka_rows` (the code
path of the streaming source), encoded by `formats.encode`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

import pytest
from pyspark.errors import PySparkException
from pyspark.sql import Observation, Row
from pyspark.sql import functions as F

from connector.catalog.loader import load_text
from connector.catalog.model import Table
from connector.connectors.kafka.reading import kafka_rows
from connector.connectors.kafka.records import SCHEMA
from connector.formats.payload import PayloadFormat, encode

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# The options of a Kafka source table, which `table` adds to the given ones.
KAFKA = {
    "connector": "kafka",
    "topic": "orders",
    "properties.bootstrap.servers": "localhost:9092",
    "scan.startup.mode": "earliest-offset",
}
Payload = bytes | str | None


def table(columns: str, options: Mapping[str, str], extra: str = "", base: Mapping[str, str] = KAFKA) -> Table:
    """Table `orders` of `columns` (then `extra`, e.g. a primary key) with `base`'s options and `options`."""
    ddl = f"CREATE TABLE orders ({columns}{extra}) WITH ({with_clause({**base, **options})});"
    loaded = load_text(ddl, "orders.sql")
    found = loaded.pipeline.table("orders")
    assert found is not None
    return found


def _quoted(text: str) -> str:
    return text.replace("'", "''")


def with_clause(options: Mapping[str, str]) -> str:
    """The options of a WITH clause, quoted."""
    return ", ".join(f"'{k}' = '{_quoted(v)}'" for k, v in options.items())


def _bytes(payload: Payload) -> bytes | None:
    return payload.encode() if isinstance(payload, str) else payload


def decode_rows(
    spark: SparkSession,
    tbl: Table,
    records: Sequence[Payload | tuple[Payload, Payload]],
    headers: Sequence[tuple[str, bytes | None]] = (),
) -> tuple[list[Row], int]:
    """Rows of `records` (values, or (key, value) pairs) at offsets 0, 1, ... and the malformed count."""
    rows = []
    for offset, record in enumerate(records):
        key, value = record if isinstance(record, tuple) else (None, record)
        stamp = datetime(2024, 5, 6, 7, 8, 9, 123000, tzinfo=timezone.utc)
        rows.append((_bytes(key), _bytes(value), "orders", 0, offset, stamp, "CreateTime", list(headers), 3))
    observation = Observation("malformed")
    frame = kafka_rows(spark.createDataFrame(rows, SCHEMA), tbl, observation)
    collected = frame.collect()
    return collected, int(observation.get["records"])


def values(rows: Sequence[Row], *names: str) -> list[tuple[Any, ...]]:
    """The `names` columns of `rows`, as tuples."""
    return [tuple(row[n] for n in names) for row in rows]


def failure_of(spark: SparkSession, tbl: Table, records: Sequence[Payload | tuple[Payload, Payload]]) -> str:
    """The message of the error decoding `records` raises in the query (it must raise one)."""
    with pytest.raises(PySparkException) as error:
        decode_rows(spark, tbl, records)
    message = str(error.value)
    assert "USER_RAISED_EXCEPTION" in message
    return message.split("] ", 1)[1].split(" SQLSTATE")[0]


def encoded(spark: SparkSession, tbl: Table, role: str, rows: Sequence[tuple[Any, ...]], ddl: str) -> list[Any]:
    """`rows` (of Spark DDL `ddl`) encoded by `tbl`'s `role` format ("key" or "value")."""
    fmt = PayloadFormat.of(tbl, role)
    assert fmt is not None
    frame = spark.createDataFrame(list(rows), ddl)
    column = encode(fmt, {name: F.col(name) for name in frame.columns})
    return [row[0] for row in frame.select(column).collect()]
