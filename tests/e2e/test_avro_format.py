"""The `avro` format: the schema Flink derives from a table, records written and read by Spark's Avro functions
and checked against fastavro (an independent implementation), Flink's errors for types it cannot map.

Real Flink's bytes for the same table are compared in the conformance suite (case `avro_format`)."""

from __future__ import annotations

import io
import json
from datetime import date, datetime, timezone
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

import fastavro
import pytest
from support.commands import run, run_subprocess
from support.formats import decode_rows, encoded, failure_of, table, values
from support.topics import read_topic

from connector.diagnostics import PipelineError
from connector.formats.avro_schema import table_schema
from connector.formats.payload import PayloadFormat

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

COLUMNS = (
    "b BOOLEAN, t TINYINT, s SMALLINT, i INT NOT NULL, l BIGINT, f FLOAT, d DOUBLE, amount DECIMAL(10, 2), "
    "name STRING, bin BYTES, day DATE, at TIME(3), ts TIMESTAMP(3), tags ARRAY<INT>, attrs MAP<STRING, DOUBLE>, "
    "addr ROW<city STRING, zip SMALLINT, since TIME(0)>"
)
SPARK_DDL = (
    "b boolean, t tinyint, s smallint, i int, l bigint, f float, d double, amount decimal(10,2), name string, "
    "bin binary, day date, at string, ts timestamp_ntz, tags array<int>, attrs map<string,double>, "
    "addr struct<city:string,zip:smallint,since:string>"
)
NAMES = [c.split(" ")[0] for c in SPARK_DDL.split(", ")]
ROWS: list[tuple[Any, ...]] = [
    (
        True, -7, 300, 42, 2**40, 1.5, -2.25, Decimal("12345678.90"), "héllo", b"\x00\xff", date(2024, 2, 29),
        "12:34:56.789", datetime(2024, 5, 6, 7, 8, 9, 123000), [1, None, 3], {"a": 1.0},
        ("Zürich", 8001, "23:59:59"),
    ),
    (None, None, None, 0, None, None, None, None, None, None, None, None, None, None, None, None),
]  # fmt: skip


def _avro_table(options: dict[str, str] | None = None, columns: str = COLUMNS) -> Any:
    return table(columns, {"format": "avro", **(options or {})})


def _flink_schema(tbl: Any) -> Any:
    fmt = PayloadFormat.of(tbl, "value")
    assert fmt is not None
    return fastavro.parse_schema(
        table_schema([(f.name, f.flink_type, f.nullable) for f in fmt.fields if f.flink_type is not None])
    )


def test_the_schema_is_flinks_mapping_of_the_columns() -> None:
    schema = table_schema([(n, t, nullable) for n, t, nullable in _columns_of(_avro_table())])
    fields = {f["name"]: f for f in schema["fields"]}
    assert schema["name"] == "org.apache.flink.avro.generated.record"
    assert fields["i"] == {"name": "i", "type": "int"}  # NOT NULL: no union, no default
    assert fields["b"] == {"name": "b", "type": ["null", "boolean"], "default": None}
    assert fields["t"]["type"] == ["null", "int"] and fields["s"]["type"] == ["null", "int"]
    assert fields["amount"]["type"][1] == {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}
    assert fields["day"]["type"][1] == {"type": "int", "logicalType": "date"}
    assert fields["at"]["type"][1] == {"type": "int", "logicalType": "time-millis"}
    assert fields["ts"]["type"][1] == {"type": "long", "logicalType": "timestamp-millis"}  # legacy mapping
    assert fields["tags"]["type"][1] == {"type": "array", "items": ["null", "int"]}
    assert fields["attrs"]["type"][1] == {"type": "map", "values": ["null", "double"]}
    assert fields["addr"]["type"][1]["name"] == "org.apache.flink.avro.generated.record_addr"
    modern = table_schema([(n, t, nb) for n, t, nb in _columns_of(table("ts TIMESTAMP(6), lt TIMESTAMP_LTZ(3)", {
        "format": "avro", "avro.timestamp_mapping.legacy": "false"}))], legacy=False)  # fmt: skip
    assert [f["type"][1]["logicalType"] for f in modern["fields"]] == ["local-timestamp-micros", "timestamp-millis"]


