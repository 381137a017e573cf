"""JSON values decoded by the Kafka source's reader (`connector.formats.json_arrow`) give exactly the rows, malformed
counts and errors of the Spark-side decoding (`connector.formats.json`, Flink's lenient rules), and the reader
decodes the batches it should: all plain JSON objects of the types it knows, and none with a record that needs
Flink's leniency or is malformed (then the whole batch goes to the Spark side).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
from pyspark.errors import PySparkException
from pyspark.sql import Observation

from connector.catalog.loader import load_text
from connector.catalog.model import Table
from connector.connectors.kafka.reading import kafka_rows, read
from connector.connectors.kafka.records import DECODED_VALUE, source_schema
from connector.connectors.kafka.settings import VALUE_JSON_FIELDS
from connector.connectors.kafka.source import KafkaSource
from connector.formats import json_arrow
from connector.formats.payload import PayloadFormat

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

COLUMNS = "id INT, big BIGINT, name STRING, amount DOUBLE, ok BOOLEAN"
STAMP = datetime(2024, 5, 6, 7, 8, 9, tzinfo=timezone.utc)
PLAIN = [
    '{"id": 1, "big": 9223372036854775807, "name": "Ann", "amount": 12.5, "ok": true}',
    '{"id": -2147483648, "big": -1, "name": "caf\\u00e9 \\"x\\"", "amount": -0.0, "ok": false}',
    '{"amount": 1e300, "name": null, "extra": {"nested": [1, {"a": "b"}]}, "id": 0, "extra2": "x\\ny"}',
    '{"amount": 7, "big": 123, "name": "\u00e9t\u00e9 \U0001f600"}',
    "{}",
    '{\n"id": 3,\r\n"name":\t"x" }',
    '{"ID": 5, "Name": "x", "id": 6}',  # field names match case-sensitively, as in Flink
]
# A batch with one of these records is left to the Spark side: Flink reads them leniently, or fails on them.
NEEDS_SPARK = {
    "a string for an INT": '{"id": "12"}',
    "a fraction for an INT": '{"id": 12.7}',
    "an INT out of range": '{"id": 2147483648}',
    "a number for a STRING": '{"name": 12.50}',
    "an object for a STRING": '{"name": {"a": 1}}',
    "a string for a BOOLEAN": '{"ok": "TRUE"}',
    "a string for a DOUBLE": '{"amount": "1.5"}',
    "a NaN literal": '{"amount": NaN}',
    "an Infinity literal": '{"amount": -Infinity}',
    "a top-level array": '[{"id": 1}, {"id": 2}]',
    "the JSON literal null": "null",
    "a bare number": "17",
    "a NULL message": None,
    "an empty message": "",
    "invalid UTF-8": b'{"id": 2, "name": "b\xff\xfe"}',
    "a raw line break in a string": '{"name": "a\nb"}',
    "a line break after the object": '{"id": 3}\n',
    "two objects on two lines": '{"id": 3}\n{"id": 4}',
    "two objects on two lines with CRLF": '{"id": 3}\r\n{"id": 4}',
    "a field given twice": '{"id": 1, "id": 2}',
    "whitespace around the object": ' {"id": 4} ',
    "two objects in one message": '{"id": 5}{"id": 6}',
    "a syntax error": '{"id": 7,}',
    "an unclosed object": '{"id": 8',
}


def table(extra_options: str = "", topic: str = "orders", bootstrap: str = "localhost:9092") -> Table:
    sql = (
        f"CREATE TABLE orders ({COLUMNS}) WITH ('connector' = 'kafka', 'topic' = '{topic}', "
        f"'properties.bootstrap.servers' = '{bootstrap}', 'scan.startup.mode' = 'earliest-offset', "
        f"'format' = 'json'{extra_options});"
    )
    found = load_text(sql, "orders.sql").pipeline.table("orders")
    assert found is not None
    return found


def _bytes(payload: str | bytes | None) -> bytes | None:
    return payload.encode() if isinstance(payload, str) else payload


def reader_fields(tbl: Table) -> str:
    fmt = PayloadFormat.of(tbl, "value")
    assert fmt is not None
    fields = fmt.codec.reader_fields(fmt)
    assert fields, "the table's value fields are all of types the reader decodes"
    return json_arrow.fields_option(fields)


def reader_decoded(tbl: Table, payloads: Sequence[str | bytes | None]) -> list[Any]:
    """What the reader decodes of a batch of `payloads`: a dict of fields per record, or None for each."""
    values = [_bytes(p) for p in payloads]
    sizes = np.array([len(v or b"") for v in values], dtype=np.int32)
    decoded = json_arrow.decode([v or b"" for v in values], sizes, json_arrow.arrow_type(reader_fields(tbl)))
    return [None] * len(values) if decoded is None else decoded.to_pylist()


def outcome(
    spark: SparkSession,
    tbl: Table,
    payloads: Sequence[str | bytes | None],
    by_reader: bool,
    keys: Sequence[bytes | None] | None = None,
) -> Any:
    """(rows, malformed count) of the batch `payloads` (with `keys`), or the error that failed the query;
    `by_reader`: with what the reader decodes, else all decoded by Spark."""
    structs = reader_decoded(tbl, payloads)
    # as the reader sends them: a decoded record's payload is left empty
    values = [
        b"" if by_reader and fields is not None else _bytes(p) for p, fields in zip(payloads, structs, strict=True)
    ]
    rows: list[tuple[Any, ...]] = [
        (keys[offset] if keys else None, v, "orders", 0, offset, STAMP, "CreateTime", [], 0, structs[offset])
        for offset, v in enumerate(values)
    ]
    frame = spark.createDataFrame(rows, source_schema(reader_fields(tbl)))
    if not by_reader:
        frame = frame.drop(DECODED_VALUE)
    observation = Observation("malformed")
    decoded_rows = kafka_rows(frame, tbl, observation, decoded_by_reader=by_reader)
    try:
        collected = [r.asDict() for r in decoded_rows.collect()]
    except PySparkException as error:
        return str(error).split("Malformed", 1)[-1].split(". ", 1)[0]
    return collected, int(observation.get["records"])


@pytest.mark.parametrize("strict", [True, False], ids=["strict", "ignore-parse-errors"])
def test_plain_objects_are_decoded_by_the_reader_with_the_same_rows(spark: SparkSession, strict: bool) -> None:
    tbl = table("" if strict else ", 'json.ignore-parse-errors' = 'true'")
    assert None not in reader_decoded(tbl, PLAIN)
    rows, malformed = outcome(spark, tbl, PLAIN, by_reader=True)
    assert (rows, malformed) == outcome(spark, tbl, PLAIN, by_reader=False)
    assert malformed == 0
    assert [(r["id"], r["big"], r["name"], r["amount"], r["ok"]) for r in rows] == [
        (1, 9223372036854775807, "Ann", 12.5, True),
        (-2147483648, -1, 'caf\u00e9 "x"', -0.0, False),
        (0, None, None, 1e300, None),
        (None, 123, "\u00e9t\u00e9 \U0001f600", 7.0, None),
        (None, None, None, None, None),
        (3, None, "x", None, None),
        (6, None, None, None, None),
    ]


@pytest.mark.parametrize("strict", [True, False], ids=["strict", "ignore-parse-errors"])
@pytest.mark.parametrize("case", list(NEEDS_SPARK))
def test_a_batch_needing_flinks_rules_is_left_to_spark(spark: SparkSession, case: str, strict: bool) -> None:
    tbl = table("" if strict else ", 'json.ignore-parse-errors' = 'true'")
    batch = [PLAIN[0], NEEDS_SPARK[case], PLAIN[1]]
    assert reader_decoded(tbl, batch) == [None, None, None]
    assert outcome(spark, tbl, batch, by_reader=True) == outcome(spark, tbl, batch, by_reader=False)


def test_the_key_is_decoded_for_the_rows_whose_value_the_reader_decoded(spark: SparkSession) -> None:
    sql = (
        "CREATE TABLE orders (k STRING, id INT, name STRING) WITH ('connector' = 'kafka', 'topic' = 'orders', "
        "'properties.bootstrap.servers' = 'localhost:9092', 'key.format' = 'json', 'key.fields' = 'k', "
        "'value.format' = 'json', 'value.fields-include' = 'EXCEPT_KEY');"
    )
    tbl = load_text(sql, "orders.sql").pipeline.table("orders")
    assert tbl is not None
    payloads, keys = ['{"id": 1, "name": "Ann"}', '{"id": 2, "name": "Bob"}'], [b'{"k": "a"}', b'{"k": "b"}']
    assert None not in reader_decoded(tbl, payloads)
    rows, malformed = outcome(spark, tbl, payloads, by_reader=True, keys=keys)
    assert (rows, malformed) == outcome(spark, tbl, payloads, by_reader=False, keys=keys)
    assert [(r["k"], r["id"], r["name"]) for r in rows] == [("a", 1, "Ann"), ("b", 2, "Bob")]


def test_fail_on_missing_field_and_other_types_are_decoded_by_spark_only() -> None:
    missing = PayloadFormat.of(table(", 'json.fail-on-missing-field' = 'true'"), "value")
    assert missing is not None and missing.codec.reader_fields(missing) == ()
    for column in ("d DECIMAL(10, 2)", "ts TIMESTAMP(3)", "f FLOAT", "s SMALLINT", "r ROW<a INT>"):
        sql = (
            f"CREATE TABLE t (id INT, {column}) WITH ('connector' = 'kafka', 'topic' = 't', "
            "'properties.bootstrap.servers' = 'localhost:9092', 'format' = 'json');"
        )
        tbl = load_text(sql, "t.sql").pipeline.table("t")
        assert tbl is not None
        fmt = PayloadFormat.of(tbl, "value")
        assert fmt is not None and fmt.codec.reader_fields(fmt) == (), column


def test_the_source_decodes_in_its_readers_batch_by_batch(
    spark: SparkSession, kafka_bootstrap: str, topic_factory: Callable[..., str], produce: Any, tmp_path: Any
) -> None:
    """Through a real broker: partition 0's batch is decoded by the reader, partition 1's (one string "12" for an
    INT) by Spark; the query reads every record with Flink's values either way."""
    topic = topic_factory(partitions=2)
    produce(topic, [(None, text, 0, None, None) for text in PLAIN[:2]])
    produce(topic, [(None, text, 1, None, None) for text in (PLAIN[0], '{"id": "12", "name": "lenient"}')])
    tbl = table(topic=topic, bootstrap=kafka_bootstrap)
    spark.dataSource.register(KafkaSource)
    raw = (
        spark.read.format("flink-kafka")
        .options(
            topic=topic, **{"properties.bootstrap.servers": kafka_bootstrap, "scan.startup.mode": "earliest-offset"}
        )
        .option(VALUE_JSON_FIELDS, reader_fields(tbl))
        .load()
    )
    assert raw.schema == source_schema(reader_fields(tbl))
    decoded = {(r.partition, r.offset): (r[DECODED_VALUE] is not None, bytes(r.value)) for r in raw.collect()}
    assert decoded == {
        (0, 0): (True, b""),  # decoded: the payload is not sent to the JVM
        (0, 1): (True, b""),
        (1, 0): (False, PLAIN[0].encode()),
        (1, 1): (False, b'{"id": "12", "name": "lenient"}'),
    }

    rows: list[Any] = []
    frame = read(spark, tbl, malformed_rows=False, end_of_input=False)
    query = (
        frame.writeStream.foreachBatch(lambda batch, _: rows.extend(batch.collect()))
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(120)
    assert sorted((r["__partition"], r["__offset"], r["id"], r["name"]) for r in rows) == [
        (0, 0, 1, "Ann"),
        (0, 1, -2147483648, 'caf\u00e9 "x"'),
        (1, 0, 1, "Ann"),
        (1, 1, 12, "lenient"),
    ]
