"""Payload formats (json, csv, raw) and the sources that decode with them.

Tables are declared in Flink SQL and loaded by the real loader. Kafka records are static DataFrames shaped
like the flink-kafka source, decoded by `kafka.reading.kafka_rows` (the code path of the streaming source) and
encoded by `formats.encode`; the file and datagen sources run as streaming queries.
"""

from __future__ import annotations

import re
import struct
import time
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from pyspark.errors import StreamingQueryException
from pyspark.sql import Row
from support.formats import KAFKA, decode_rows, encoded, failure_of, table, values, with_clause

from connector.catalog.loader import load_text
from connector.connectors.reading import source_dataframe
from connector.diagnostics import PipelineError
from connector.formats.payload import PayloadFormat

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

UTC = timezone.utc


# ---------------------------------------------------------------------------------------------------------
# JSON
# ---------------------------------------------------------------------------------------------------------

JSON_COLUMNS = (
    "id BIGINT, name STRING, amount DECIMAL(38, 18), ok BOOLEAN, ts TIMESTAMP(3), lt TIMESTAMP_LTZ(3), "
    "d DATE, bin BYTES, tags ARRAY<INT>, addr ROW<city STRING, zip INT>, attrs MAP<STRING, DOUBLE>"
)


def test_json_reads_every_type_with_flinks_leniency(spark: SparkSession) -> None:
    tbl = table(JSON_COLUMNS, {"format": "json"})
    record = (
        '{"id": "42", "name": "Ann", "amount": 12345678901234567890.123456789012345678, "ok": "TRUE", '
        '"ts": "2020-12-30 12:13:14.5", "lt": "2020-12-30 12:13:14.123Z", "d": "2020-12-30", '
        '"bin": "AQID", "tags": [1, 2], "addr": {"city": "Oslo", "zip": 150}, "attrs": {"x": 1.5}}'
    )
    rows, malformed = decode_rows(spark, tbl, [record, '{"amount": "0.50", "ok": false, "name": null}'])
    assert malformed == 0
    first = rows[0].asDict(recursive=True)
    assert first["id"] == 42
    assert first["name"] == "Ann"
    assert first["amount"] == Decimal("12345678901234567890.123456789012345678")
    assert first["ok"] is True
    assert first["ts"] == datetime(2020, 12, 30, 12, 13, 14, 500000)
    assert first["lt"] == datetime(2020, 12, 30, 12, 13, 14, 123000)  # session time zone is UTC
    assert first["d"] == date(2020, 12, 30)
    assert first["bin"] == bytearray(b"\x01\x02\x03")
    assert first["tags"] == [1, 2]
    assert first["addr"] == {"city": "Oslo", "zip": 150}
    assert first["attrs"] == {"x": 1.5}
    assert values(rows[1:], "id", "name", "amount", "ok") == [(None, None, Decimal("0.5"), False)]


def test_json_iso_8601_timestamps(spark: SparkSession) -> None:
    tbl = table(
        "ts TIMESTAMP(3), lt TIMESTAMP_LTZ(3)", {"format": "json", "json.timestamp-format.standard": "ISO-8601"}
    )
    rows, _ = decode_rows(spark, tbl, ['{"ts": "2020-12-30T12:13", "lt": "2020-12-30T12:13:14.1Z"}'])
    assert values(rows, "ts", "lt") == [(datetime(2020, 12, 30, 12, 13), datetime(2020, 12, 30, 12, 13, 14, 100000))]
    message = failure_of(spark, tbl, ['{"ts": "2020-12-30 12:13:14"}'])
    assert "field 'ts' (TIMESTAMP(3)) cannot be read from \"2020-12-30 12:13:14\"" in message


def test_json_ignore_parse_errors_skips_bad_records_and_nulls_bad_fields(spark: SparkSession) -> None:
    tbl = table("id INT, name STRING, amount DECIMAL(10, 2)", {"format": "json", "json.ignore-parse-errors": "true"})
    records = ['{"id": 1, "name": "a"}', "{not json", '{"id": "x", "name": "b", "amount": "1.2.3"}', "17", '{"id": 4}']
    rows, malformed = decode_rows(spark, tbl, records)
    assert values(rows, "id", "name", "amount", "__offset") == [
        (1, "a", None, 0),
        (None, "b", None, 2),
        (4, None, None, 4),
    ]
    assert malformed == 2