def _columns_of(tbl: Any) -> list[tuple[str, Any, bool]]:
    return [(c.name, c.data_type, c.nullable) for c in tbl.columns]


def test_records_written_are_avro_that_fastavro_reads_back(spark: SparkSession) -> None:
    tbl = _avro_table()
    payloads = encoded(spark, tbl, "value", ROWS, SPARK_DDL)
    schema = _flink_schema(tbl)
    read: list[Any] = [fastavro.schemaless_reader(io.BytesIO(p), schema, None) for p in payloads]
    assert read[0]["i"] == 42 and read[0]["t"] == -7 and read[0]["amount"] == Decimal("12345678.90")
    assert read[0]["ts"] == datetime(2024, 5, 6, 7, 8, 9, 123000, tzinfo=timezone.utc)  # wall clock as UTC
    assert read[0]["at"].isoformat() == "12:34:56.789000"
    assert read[0]["addr"]["since"].isoformat() == "23:59:59"
    assert read[0]["tags"] == [1, None, 3] and read[0]["attrs"] == {"a": 1.0} and read[0]["bin"] == b"\x00\xff"
    assert read[1] == {n: (0 if n == "i" else None) for n in NAMES}


def test_records_fastavro_wrote_read_as_the_table_declares(spark: SparkSession) -> None:
    tbl = _avro_table()
    schema = _flink_schema(tbl)
    records = []
    for row in ROWS:
        record = dict(zip(NAMES, row, strict=True))
        record["at"] = None if row[11] is None else datetime.strptime(row[11], "%H:%M:%S.%f").time()
        if row[15] is not None:
            record["addr"] = {
                "city": row[15][0],
                "zip": row[15][1],
                "since": datetime.strptime(row[15][2], "%H:%M:%S").time(),
            }
        out = io.BytesIO()
        fastavro.schemaless_writer(out, schema, record)
        records.append(out.getvalue())
    rows, malformed = decode_rows(spark, tbl, [*records, None])  # a NULL message is no row, as in Flink
    assert malformed == 0
    assert [tuple(v) for v in values(rows, *NAMES)] == [
        tuple(list(v) if isinstance(v, list) else v for v in row) for row in ROWS
    ]


def test_round_trip_keeps_every_value(spark: SparkSession) -> None:
    tbl = _avro_table()
    rows, _ = decode_rows(spark, tbl, encoded(spark, tbl, "value", ROWS, SPARK_DDL))
    assert values(rows, *NAMES) == [tuple(r) for r in ROWS]


def test_avro_as_key_and_value_format(spark: SparkSession) -> None:
    tbl = table(
        "id BIGINT, name STRING",
        {"key.format": "avro", "key.fields": "id", "value.format": "avro", "value.fields-include": "EXCEPT_KEY"},
    )
    keys = encoded(spark, tbl, "key", [(7,)], "id bigint")
    names = encoded(spark, tbl, "value", [("seven",)], "name string")
    rows, _ = decode_rows(spark, tbl, [(keys[0], names[0])])
    assert values(rows, "id", "name") == [(7, "seven")]


def test_a_record_that_is_not_avro_of_the_schema_fails_naming_its_offset(spark: SparkSession) -> None:
    tbl = table("id BIGINT NOT NULL, name STRING NOT NULL", {"format": "avro"})
    good = encoded(spark, tbl, "value", [(1, "a")], "id bigint, name string")[0]
    message = failure_of(spark, tbl, [good, b"\x02\x40"])  # id 1, then a string of 32 bytes that is not there
    assert message.startswith("Malformed Avro record in topic 'orders' partition 0 offset 1: does not decode")
    assert "(2 bytes: 0240)" in message
    assert "ignore-parse-errors" not in message  # Flink's avro format has no such option


