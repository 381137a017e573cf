"""Writing a print table: one line per row on the driver, in Flink's PrintSink format."""

from __future__ import annotations

import math
import sys
from datetime import date, datetime, timezone
from decimal import Decimal
from typing import Any

import numpy as np
from pyspark.sql import DataFrame, Row
from pyspark.sql.streaming import DataStreamWriter, StreamingQuery
from pyspark.sql.types import (
    DataType,
    FloatType,
    MapType,
    StringType,
    StructType,
    TimestampType,
)

from connector.catalog.model import Table
from connector.connectors import registry
from connector.connectors.print.factory import PrintOptions
from connector.connectors.reading import UPDATE_AFTER, UPDATE_BEFORE
from connector.connectors.writing import DELETED, BatchWriter, persisted_columns

# ---------------------------------------------------------------------------------------------------------
# print
# ---------------------------------------------------------------------------------------------------------


def _java_float(value: float, single: bool) -> str:
    """Java's Float/Double.toString: shortest digits, scientific notation outside [1e-3, 1e7)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    number = np.float32(value) if single else np.float64(value)
    if value == 0 or 1e-3 <= abs(value) < 1e7:
        return np.format_float_positional(number, unique=True, trim="0")
    mantissa, exponent = np.format_float_scientific(number, unique=True, trim="0").split("e")
    return f"{mantissa}E{int(exponent)}"


def _java_time(value: datetime) -> str:
    """LocalDateTime.toString: seconds and fraction only when not zero, the fraction in groups of 3."""
    text = value.strftime("%Y-%m-%dT%H:%M")
    if value.second or value.microsecond:
        text += f":{value.second:02d}"
    if value.microsecond:
        text += f".{value.microsecond // 1000:03d}" if value.microsecond % 1000 == 0 else f".{value.microsecond:06d}"
    return text


def _java_instant(value: datetime) -> str:
    """Instant.toString: always seconds, the fraction in groups of 3, 'Z'."""
    utc = value.astimezone(timezone.utc)
    text = utc.strftime("%Y-%m-%dT%H:%M:%S")
    if utc.microsecond:
        text += f".{utc.microsecond // 1000:03d}" if utc.microsecond % 1000 == 0 else f".{utc.microsecond:06d}"
    return text + "Z"


def flink_text(value: Any, data_type: DataType) -> str:
    """A value as Flink's Row.toString prints it (print connector)."""
    if value is None:
        return "null"
    if isinstance(data_type, StructType):
        fields = [flink_text(value[f.name], f.dataType) for f in data_type.fields]
        return f"+I[{', '.join(fields)}]"
    if isinstance(value, list):
        element = getattr(data_type, "elementType", StringType())
        return "[" + ", ".join(flink_text(v, element) for v in value) + "]"
    if isinstance(value, dict):
        assert isinstance(data_type, MapType)
        entries = (f"{flink_text(k, data_type.keyType)}={flink_text(v, data_type.valueType)}" for k, v in value.items())
        return "{" + ", ".join(entries) + "}"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, bytes | bytearray):
        return "[" + ", ".join(str(b - 256 if b > 127 else b) for b in value) + "]"
    if isinstance(value, float):
        return _java_float(value, isinstance(data_type, FloatType))
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, datetime):
        return _java_instant(value) if isinstance(data_type, TimestampType) else _java_time(value)
    if isinstance(value, date):
        return value.isoformat()
    return str(value)


def start(
    frame: DataFrame, table: Table, writer: DataStreamWriter, output_mode: str, checkpoint: str
) -> StreamingQuery:
    return writer.foreachBatch(batch_writer(frame, table, output_mode, checkpoint)).start()


def batch_writer(frame: DataFrame, table: Table, output_mode: str, checkpoint: str) -> BatchWriter:
    """Update mode carries no before-image, so every row is `+U` there; deletes are `-D`; a CDC format's rows carry
    their kinds (`-U` the old row of an update, `+U` its new row)."""
    return PrintBatch(table, frame.columns, "+U" if output_mode == "update" else "+I")


class PrintBatch:
    """foreachBatch function of a print sink: one line per row, on the driver, in Flink's format."""

    def __init__(self, table: Table, columns: list[str], kind: str) -> None:
        resolved = registry.resolve(table)
        self.kind = kind
        identifier = resolved.get(PrintOptions.PRINT_IDENTIFIER) or ""
        self.prefix = f"{identifier}> " if identifier else ""
        standard_error = resolved.get(PrintOptions.STANDARD_ERROR)
        self.stderr = standard_error is True
        self.columns = [c.name for c in persisted_columns(table)]
        self.deletes = DELETED in columns
        self.kinds = [c for c in (UPDATE_BEFORE, UPDATE_AFTER) if c in columns]

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        selected = batch.select(*self.columns, *([DELETED] if self.deletes else []), *self.kinds)
        types = {f.name: f.dataType for f in selected.schema.fields}
        out = sys.stderr if self.stderr else sys.stdout
        # One job for the batch: toLocalIterator runs one per partition, and the output of a stateful operator has
        # 'spark.sql.shuffle.partitions' of them (200 by default in a user's session: 1-2 s per printed row).
        for row in selected.collect():
            print(self.line(row, types), file=out)
        out.flush()

    def line(self, row: Row, types: dict[str, DataType]) -> str:
        kind = "-D" if self.deletes and row[DELETED] else self.kind
        if self.kinds and row[UPDATE_BEFORE]:
            kind = "-U"
        elif self.kinds and row[UPDATE_AFTER]:
            kind = "+U"
        fields = ", ".join(flink_text(row[name], types[name]) for name in self.columns)
        return f"{self.prefix}{kind}[{fields}]"
