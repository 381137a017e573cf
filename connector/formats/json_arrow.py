"""JSON objects decoded into Arrow columns by the Kafka source's reader, for the tables whose value is `json`
and whose fields are all of the types Arrow's JSON parser reads exactly as Flink's JSON format does.

Why: Spark's `from_json` (and the lenient conversions after it) took about half of a JSON pipeline's JVM time;
Arrow's parser, in the executor's Python worker that already holds the records, reads a batch of 10,000 records
of 210 bytes in about 10 ms, and the JVM then gets the fields instead of the payloads.

The parse is a shortcut, never a second set of rules: a batch is decoded here only when every record in it is
a plain JSON object that Arrow parses without a single conversion (a number for a BIGINT, INT or DOUBLE
field, a string for a STRING field, true/false for a BOOLEAN field, or null or nothing). Anything else
(a string "12" for an INT, a top-level array, `null`, invalid UTF-8, a NaN literal, whitespace around the
object, a field given twice...) leaves the whole batch to the Spark-side decoding with Flink's lenient
rules and its errors naming topic, partition and offset (`connector.formats.json`). Both paths give the
same rows for the records this one accepts: that is what the tests check, record by record.

Kept free of Spark and sqlglot imports: it runs in every executor Python worker.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json

# Spark type name (simpleString) -> the Arrow type the parser converts JSON values to without leniency.
ARROW_TYPES: dict[str, pa.DataType] = {
    "bigint": pa.int64(),
    "int": pa.int32(),
    "double": pa.float64(),
    "string": pa.string(),
    "boolean": pa.bool_(),
}
_OPEN, _CLOSE = ord("{"), ord("}")


def fields_option(fields: Sequence[tuple[str, str]]) -> str:
    """The source option naming the fields to decode: [[name, Spark type name], ...] as JSON."""
    return json.dumps([list(f) for f in fields])


def arrow_type(fields_json: str) -> pa.StructType:
    """The struct of decoded fields named by `fields_option`'s text."""
    return pa.struct([pa.field(name, ARROW_TYPES[type_name]) for name, type_name in json.loads(fields_json)])


def decode(values: list[bytes], sizes: np.ndarray, struct: pa.StructType) -> pa.StructArray | None:
    """The fields of `values` (JSON payloads, in order), or None when the batch needs Flink's lenient rules (see
    the module's docstring). `sizes` are the payloads' lengths (0: NULL)."""
    count = len(values)
    if not count or not sizes.all():  # a NULL or empty payload: the Spark side decides what it is
        return None
    text = b"\n".join(values)
    data = np.frombuffer(text, dtype=np.uint8)
    ends = np.cumsum(sizes, dtype=np.int64) + np.arange(count, dtype=np.int64)  # one past each payload
    if not ((data[ends - sizes] == _OPEN).all() and (data[ends - 1] == _CLOSE).all()):
        return None  # not an object, or with whitespace around it (Arrow's parser would crash on `null`)
    # Arrow's parser reads the objects one after the other, whitespace (line breaks too) between and inside them.
    # As each payload starts with '{' after a '}', no value can span two payloads (inside an array or object a
    # comma would have to come between); so each payload holds one object iff there are as many rows as payloads.
    try:  # Arrow keeps invalid UTF-8 in strings; Flink's parser fails on it. Checked here for every byte at once.
        _one_string(text).validate(full=True)
    except pa.ArrowInvalid:
        return None
    options = pa_json.ParseOptions(explicit_schema=pa.schema(list(struct)), unexpected_field_behavior="ignore")
    try:
        table = pa_json.read_json(
            pa.BufferReader(text),
            read_options=pa_json.ReadOptions(use_threads=False, block_size=len(text) + 1),
            parse_options=options,
        )
    except pa.ArrowInvalid:  # a syntax error, a value of another JSON type, a field given twice, ...
        return None
    if table.num_rows != count:  # two objects in one payload
        return None
    columns = [table.column(f.name).combine_chunks() for f in struct]
    for column in columns:
        if pa.types.is_floating(column.type) and pc.any(pc.invert(pc.is_finite(column))).as_py():
            return None  # NaN / Infinity literals: Arrow accepts them, Flink's parser refuses them
    return pa.StructArray.from_arrays(columns, fields=list(struct))


def _one_string(text: bytes) -> pa.StringArray:
    """`text` as a one-element string array, without copying it."""
    offsets = np.array([0, len(text)], dtype=np.int32)
    return pa.Array.from_buffers(pa.string(), 1, [None, pa.py_buffer(offsets), pa.py_buffer(text)])
