"""The `flink-kafka` source's schema, and consumed Kafka records turned into Arrow batches of it.

This runs in executors for every record read, so arrays are built from buffers with the least work per
record (see `RecordBuffer` and `_record_batch`).
"""

from __future__ import annotations

import functools
import operator
from itertools import repeat
from operator import itemgetter
from typing import cast

import numpy as np
import pyarrow as pa
from confluent_kafka import TIMESTAMP_CREATE_TIME, TIMESTAMP_LOG_APPEND_TIME, TIMESTAMP_NOT_AVAILABLE, Message
from pyspark.sql.pandas.types import from_arrow_type, to_arrow_schema
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from connector.connectors import END_OF_INPUT_OFFSET
from connector.connectors.kafka.settings import OPTIONAL_COLUMNS
from connector.formats import json_arrow

SCHEMA = StructType(
    [
        StructField("key", BinaryType()),
        StructField("value", BinaryType()),
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("offset", LongType()),
        StructField("timestamp", TimestampType()),
        StructField("timestamp_type", StringType()),
        StructField(
            "headers",
            ArrayType(StructType([StructField("key", StringType()), StructField("value", BinaryType())])),
        ),
        StructField("leader_epoch", IntegerType()),
    ]
)
ARROW_SCHEMA = to_arrow_schema(SCHEMA, timezone="UTC")
# The column after SCHEMA's when the reader decodes the value's JSON fields (`connector.formats.json_arrow`): in
# the rows where it is not NULL, `value` is empty (the payload was decoded, not copied into the JVM).
DECODED_VALUE = "__value_fields"
TIMESTAMP_TYPES = {TIMESTAMP_CREATE_TIME: "CreateTime", TIMESTAMP_LOG_APPEND_TIME: "LogAppendTime"}
# One Arrow batch holds at most this much, so an executor's memory does not grow with the backlog.
MAX_BATCH_RECORDS = 10_000
MAX_BATCH_BYTES = 4 * 1024 * 1024
# A consumed record's headers (None when it has none).
RecordHeaders = list[tuple[str, bytes | None]] | None


def source_schema(value_json_fields: str | None, columns: tuple[str, ...] | None = None) -> StructType:
    """The source's schema: SCHEMA (of its OPTIONAL_COLUMNS only `columns`, if given), and the decoded value fields
    when the reader decodes them."""
    kept = [f for f in SCHEMA.fields if columns is None or f.name not in OPTIONAL_COLUMNS or f.name in columns]
    if value_json_fields is None:
        return StructType(kept)
    decoded = cast(StructType, from_arrow_type(json_arrow.arrow_type(value_json_fields)))
    return StructType([*kept, StructField(DECODED_VALUE, decoded)])


@functools.cache
def _arrow_schema(value_json_fields: str | None, columns: tuple[str, ...] | None) -> pa.Schema:
    return to_arrow_schema(source_schema(value_json_fields, columns), timezone="UTC")


