"""The `protobuf` format: messages found by the Java class name protoc gives them in a descriptor set compiled by a
real protoc (from Maven Central), checked offline as Flink checks them at job start, decoded and encoded with
Google's protobuf package and read back independently of the format.

Real Flink's output for the same messages is compared in the conformance suite (cases `protobuf_proto3`,
`protobuf_proto2`, `protobuf_tombstone`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from support.formats import decode_rows, encoded, failure_of, table, values

from connector.dev import protoc
from connector.formats.protobuf_messages import messages
from connector.sql.frontend import compile_file

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PROTO = """
syntax = "proto3";
package shop.v1;

message OrderPlaced {
  int64 id = 1;
  string customer = 2;
  uint64 cents = 3;
  Item item = 4;
  map<string, Item> extras = 5;
  Kind kind = 6;
  message Item { string sku = 1; repeated int32 sizes = 2; }
  enum Kind { ONLINE = 0; STORE = 1; }
}
"""
CLASS = "shop.v1.OrderEvents$OrderPlaced"  # no java_package: the package; no outer class name: the file's, camel-cased
COLUMNS = (
    "id BIGINT, customer STRING, cents BIGINT, item ROW<sku STRING, sizes ARRAY<INT>>, "
    "extras MAP<STRING, ROW<sku STRING, sizes ARRAY<INT>>>, kind STRING"
)
SPARK_DDL = (
    "id bigint, customer string, cents bigint, item struct<sku:string,sizes:array<int>>, "
    "extras map<string,struct<sku:string,sizes:array<int>>>, kind string"
)


@pytest.fixture(scope="module")
def descriptor(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("proto")
    source = folder / "order_events.proto"
    source.write_text(PROTO)
    return protoc.compile_protos([source], folder / "order_events.desc")


def _options(descriptor: Path, **more: str) -> dict[str, str]:
    return {
        "format": "protobuf",
        "protobuf.descriptor-file": str(descriptor),
        "protobuf.message-class-name": CLASS,
        **{f"protobuf.{k.replace('_', '-')}": v for k, v in more.items()},
    }


def _message(descriptor: Path, **fields: Any) -> bytes:
    built = messages(descriptor.read_bytes()).message_class(CLASS)(**fields)
    return bytes(built.SerializeToString())


def _errors(tmp_path: Path, columns: str, options: dict[str, str]) -> list[str]:
    with_clause = ", ".join(f"'{k}' = '{v}'" for k, v in options.items())
    path = tmp_path / "p.sql"
    path.write_text(
        f"CREATE TABLE src ({columns}) WITH ('connector' = 'kafka', 'topic' = 't', 'scan.startup.mode' = "
        f"'earliest-offset', 'properties.bootstrap.servers' = 'localhost:9092', {with_clause});\n"
        "CREATE TABLE output (id BIGINT) WITH ('connector' = 'blackhole');\n"
        "INSERT INTO output SELECT id FROM src;\n"
    )
    return [f"{d.code}: {d.message}" for d in compile_file(path).errors]


def test_validate_checks_the_descriptor_class_and_columns_offline(tmp_path: Path, descriptor: Path) -> None:
    assert _errors(tmp_path, COLUMNS, _options(descriptor)) == []
    (missing,) = _errors(tmp_path, "id BIGINT", _options(tmp_path / "nowhere.desc"))
    assert missing.startswith("invalid-option-value: cannot read the descriptor set") and "nowhere.desc" in missing
    (not_a_set,) = _errors(tmp_path, "id BIGINT", _options(Path(__file__)))
    assert "not a FileDescriptorSet" in not_a_set
    (unknown,) = _errors(tmp_path, "id BIGINT", {**_options(descriptor), "protobuf.message-class-name": "OrderPlaced"})
    assert unknown.endswith(f"has Java class 'OrderPlaced'; it has: {CLASS}, shop.v1.OrderEvents$OrderPlaced$Item")
    (absent,) = _errors(tmp_path, "id BIGINT, total DOUBLE", _options(descriptor))
    assert "Column total does not exists in definition of proto class." in absent
    (wrong,) = _errors(tmp_path, "id BIGINT, customer INT", _options(descriptor))
    assert wrong.startswith("unsupported-type: Column customer: Protobuf field type does not match column type, ")
    assert "STRING(protobuf) is not compatible of INTEGER (message shop.v1.OrderPlaced)" in wrong
    (nested,) = _errors(tmp_path, "id BIGINT, item ROW<sku STRING, sizes INT>", _options(descriptor))
    assert "Column item: Column sizes: Unexpected LogicalType: INTEGER. It should be ArrayType" in nested
    required = _errors(tmp_path, "id BIGINT", {"format": "protobuf", "protobuf.message-class-name": CLASS})
    assert any("protobuf.descriptor-file" in e for e in required), required


def test_messages_read_with_flinks_rules_and_round_trip(spark: SparkSession, descriptor: Path) -> None:
    tbl = table(COLUMNS, _options(descriptor))
    full = _message(
        descriptor, id=7, customer="ann", cents=2**64 - 1, item={"sku": "a", "sizes": [1, 2]},
        extras={"gift": {"sku": "g"}}, kind=1,
    )  # fmt: skip
    rows, malformed = decode_rows(spark, tbl, [full, _message(descriptor, id=8)])
    assert malformed == 0
    assert values(rows, "id", "customer", "cents", "item", "extras", "kind") == [
        (7, "ann", -1, ("a", [1, 2]), {"gift": ("g", None)}, "STORE"),  # uint64 as Java's long; empty list NULL
        (8, "", 0, None, None, "ONLINE"),  # proto3 scalars read their defaults, an unset message NULL
    ]
    written = encoded(spark, tbl, "value", [tuple(r[n] for n in tbl_names(tbl)) for r in rows], SPARK_DDL)
    again, _ = decode_rows(spark, tbl, written)
    assert values(again, *tbl_names(tbl)) == values(rows, *tbl_names(tbl))


def tbl_names(tbl: Any) -> list[str]:
    return [c.name for c in tbl.columns]


def test_a_record_that_does_not_parse_fails_naming_its_offset_or_is_skipped(
    spark: SparkSession, descriptor: Path
) -> None:
    good = _message(descriptor, id=1)
    message = failure_of(spark, table(COLUMNS, _options(descriptor)), [good, b"\xff\xff\xff"])
    assert message.startswith("Malformed protobuf record in topic 'orders' partition 0 offset 1: Failed to ")
    assert message.endswith("Set 'protobuf.ignore-parse-errors' = 'true' to skip malformed records.")
    tombstone = failure_of(spark, table(COLUMNS, _options(descriptor)), [good, None])
    assert "offset 1: a NULL value (a tombstone), which no protobuf message is" in tombstone
    rows, malformed = decode_rows(spark, table(COLUMNS, _options(descriptor, ignore_parse_errors="true")),
                                  [good, b"\xff\xff\xff", None])  # fmt: skip
    assert values(rows, "id") == [(1,)] and malformed == 2


def test_protobuf_as_key_and_value_format(spark: SparkSession, descriptor: Path) -> None:
    options = {
        "key.format": "protobuf",
        "key.protobuf.descriptor-file": str(descriptor),
        "key.protobuf.message-class-name": f"{CLASS}$Item",
        "key.fields": "sku",
        "value.format": "protobuf",
        "value.protobuf.descriptor-file": str(descriptor),
        "value.protobuf.message-class-name": CLASS,
        "value.fields-include": "EXCEPT_KEY",
    }
    tbl = table("sku STRING, id BIGINT, customer STRING", options)
    keys = encoded(spark, tbl, "key", [("k-1",)], "sku string")
    rows, _ = decode_rows(spark, tbl, [(keys[0], _message(descriptor, id=3, customer="cy"))])
    assert values(rows, "sku", "id", "customer") == [("k-1", 3, "cy")]


def test_a_row_without_a_proto2_required_field_fails_the_write_naming_the_table(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Flink's serializer fails the job (FlinkRuntimeException) on a message missing a required field; so does this,
    saying which table and message."""
    source = tmp_path / "legacy.proto"
    source.write_text(
        'syntax = "proto2";\npackage legacy;\nmessage Event { required int64 id = 1; optional string name = 2; }\n'
    )
    descriptor = protoc.compile_protos([source], tmp_path / "legacy.desc")
    options = {"format": "protobuf", "protobuf.descriptor-file": str(descriptor),
               "protobuf.message-class-name": "legacy.Legacy$Event"}  # fmt: skip
    tbl = table("id BIGINT, name STRING", options)
    assert len(encoded(spark, tbl, "value", [(1, None)], "id bigint, name string")[0]) == 2  # id 1; name unset
    with pytest.raises(Exception, match=r"ProtobufWriteError: Table 'orders': cannot write a row as legacy.Event: "):
        encoded(spark, tbl, "value", [(None, "x")], "id bigint, name string")