def test_json_malformed_record_fails_naming_topic_partition_and_offset(spark: SparkSession) -> None:
    tbl = table("id INT, name STRING", {"format": "json"})
    assert failure_of(spark, tbl, ['{"id": 1}', '{"id": 2', '{"id": 3}']) == (
        'Malformed JSON record in topic \'orders\' partition 0 offset 1: not a JSON object: "{"id": 2". '
        "Set 'json.ignore-parse-errors' = 'true' to skip malformed records."
    )


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_invalid_utf8_is_a_malformed_record(spark: SparkSession, fmt: str) -> None:
    """Flink's text formats (Jackson) fail on bytes that are no UTF-8; Spark would read them as U+FFFD."""
    good = '{"id": 1, "name": "a"}' if fmt == "json" else "1,a"
    bad = b'{"id": 2, "name": "b\xff\xfe"}' if fmt == "json" else b"2,b\xc3("
    strict = table("id INT, name STRING", {"format": fmt})
    message = failure_of(spark, strict, [good, bad])
    prefix = f"Malformed {fmt.upper()} record in topic 'orders' partition 0 offset 1: invalid UTF-8 text"
    assert message.startswith(prefix), message
    lenient = table("id INT, name STRING", {"format": fmt, f"{fmt}.ignore-parse-errors": "true"})
    accented = "3,\u00e9t\u00e9" if fmt == "csv" else '{"id": 3, "name": "\u00e9t\u00e9"}'
    rows, malformed = decode_rows(spark, lenient, [good, bad, accented])
    assert values(rows, "id", "name", "__offset") == [(1, "a", 0), (3, "\u00e9t\u00e9", 2)]
    assert malformed == 1


def test_json_bad_field_fails_with_field_and_text(spark: SparkSession) -> None:
    tbl = table("id INT, amount DECIMAL(10, 2)", {"value.format": "json"})
    assert failure_of(spark, tbl, ['{"id": 1, "amount": "12x"}']) == (
        "Malformed JSON record in topic 'orders' partition 0 offset 0: field 'amount' (DECIMAL(10, 2)) cannot "
        "be read from \"12x\". Set 'value.json.ignore-parse-errors' = 'true' to skip malformed records."
    )


def test_json_decimal_overflow_reads_null_as_in_flink(spark: SparkSession) -> None:
    tbl = table("amount DECIMAL(4, 2)", {"format": "json"})
    rows, _ = decode_rows(spark, tbl, ['{"amount": 123456.5}', '{"amount": 12.345}'])
    assert values(rows, "amount") == [(None,), (Decimal("12.35"),)]


def test_json_fail_on_missing_field(spark: SparkSession) -> None:
    tbl = table("id INT, name STRING", {"format": "json", "json.fail-on-missing-field": "true"})
    rows, _ = decode_rows(spark, tbl, ['{"id": 1, "name": null}'])
    assert values(rows, "id", "name") == [(1, None)]
    message = failure_of(spark, tbl, ['{"id": 1}'])
    assert message.startswith(
        "Malformed JSON record in topic 'orders' partition 0 offset 0: could not find field 'name' "
        "(fail-on-missing-field is true)."
    )


def test_json_null_values_and_top_level_arrays(spark: SparkSession) -> None:
    tbl = table("id INT", {"format": "json"})
    rows, malformed = decode_rows(spark, tbl, [None, "null", '[{"id": 1}, {"id": 2}]', "[]", '{"id": 3}'])
    assert values(rows, "id", "__offset") == [(1, 2), (2, 2), (3, 4)]
    assert malformed == 0


def test_key_and_value_fields_with_prefix_and_except_key(spark: SparkSession) -> None:
    options = {
        "key.format": "json",
        "key.fields": "k_id",
        "key.fields-prefix": "k_",
        "value.format": "json",
        "value.fields-include": "EXCEPT_KEY",
    }
    tbl = table("k_id INT, name STRING", options)
    rows, _ = decode_rows(spark, tbl, [('{"id": 7}', '{"name": "x", "id": 99, "k_id": 98}'), (None, '{"name": "y"}')])
    # A NULL key cannot give the key fields: like Flink, the record yields no row.
    assert values(rows, "k_id", "name") == [(7, "x")]


