"""Rows as JSON text, for the Python stateful operators (normalize, top_n, temporal): one string column carries a
row of any type through `applyInPandasWithState` and its state, and is read back into the row's columns after."""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import BinaryType, StructField, StructType

ROW = "__row"
STATE = StructType([StructField("state", BinaryType())])  # an operator's own state, one pickled value per key
# Every digit of TIMESTAMP(9) and of time zone offsets survives the text; NULL fields are written.
_JSON = {
    "timestampFormat": "yyyy-MM-dd'T'HH:mm:ss.SSSSSSSSSXXX",
    "timestampNTZFormat": "yyyy-MM-dd'T'HH:mm:ss.SSSSSSSSS",
    "ignoreNullFields": "false",
}


def row_text(columns: Sequence[str]) -> Column:
    """The columns (of the frame it is selected from) as one JSON text."""
    return F.to_json(F.struct(*[F.col(f"`{c}`") for c in columns]), _JSON)


def row_columns(
    text: Column, frame: DataFrame, columns: Sequence[str], names: Sequence[str] | None = None
) -> list[Column]:
    """The `columns` of `frame` read back from `text` (`row_text` of them), named `names` (default: as they were)."""
    row = F.from_json(text, StructType([frame.schema[c] for c in columns]), _JSON)
    return [row.getField(c).alias(n) for c, n in zip(columns, names or columns, strict=True)]


def read_json(text: Column, schema: StructType) -> Column:
    """A struct of `schema` read from JSON text written as `row_text` writes it (timestamps to the nanosecond)."""
    return F.from_json(text, schema, _JSON)
