"""Connectors and formats are found through registries: a format added from outside the project is validated,
documented and run like a built-in one, with no change to any connector, the validator or the engine."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import datetime, timezone
from typing import TYPE_CHECKING

import pytest
from pyspark.sql import Column, Observation
from pyspark.sql import functions as F
from pyspark.sql.types import BinaryType, StringType

from connector.catalog.loader import load_text
from connector.catalog.model import Table
from connector.connectors import registry
from connector.connectors.kafka.reading import kafka_rows
from connector.connectors.kafka.records import SCHEMA
from connector.formats import registry as format_registry
from connector.formats.payload import Codec, Decoded, PayloadFormat, encode
from connector.options.declarations import ConfigOption
from connector.options.factory import Format
from connector.options.reference import render_markdown
from connector.options.types import STRING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PAIR_DELIMITER = ConfigOption("pair-delimiter", STRING, "Separator between key=value pairs.", default="&")


class KeyValueCodec(Codec):
    """`id=7&name=ann`: each field as key=value text, as in a URL query string."""

    label = "key=value"

    def decode(self, payload: Column, fmt: PayloadFormat, stage_prefix: str) -> Decoded:
        delimiter = str(fmt.options["pair-delimiter"])
        pairs_name = f"{stage_prefix}_pairs"
        stage = {pairs_name: F.str_to_map(payload.cast(StringType()), F.lit(delimiter), F.lit("="))}
        pairs = F.col(pairs_name)
        values = {f.column: F.element_at(pairs, F.lit(f.name)).try_cast(f.data_type) for f in fmt.fields}
        nothing = F.lit(None).cast(StringType())
        return Decoded(stage, values, pairs.isNull(), F.lit(False), nothing)

    def encode(self, fmt: PayloadFormat, row: Mapping[str, Column]) -> Column:
        delimiter = str(fmt.options["pair-delimiter"])
        pairs = [F.concat(F.lit(f"{f.name}="), row[f.column].cast(StringType())) for f in fmt.fields]
        return F.concat_ws(delimiter, *pairs).cast(BinaryType())


KEY_VALUE = Format("kv", "key=value pairs, one record per message.", (PAIR_DELIMITER,), codec=KeyValueCodec())
KAFKA = "'connector' = 'kafka', 'topic' = 'orders', 'properties.bootstrap.servers' = 'localhost:9092'"


def orders(options: str) -> Table:
    loaded = load_text(f"CREATE TABLE orders (id INT, name STRING) WITH ({KAFKA}, {options});", "orders.sql")
    table = loaded.pipeline.table("orders")
    assert table is not None
    return table


@pytest.fixture
def key_value() -> Iterator[Format]:
    format_registry.register(KEY_VALUE)
    yield KEY_VALUE
    format_registry.unregister(KEY_VALUE.identifier)


def errors(table: Table) -> list[str]:
    return [d.message for d in registry.validate_table(table) if d.severity == "error"]


def test_an_unregistered_format_is_unknown_and_the_known_ones_are_listed() -> None:
    (message,) = errors(orders("'format' = 'kv'"))
    assert message.startswith("Unknown format 'kv'.")
    assert "json, csv, raw" in message


def test_a_registered_format_is_validated_with_its_own_options(key_value: Format) -> None:
    assert errors(orders("'format' = 'kv', 'kv.pair-delimiter' = ';'")) == []
    (message,) = errors(orders("'format' = 'kv', 'kv.pair-delimter' = ';'"))
    assert message == (
        "Unsupported option 'kv.pair-delimter' for format 'kv'. Did you mean 'kv.pair-delimiter'? "
        "Supported options: kv.pair-delimiter."
    )
    assert registry.format_options(orders("'value.format' = 'kv'"), "value") == ("kv", {"pair-delimiter": "&"})


def test_a_registered_format_is_in_the_options_reference(key_value: Format) -> None:
    assert "Separator between key=value pairs." in render_markdown()


def test_a_registered_format_reads_and_writes_kafka_records(key_value: Format, spark: SparkSession) -> None:
    table = orders("'format' = 'kv', 'kv.pair-delimiter' = ';'")
    stamp = datetime(2024, 5, 6, 7, 8, 9, tzinfo=timezone.utc)
    records = [b"id=7;name=ann", b"name=bob;id=8", None]
    raw: list[tuple[object, ...]] = [
        (None, value, "orders", 0, offset, stamp, "CreateTime", [], 0) for offset, value in enumerate(records)
    ]
    observation = Observation("malformed")
    rows = kafka_rows(spark.createDataFrame(raw, SCHEMA), table, observation).collect()
    assert [(r["id"], r["name"]) for r in rows] == [(7, "ann"), (8, "bob")]

    fmt = PayloadFormat.of(table, "value")
    assert fmt is not None
    frame = spark.createDataFrame([(9, "cy")], "id INT, name STRING")
    (written,) = frame.select(encode(fmt, {"id": F.col("id"), "name": F.col("name")})).collect()
    assert bytes(written[0]) == b"id=9;name=cy"