def test_key_fields_included_in_value_take_the_value(spark: SparkSession) -> None:
    tbl = table("id INT, name STRING", {"key.format": "raw", "key.fields": "name", "value.format": "json"})
    rows, _ = decode_rows(spark, tbl, [("from-key", '{"id": 1, "name": "from-value"}'), (None, '{"id": 2}')])
    assert values(rows, "id", "name") == [(1, "from-value"), (2, None)]


def test_malformed_key_fails_as_a_key(spark: SparkSession) -> None:
    tbl = table("id INT, name STRING", {"key.format": "json", "key.fields": "id", "value.format": "json"})
    message = failure_of(spark, tbl, [("oops", '{"name": "a"}')])
    assert message.startswith(
        "Malformed JSON key in topic 'orders' partition 0 offset 0: not a JSON object: \"oops\". "
        "Set 'key.json.ignore-parse-errors'"
    )


def test_json_encode_matches_flink(spark: SparkSession) -> None:
    tbl = table(
        "id INT, name STRING, ts TIMESTAMP(3), lt TIMESTAMP_LTZ(3), bin BYTES, amount DECIMAL(10, 2)",
        {"format": "json"},
    )
    row = (
        1,
        None,
        datetime(2020, 1, 2, 3, 4, 5, 120000),
        datetime(2020, 1, 2, 3, 4, 5, tzinfo=UTC),
        b"\x01",
        Decimal("1.50"),
    )
    ddl = "id INT, name STRING, ts TIMESTAMP_NTZ, lt TIMESTAMP, bin BINARY, amount DECIMAL(10, 2)"
    assert [bytes(v).decode() for v in encoded(spark, tbl, "value", [row], ddl)] == [
        '{"id":1,"name":null,"ts":"2020-01-02 03:04:05.12","lt":"2020-01-02 03:04:05Z","bin":"AQ==","amount":1.5}'
    ]
    iso = table(
        "id INT, name STRING, ts TIMESTAMP(3)",
        {"format": "json", "json.encode.ignore-null-fields": "true", "json.timestamp-format.standard": "ISO-8601"},
    )
    assert [
        bytes(v).decode()
        for v in encoded(
            spark, iso, "value", [(1, None, datetime(2020, 1, 2, 3, 4))], "id INT, name STRING, ts TIMESTAMP_NTZ"
        )
    ] == ['{"id":1,"ts":"2020-01-02T03:04:00"}']


DECIMALS = ["47.50", "-300.00", "0.00", "0.00000010", "1200.5", "12345678.90", None]


def test_json_writes_decimals_as_flink_stripped_of_trailing_zeros(spark: SparkSession) -> None:
    # Flink's JSON node holds BigDecimal.stripTrailingZeros(); Jackson writes its toString().
    tbl = table("id INT, amount DECIMAL(16, 8)", {"format": "json"})
    rows = [(i, None if d is None else Decimal(d)) for i, d in enumerate(DECIMALS)]
    written = [bytes(v).decode() for v in encoded(spark, tbl, "value", rows, "id INT, amount DECIMAL(16, 8)")]
    amounts = [re.fullmatch(r'\{"id":\d+,"amount":(.*)\}', w).group(1) for w in written]  # type: ignore[union-attr]
    assert amounts == ["47.5", "-3E+2", "0", "1E-7", "1200.5", "12345678.9", "null"]


def test_json_decimal_as_plain_number(spark: SparkSession) -> None:
    tbl = table("amount DECIMAL(16, 8), name STRING", {"format": "json", "json.encode.decimal-as-plain-number": "true"})
    rows = [(None if d is None else Decimal(d), "x") for d in DECIMALS]
    written = [bytes(v).decode() for v in encoded(spark, tbl, "value", rows, "amount DECIMAL(16, 8), name STRING")]
    assert written == [
        '{"amount":47.5,"name":"x"}',
        '{"amount":-300,"name":"x"}',
        '{"amount":0,"name":"x"}',
        '{"amount":0.0000001,"name":"x"}',
        '{"amount":1200.5,"name":"x"}',
        '{"amount":12345678.9,"name":"x"}',
        '{"amount":null,"name":"x"}',
    ]


# ---------------------------------------------------------------------------------------------------------
# CSV
# ---------------------------------------------------------------------------------------------------------