def test_json_encoded_records_round_trip_every_value_and_read_flinks(spark: SparkSession) -> None:
    """'avro.encoding' = 'json': what is written reads back the same, and so do records as Flink writes them (a
    newline before every record after a task's first)."""
    tbl = _avro_table({"avro.encoding": "json"})
    written = encoded(spark, tbl, "value", ROWS, SPARK_DDL)
    assert all(json.loads(record) for record in written)  # JSON text, one record each
    flinks = [written[0], b"\n" + written[1], *written[2:]]
    rows, malformed = decode_rows(spark, tbl, [*flinks, None])
    assert malformed == 0
    assert values(rows, *NAMES) == [tuple(r) for r in ROWS]


def test_a_record_that_is_not_avro_json_of_the_schema_fails_naming_its_offset(spark: SparkSession) -> None:
    tbl = table("id BIGINT NOT NULL, name STRING", {"format": "avro", "avro.encoding": "json"})
    good = b'{"id": 1, "name": {"string": "a"}}'
    message = failure_of(spark, tbl, [good, b'{"id": 2, "name": "b"}'])  # a union's value without its branch
    assert message.startswith("Malformed Avro record in topic 'orders' partition 0 offset 1: is not a record of")
    assert '{"id": 2, "name": "b"}' in message


def test_avro_is_refused_on_a_session_without_spark_avro(spark: SparkSession, monkeypatch: pytest.MonkeyPatch) -> None:
    """A session made elsewhere (the extension's) without the module gets what to add, at the format option."""
    from connector.formats import avro

    monkeypatch.setattr(avro, "_SPARK_AVRO_CLASS", "org.apache.spark.sql.avro.NoSuchClass")  # as if not loaded
    with pytest.raises(PipelineError) as error:
        PayloadFormat.of(_avro_table(), "value")
    assert "spark.jars.packages = 'org.apache.spark:spark-avro_2.13:4.2.0'" in str(error.value.diagnostics[0])


PIPELINE = """
CREATE TABLE src (id BIGINT, name STRING, amount DECIMAL(10, 2), ts TIMESTAMP(3), tags ARRAY<INT>) WITH (
  'connector' = 'kafka', 'topic' = '{{ var("src") }}', 'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', 'format' = '{{ var("in") }}'
);
CREATE TABLE dst (id BIGINT, name STRING, amount DECIMAL(10, 2), ts TIMESTAMP(3), tags ARRAY<INT>) WITH (
  'connector' = 'kafka', 'topic' = '{{ var("dst") }}', 'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = '{{ var("out") }}'
);
INSERT INTO dst SELECT * FROM src;
"""


@pytest.mark.slow
def test_kafka_sql_run_writes_and_reads_avro_topics(
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Any,
    produce: Any,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """JSON -> avro by `kafka-sql run` as a user starts it (its own Spark, spark-avro resolved for the pipeline),
    then avro -> JSON: the values come back unchanged, and the avro topic holds what fastavro reads with Flink's
    schema of the table."""

    records = [
        {"id": 1, "name": "a", "amount": 12.5, "ts": "2024-05-06 07:08:09.123", "tags": [1, 2]},
        {"id": 2, "name": None, "amount": None, "ts": None, "tags": None},
    ]
    src, mid, out = topic_factory(), topic_factory(), topic_factory()
    produce(src, [(None, json.dumps(r).encode(), None, None, None) for r in records])
    (tmp_path / "copy.sql").write_text(PIPELINE)
    common = {"brokers": kafka_bootstrap}

    written = run_subprocess(
        tmp_path / "copy.sql", tmp_path / "cp1", **common, src=src, dst=mid, **{"in": "json", "out": "avro"}
    )
    assert written.code == 0, written.err[-3000:]
    schema = _flink_schema(
        table("id BIGINT, name STRING, amount DECIMAL(10, 2), ts TIMESTAMP(3), tags ARRAY<INT>", {"format": "avro"})
    )
    in_avro = read_topic(
        kafka_bootstrap, mid, lambda value: fastavro.schemaless_reader(io.BytesIO(value), schema, None)
    )
    assert [r["id"] for r in in_avro] == [1, 2] and in_avro[0]["amount"] == Decimal("12.50")

    read = run(
        capsys, tmp_path / "copy.sql", tmp_path / "cp2", **common, src=mid, dst=out, **{"in": "avro", "out": "json"}
    )
    assert read.code == 0, read.err
    assert read_topic(kafka_bootstrap, out) == records