class RecordBuffer:
    """Records read so far, turned into Arrow RecordBatches of the source's schema and bounded size."""

    def __init__(
        self, topic: str, partition: int, value_json_fields: str | None = None, columns: tuple[str, ...] | None = None
    ) -> None:
        self.topic = topic
        self.partition = partition
        self.decoded = json_arrow.arrow_type(value_json_fields) if value_json_fields is not None else None
        self.schema = _arrow_schema(value_json_fields, columns)
        self.messages: list[Message] = []
        self.sizes: list[np.ndarray] = []  # value sizes of `messages`, one array per extend()
        self.nbytes = 0  # value bytes held
        self.read_records = 0  # for the average record size: how many records to ask the consumer for
        self.read_bytes = 0

    def __len__(self) -> int:
        return len(self.messages)

    def room(self, remaining: int) -> int:
        """How many records to consume next: what fills the batch by count and, at the average size of the
        records read so far, by bytes (large records would otherwise pile up in memory before a flush).
        The first request of a range is for one record, to learn the size."""
        wanted = min(MAX_BATCH_RECORDS - len(self.messages), remaining)
        if not self.read_records:
            return 1
        average = max(1, self.read_bytes // self.read_records)
        return max(1, min(wanted, (MAX_BATCH_BYTES - self.nbytes) // average + 1))

    def extend(self, messages: list[Message]) -> None:
        sizes = np.fromiter(map(len, messages), dtype=np.int32, count=len(messages))  # len(Message): its value's
        size = int(sizes.sum())
        self.messages.extend(messages)
        self.sizes.append(sizes)
        self.nbytes += size
        self.read_records += len(messages)
        self.read_bytes += size

    def full(self) -> bool:
        return len(self.messages) >= MAX_BATCH_RECORDS or self.nbytes >= MAX_BATCH_BYTES

    def flush(self) -> pa.RecordBatch:
        """The oldest records, up to MAX_BATCH_RECORDS and about MAX_BATCH_BYTES, as one RecordBatch."""
        sizes = self.sizes[0] if len(self.sizes) == 1 else np.concatenate(self.sizes)
        take = min(len(self.messages), MAX_BATCH_RECORDS)
        if self.nbytes >= MAX_BATCH_BYTES:  # up to the record that reaches the budget
            take = min(take, int(np.searchsorted(np.cumsum(sizes[:take]), MAX_BATCH_BYTES)) + 1)
        chunk, self.messages = self.messages[:take], self.messages[take:]
        self.sizes = [sizes[take:]] if self.messages else []
        self.nbytes -= int(sizes[:take].sum())
        return _record_batch(self.topic, self.partition, chunk, sizes[:take], self.decoded, self.schema)


def _record_batch(
    topic: str,
    partition: int,
    messages: list[Message],
    value_sizes: np.ndarray,
    decoded: pa.StructType | None,
    schema: pa.Schema,
) -> pa.RecordBatch:
    """One RecordBatch of records in offset order from one partition, with the least work per record.

    Per record, only what differs between records is read, one C call each through `map` (key, value,
    timestamp, headers); everything else is built in bulk: topic and partition are constant, offsets are
    a range when they have no gap, and the leader epoch, which never decreases along a partition's log,
    is constant when the first and last record agree. Headers are an empty list when a record has none.

    Arrays are made from buffers (numpy, bytes), never with `pa.array` or `pa.scalar`: those import pandas,
    which costs a worker about 50 MB and a few hundred milliseconds.
    """
    count = len(messages)
    types = ARROW_SCHEMA.types
    first, last = messages[0], messages[-1]
    names = set(schema.names)
    first_offset = cast(int, first.offset())
    if cast(int, last.offset()) - first_offset == count - 1:
        offsets = np.arange(first_offset, first_offset + count, dtype=np.int64)
    else:
        offsets = np.fromiter(map(Message.offset, messages), dtype=np.int64, count=count)
    values = list(map(Message.value, messages))
    fields = json_arrow.decode(cast(list[bytes], values), value_sizes, decoded) if decoded is not None else None
    if fields is not None:  # the payloads are not needed any more: not copied into the JVM
        value_column = _variable(pa.binary(), np.zeros(count, np.int32), b"")
    elif value_sizes.all():  # no null value (a null has size 0): the sizes are known already
        value_column = _variable(pa.binary(), value_sizes, b"".join(cast(list[bytes], values)))
    else:
        value_column = _binaries(values)
    columns = {
        "value": value_column,
        "topic": _repeated(topic.encode(), count),
        "partition": _fixed(types[3], np.full(count, partition, np.int32)),
        "offset": _fixed(types[4], offsets),
    }
    if "key" in names:
        columns["key"] = _binaries(list(map(Message.key, messages)))
    if "timestamp" in names or "timestamp_type" in names:
        stamps = list(map(Message.timestamp, messages))  # (type, epoch ms) pairs
        kinds = np.fromiter(map(itemgetter(0), stamps), dtype=np.int64, count=count)
        micros = np.fromiter(map(itemgetter(1), stamps), dtype=np.int64, count=count) * 1000
        columns["timestamp"] = _fixed(types[5], micros, kinds != TIMESTAMP_NOT_AVAILABLE)
        columns["timestamp_type"] = _timestamp_type_names().take(_fixed(pa.int64(), kinds))
    if "headers" in names:
        columns["headers"] = _headers(cast(list[RecordHeaders], list(map(Message.headers, messages))))
    if "leader_epoch" in names:
        epoch = first.leader_epoch()
        if epoch == last.leader_epoch():
            columns["leader_epoch"] = _fixed(
                types[8], np.full(count, -1 if epoch is None else epoch, np.int32), epoch is not None
            )
        else:
            columns["leader_epoch"] = _int32s(list(map(Message.leader_epoch, messages)))
    if decoded is not None:
        columns[DECODED_VALUE] = fields if fields is not None else pa.nulls(count, decoded)
    return pa.RecordBatch.from_arrays([columns[name] for name in schema.names], schema=schema)


def end_of_input_batch(
    topic: str, partition: int, value_json_fields: str | None = None, columns: tuple[str, ...] | None = None
) -> pa.RecordBatch:
    """The end-of-input row: offset END_OF_INPUT_OFFSET, the partition's topic and partition, NULL elsewhere."""
    schema = _arrow_schema(value_json_fields, columns)
    located = {
        "topic": _repeated(topic.encode(), 1),
        "partition": _fixed(ARROW_SCHEMA.types[3], np.full(1, partition, np.int32)),
        "offset": _fixed(ARROW_SCHEMA.types[4], np.full(1, END_OF_INPUT_OFFSET, np.int64)),
    }
    arrays = [located.get(field.name, pa.nulls(1, field.type)) for field in schema]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _fixed(type_: pa.DataType, values: np.ndarray, valid: np.ndarray | bool = True) -> pa.Array:
    """A fixed-width array over `values`' memory; `valid` is a mask, or True/False for all values."""
    count = len(values)
    if valid is True or (not isinstance(valid, bool) and valid.all()):
        return pa.Array.from_buffers(type_, count, [None, pa.py_buffer(values)], null_count=0)
    if valid is False:
        return pa.nulls(count, type_)
    bitmap = pa.py_buffer(np.packbits(valid, bitorder="little"))
    return pa.Array.from_buffers(type_, count, [bitmap, pa.py_buffer(values)], null_count=count - int(valid.sum()))


def _binaries(values: list[bytes | None]) -> pa.Array:
    """A binary array; None is null."""
    count = len(values)
    try:
        sizes = np.fromiter(map(len, cast(list[bytes], values)), dtype=np.int32, count=count)
    except TypeError:  # len(None): there are nulls
        valid = np.fromiter(map(operator.is_not, values, repeat(None)), dtype=np.bool_, count=count)
        if not valid.any():
            return pa.nulls(count, pa.binary())
        filled = [value or b"" for value in values]
        return _variable(pa.binary(), np.fromiter(map(len, filled), np.int32, count), b"".join(filled), valid)
    return _variable(pa.binary(), sizes, b"".join(cast(list[bytes], values)))


def _variable(type_: pa.DataType, lengths: np.ndarray, data: bytes, valid: np.ndarray | None = None) -> pa.Array:
    """A binary or string array from each value's length and all values' bytes, concatenated."""
    count = len(lengths)
    offsets = np.zeros(count + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    if valid is None:
        return pa.Array.from_buffers(type_, count, [None, pa.py_buffer(offsets), pa.py_buffer(data)], null_count=0)
    bitmap = pa.py_buffer(np.packbits(valid, bitorder="little"))
    return pa.Array.from_buffers(
        type_, count, [bitmap, pa.py_buffer(offsets), pa.py_buffer(data)], null_count=count - int(valid.sum())
    )


def _repeated(text: bytes, count: int) -> pa.Array:
    """A string array holding `text` `count` times."""
    return _variable(pa.string(), np.full(count, len(text), dtype=np.int32), text * count)


def _int32s(values: list[int | None]) -> pa.Array:
    """An int32 array; None is null."""
    valid = np.fromiter(map(operator.is_not, values, repeat(None)), dtype=np.bool_, count=len(values))
    numbers = np.fromiter((-1 if value is None else value for value in values), dtype=np.int32, count=len(values))
    return _fixed(pa.int32(), numbers, valid)


def _headers(headers: list[RecordHeaders]) -> pa.Array:
    """The headers column: a list of (key, value) per record, empty when a record has none."""
    count = len(headers)
    header_type = ARROW_SCHEMA.types[7]
    lists = [pairs or () for pairs in headers] if any(headers) else []
    sizes = np.fromiter(map(len, lists), dtype=np.int32, count=count) if lists else np.zeros(count, np.int32)
    offsets = np.zeros(count + 1, dtype=np.int32)
    np.cumsum(sizes, out=offsets[1:])
    pairs = [pair for pairs in lists for pair in pairs]
    names = [name.encode() for name, _ in pairs]
    entries = pa.StructArray.from_arrays(
        [
            _variable(pa.string(), np.fromiter(map(len, names), np.int32, len(names)), b"".join(names)),
            _binaries([value for _, value in pairs]),
        ],
        fields=list(header_type.value_type),
    )
    return pa.ListArray.from_arrays(_fixed(pa.int32(), offsets), entries, type=header_type)


@functools.cache
def _timestamp_type_names() -> pa.Array:
    """Names indexed by confluent_kafka's timestamp type (TIMESTAMP_NOT_AVAILABLE, TIMESTAMP_CREATE_TIME...)."""
    names = [TIMESTAMP_TYPES.get(kind, "NoTimestampType").encode() for kind in range(max(TIMESTAMP_TYPES) + 1)]
    return _variable(pa.string(), np.array([len(name) for name in names], np.int32), b"".join(names))