def test_csv_options(spark: SparkSession) -> None:
    options = {
        "format": "csv",
        "csv.field-delimiter": "|",
        "csv.quote-character": "'",
        "csv.null-literal": "N/A",
        "csv.allow-comments": "true",
        "csv.array-element-delimiter": "/",
    }
    tbl = table("id INT, name STRING, tags ARRAY<INT>, ts TIMESTAMP(3)", options)
    records = ["1|'a|b'|1/2|2020-01-02 03:04:05.5", "# a comment", "2|N/A||2020-1-2 3:04:05", ""]
    rows, _ = decode_rows(spark, tbl, records)
    assert values(rows, "id", "name", "tags", "ts") == [
        (1, "a|b", [1, 2], datetime(2020, 1, 2, 3, 4, 5, 500000)),
        (2, None, [], datetime(2020, 1, 2, 3, 4, 5)),  # an empty field is an empty ARRAY, as Flink reads it
    ]


def test_csv_quotes_are_doubled_unless_an_escape_character_is_set(spark: SparkSession) -> None:
    plain = table("a STRING, b STRING", {"format": "csv"})
    rows, _ = decode_rows(spark, plain, ['"x ""quoted"" y",z'])
    assert values(rows, "a", "b") == [('x "quoted" y', "z")]
    escaped = table("a STRING, b STRING", {"format": "csv", "csv.escape-character": "\\"})
    rows, _ = decode_rows(spark, escaped, ['"x \\"q\\" y",z'])
    assert values(rows, "a", "b") == [('x "q" y', "z")]


def test_csv_wrong_field_count(spark: SparkSession) -> None:
    strict = table("id INT, name STRING, n INT", {"format": "csv"})
    assert failure_of(spark, strict, ["1,a,3", "1,a"]) == (
        "Malformed CSV record in topic 'orders' partition 0 offset 1: expected 3 fields in \"1,a\". "
        "Set 'csv.ignore-parse-errors' = 'true' to skip malformed records."
    )
    lenient = table("id INT, name STRING, n INT", {"format": "csv", "csv.ignore-parse-errors": "true"})
    rows, malformed = decode_rows(spark, lenient, ["1,a", "2,b,x", "3,c,3,4"])
    assert values(rows, "id", "name", "n") == [(1, "a", None), (2, "b", None), (3, "c", 3)]
    assert malformed == 0


def test_csv_bad_field_fails(spark: SparkSession) -> None:
    tbl = table("id INT, d DATE", {"format": "csv"})
    message = failure_of(spark, tbl, ["1,2020/01/01"])
    assert "offset 0: field 'd' (DATE) cannot be read from \"2020/01/01\"" in message


def test_csv_encode(spark: SparkSession) -> None:
    tbl = table("id INT, name STRING, tags ARRAY<INT>, ts TIMESTAMP(3)", {"format": "csv", "csv.null-literal": "NULL"})
    rows = [(1, 'say "hi", ok', [1, 2], datetime(2020, 1, 2, 3, 4, 5)), (2, None, None, None)]
    out = encoded(spark, tbl, "value", rows, "id INT, name STRING, tags ARRAY<INT>, ts TIMESTAMP_NTZ")
    # Jackson, under Flink's CSV format, quotes text holding a character below ',' (a space): the timestamp too.
    assert [bytes(v).decode() for v in out] == ['1,"say ""hi"", ok",1;2,"2020-01-02 03:04:05"', "2,NULL,NULL,NULL"]
    unquoted = table(
        "id INT, name STRING", {"format": "csv", "csv.disable-quote-character": "true", "csv.field-delimiter": "\\t"}
    )
    out = encoded(spark, unquoted, "value", [(1, "a,b")], "id INT, name STRING")
    assert [bytes(v).decode() for v in out] == ["1\ta,b"]


# ---------------------------------------------------------------------------------------------------------
# raw
# ---------------------------------------------------------------------------------------------------------

RAW_CASES = [
    ("INT", "big-endian", struct.pack(">i", -2), -2),
    ("INT", "little-endian", struct.pack("<i", 305419896), 305419896),
    ("BIGINT", "big-endian", struct.pack(">q", -(2**62) - 5), -(2**62) - 5),
    ("SMALLINT", "little-endian", struct.pack("<h", -300), -300),
    ("TINYINT", "big-endian", struct.pack(">b", -7), -7),
    ("DOUBLE", "big-endian", struct.pack(">d", -1.25e-300), -1.25e-300),
    ("FLOAT", "little-endian", struct.pack("<f", 3.5), 3.5),
    ("BOOLEAN", "big-endian", b"\x02", True),
    ("BYTES", "big-endian", b"\x00\xff", bytearray(b"\x00\xff")),
]


@pytest.mark.parametrize(("flink_type", "endianness", "payload", "expected"), RAW_CASES)
def test_raw_numbers_round_trip(
    spark: SparkSession, flink_type: str, endianness: str, payload: bytes, expected: object
) -> None:
    tbl = table(f"v {flink_type}", {"format": "raw", "raw.endianness": endianness})
    rows, _ = decode_rows(spark, tbl, [payload, None])
    assert values(rows, "v") == [(expected,), (None,)]
    ddl = f"v {_spark_ddl(flink_type)}"
    assert [bytes(v) if v is not None else None for v in encoded(spark, tbl, "value", [(expected,), (None,)], ddl)] == [
        payload if flink_type != "BOOLEAN" else b"\x01",
        None,
    ]


def _spark_ddl(flink_type: str) -> str:
    return {"BYTES": "BINARY"}.get(flink_type, flink_type)


def test_raw_strings_with_charset(spark: SparkSession) -> None:
    tbl = table("v STRING", {"format": "raw", "raw.charset": "UTF-16BE"})
    rows, _ = decode_rows(spark, tbl, ["Zoë".encode("utf-16-be")])
    assert values(rows, "v") == [("Zoë",)]
    assert [bytes(v) for v in encoded(spark, tbl, "value", [("Zoë",)], "v STRING")] == ["Zoë".encode("utf-16-be")]


def test_raw_wrong_size_fails_as_flink(spark: SparkSession) -> None:
    tbl = table("v INT", {"format": "raw"})
    assert failure_of(spark, tbl, [b"\x00\x01"]) == (
        "Malformed raw record in topic 'orders' partition 0 offset 0: "
        "Size of data received for deserializing INT type is not 4."
    )


def test_raw_charset_spark_cannot_decode_is_rejected() -> None:
    tbl = table("v STRING", {"format": "raw", "raw.charset": "windows-1252"})
    with pytest.raises(PipelineError, match="Charset 'windows-1252' is not supported on Spark"):
        PayloadFormat.of(tbl, "value")


# ---------------------------------------------------------------------------------------------------------
# Metadata and upsert-kafka
# ---------------------------------------------------------------------------------------------------------


def test_metadata_columns_are_cast_to_their_declared_types(spark: SparkSession) -> None:
    columns = (
        "id INT, `partition` BIGINT METADATA VIRTUAL, `offset` BIGINT METADATA VIRTUAL, "
        "ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp', epoch BIGINT METADATA FROM 'timestamp' VIRTUAL, "
        "kind STRING METADATA FROM 'timestamp-type' VIRTUAL, hs MAP<STRING, BYTES> METADATA FROM 'headers', "
        "epoch_leader INT METADATA FROM 'leader-epoch' VIRTUAL, t STRING METADATA FROM 'topic' VIRTUAL"
    )
    tbl = table(columns, {"format": "json"})
    rows, _ = decode_rows(spark, tbl, ['{"id": 1}'], headers=[("a", b"1"), ("b", None), ("a", b"2")])
    row = rows[0].asDict()
    assert row["partition"] == 0 and row["offset"] == 0 and row["t"] == "orders"
    assert row["ts"] == datetime(2024, 5, 6, 7, 8, 9, 123000)
    assert row["epoch"] == 1714979289
    assert row["kind"] == "CreateTime"
    assert row["hs"] == {"a": bytearray(b"2"), "b": None}
    assert row["epoch_leader"] == 3
    assert list(rows[0].asDict())[-3:] == ["__topic", "__partition", "__offset"]


def test_upsert_kafka_tombstones_are_deletes(spark: SparkSession) -> None:
    base = {k: v for k, v in KAFKA.items() if k != "scan.startup.mode"}
    options = {"connector": "upsert-kafka", "key.format": "json", "value.format": "json"}
    tbl = table("id INT, name STRING", options, extra=", PRIMARY KEY (id) NOT ENFORCED", base=base)
    rows, _ = decode_rows(spark, tbl, [('{"id": 1}', '{"id": 1, "name": "a"}'), ('{"id": 1}', None)])
    assert values(rows, "id", "name", "__deleted") == [(1, "a", False), (1, None, True)]


# ---------------------------------------------------------------------------------------------------------
# The same decoding in the file source, and the datagen source
# ---------------------------------------------------------------------------------------------------------


def stream_rows(frame: DataFrame, checkpoint: Path, until: int | None = None) -> tuple[list[Row], dict[str, Any]]:
    """Rows a streaming frame produces (AvailableNow, or until `until` rows arrived) and the last progress."""
    rows: list[Row] = []
    writer = frame.writeStream.foreachBatch(lambda batch, _: rows.extend(batch.collect()))
    writer = writer.option("checkpointLocation", str(checkpoint))
    if until is None:
        query = writer.trigger(availableNow=True).start()
        query.awaitTermination(120)
    else:
        query = writer.trigger(processingTime="200 milliseconds").start()
        deadline = time.monotonic() + 120
        while len(rows) < until and time.monotonic() < deadline and query.exception() is None:
            time.sleep(0.2)
        query.stop()
    error = query.exception()
    if error is not None:
        raise error
    return rows, dict(query.lastProgress or {})


FILES = {"connector": "filesystem", "format": "json"}


def test_file_source_decodes_lines_with_the_json_format(spark: SparkSession, tmp_path: Path) -> None:
    (tmp_path / "in" / "dt=2024-01-01").mkdir(parents=True)
    (tmp_path / "in" / "dt=2024-01-01" / "a.json").write_text('{"id": 1}\nnot json\n{"id": "2"}\n')
    options = {**FILES, "path": str(tmp_path / "in"), "json.ignore-parse-errors": "true"}
    sql = "id INT, dt STRING, file STRING METADATA FROM 'file.name' VIRTUAL"
    loaded = load_text(f"CREATE TABLE t ({sql}) PARTITIONED BY (dt) WITH ({with_clause(options)});", "t.sql")
    tbl = loaded.pipeline.table("t")
    assert tbl is not None
    rows, progress = stream_rows(source_dataframe(spark, tbl), tmp_path / "cp")
    assert sorted(values(rows, "id", "dt", "file")) == [(1, "2024-01-01", "a.json"), (2, "2024-01-01", "a.json")]
    assert progress["observedMetrics"]["malformed_records_t"]["records"] == 1


def test_file_source_malformed_line_names_the_file(spark: SparkSession, tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.json").write_text("{oops\n")
    options = {**FILES, "path": str(tmp_path / "in")}
    tbl = load_text(f"CREATE TABLE t (id INT) WITH ({with_clause(options)});", "t.sql").pipeline.table("t")
    assert tbl is not None
    with pytest.raises(StreamingQueryException) as error:
        stream_rows(source_dataframe(spark, tbl), tmp_path / "cp")
    assert f"Malformed JSON record in file 'file:{tmp_path / 'in' / 'a.json'}': not a JSON object" in str(error.value)


def test_datagen_sequences_and_random_ranges(spark: SparkSession, tmp_path: Path) -> None:
    options = {
        "connector": "datagen",
        "rows-per-second": "50",
        "number-of-rows": "100",
        "fields.id.kind": "sequence",
        "fields.id.start": "10",
        "fields.id.end": "14",
        "fields.n.min": "1",
        "fields.n.max": "3",
        "fields.s.length": "8",
        "fields.ts.max-past": "10 s",
    }
    sql = "id BIGINT, n INT, s STRING, ok BOOLEAN, ts TIMESTAMP(3)"
    tbl = load_text(f"CREATE TABLE g ({sql}) WITH ({with_clause(options)});", "g.sql").pipeline.table("g")
    assert tbl is not None
    before = datetime.now()
    rows, _ = stream_rows(source_dataframe(spark, tbl), tmp_path / "cp", until=5)
    assert sorted(r["id"] for r in rows) == [10, 11, 12, 13, 14]  # the shortest sequence bounds the table
    assert all(1 <= r["n"] <= 3 for r in rows)
    assert all(len(r["s"]) == 8 and int(r["s"], 16) >= 0 for r in rows)
    assert all(isinstance(r["ok"], bool) for r in rows)
    assert all(before - timedelta(seconds=11) <= r["ts"] <= datetime.now() for r in rows)
