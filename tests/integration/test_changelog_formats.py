"""The changelog formats `debezium-json`, `canal-json` and `maxwell-json`: change events read as upserts and deletes,
Flink's errors for events it cannot read, and the pipelines validate refuses because Spark cannot retract (or Flink
refuses them too).

Flink's final tables for the same events are compared in the conformance suite (cases `debezium_json*`,
`canal_json`, `maxwell_json`)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from support.formats import decode_rows, failure_of, table, values

from connector.diagnostics import PipelineError
from connector.formats.payload import PayloadFormat
from connector.sql.frontend import compile_file

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

COLUMNS = "id INT, name STRING, weight DECIMAL(10, 2)"


def event(op: str, before: dict[str, Any] | None, after: dict[str, Any] | None, **extra: Any) -> str:
    return json.dumps({"before": before, "after": after, "op": op, "ts_ms": 1589362330904, **extra})


SCOOTER = {"id": 1, "name": "scooter", "weight": 3.14}
HEAVIER = {"id": 1, "name": "scooter", "weight": 5.18}


def test_events_become_inserts_deletes_and_updates_with_their_old_row(spark: SparkSession) -> None:
    tbl = table(COLUMNS, {"format": "debezium-json"})
    records: list[str | bytes | None] = [
        event("r", None, SCOOTER), event("c", None, {"id": 2, "name": "car", "weight": "8.1"}),
        event("u", SCOOTER, HEAVIER), event("d", HEAVIER, None),
        None, b"",  # Debezium's tombstone after a delete, and an empty value: no row
    ]  # fmt: skip
    rows, malformed = decode_rows(spark, tbl, records)
    kinds = values(rows, "id", "name", "weight", "__deleted", "__update_before")
    assert [(*v[:2], str(v[2]), *v[3:]) for v in kinds] == [
        (1, "scooter", "3.14", False, False),
        (2, "car", "8.10", False, False),
        (1, "scooter", "3.14", True, True),  # UPDATE_BEFORE: retracts the old row
        (1, "scooter", "5.18", False, False),  # UPDATE_AFTER
        (1, "scooter", "5.18", True, False),  # DELETE
    ]
    assert malformed == 0


def test_schema_include_reads_the_event_from_the_payload_field(spark: SparkSession) -> None:
    tbl = table(COLUMNS, {"format": "debezium-json", "debezium-json.schema-include": "true"})
    schema = {"type": "struct", "fields": [], "optional": False, "name": "dbserver1.inventory.products.Envelope"}
    wrapped = json.dumps({"schema": schema, "payload": json.loads(event("d", SCOOTER, None))})
    rows, _ = decode_rows(spark, tbl, [wrapped])
    assert values(rows, "id", "name", "__deleted") == [(1, "scooter", True)]


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        (event("x", None, SCOOTER), 'unknown "op" value "x"'),
        (event("u", None, HEAVIER), 'the "before" field of UPDATE message is null'),
        (event("d", None, None), 'the "before" field of DELETE message is null'),
        (event("c", None, None), 'the "after" field is null'),
        (json.dumps({"after": SCOOTER}), 'no "op" field'),
        ("not json", "not a JSON object"),
        (event("c", None, {"id": "one", "name": "x", "weight": 1}), "field 'id' (INT) cannot be read"),
    ],
)
def test_an_event_flink_cannot_read_fails_the_query_naming_its_offset(
    spark: SparkSession, record: str, expected: str
) -> None:
    message = failure_of(spark, table(COLUMNS, {"format": "debezium-json"}), [event("c", None, SCOOTER), record])
    assert message.startswith("Malformed Debezium JSON record in topic 'orders' partition 0 offset 1: ")
    assert expected in message
    assert "'debezium-json.ignore-parse-errors' = 'true'" in message


def test_ignore_parse_errors_skips_bad_events_and_nulls_bad_fields(spark: SparkSession) -> None:
    tbl = table(COLUMNS, {"format": "debezium-json", "debezium-json.ignore-parse-errors": "true"})
    records = [
        event("x", None, SCOOTER), "not json", event("u", None, HEAVIER),
        event("c", None, {"id": "one", "name": "x", "weight": 1}), event("c", None, SCOOTER),
    ]  # fmt: skip
    rows, malformed = decode_rows(spark, tbl, records)
    assert values(rows, "id", "name", "__deleted") == [(None, "x", False), (1, "scooter", False)]
    assert malformed == 3


def canal(kind: str, data: Sequence[Mapping[str, Any] | None] | None, **extra: Any) -> str:
    return json.dumps({"data": data, "database": "inventory", "table": "products", "type": kind, **extra})


def test_canal_messages_hold_several_rows_and_ddl_or_other_tables_are_skipped(spark: SparkSession) -> None:
    tbl = table(COLUMNS, {"format": "canal-json", "canal-json.database.include": "inv.*"})
    two = [{"id": "1", "name": "scooter", "weight": "3.14"}, {"id": "2", "name": "car", "weight": "8.1"}]
    records: list[str | bytes | None] = [
        canal("INSERT", two), canal("UPDATE", [HEAVIER], old=[{"weight": "3.14"}]),
        canal("CREATE", None, isDdl=True, sql="CREATE TABLE t (id INT)"),
        canal("INSERT", [SCOOTER], database="other"), canal("DELETE", [two[1]]), canal("INSERT", []), None,
    ]  # fmt: skip
    rows, malformed = decode_rows(spark, tbl, records)
    assert [(*v[:2], str(v[2]), *v[3:]) for v in values(rows, "id", "name", "weight", "__deleted", "__offset")] == [
        (1, "scooter", "3.14", False, 0), (2, "car", "8.10", False, 0),
        (1, "scooter", "3.14", True, 1), (1, "scooter", "5.18", False, 1),  # the update's old row, then its new one
        (2, "car", "8.10", True, 4),
    ]  # fmt: skip
    assert malformed == 0


def test_a_canal_update_s_old_rows_are_its_new_rows_with_the_changed_fields_of_old_as_flink_builds_them(
    spark: SparkSession,
) -> None:
    new = [{"id": 1, "name": "scooter", "weight": "5.18"}, {"id": 2, "name": "van", "weight": "8.1"}]
    # Flink copies a field of the new row into the old one only when no "old" object of the message has it:
    # row 2 changed only its name, yet its old weight is NULL because row 1's "old" has a weight.
    record = canal("UPDATE", new, old=[{"weight": "3.14"}, {"name": "car"}])
    rows, _ = decode_rows(spark, table(COLUMNS, {"format": "canal-json"}), [record])
    kinds = values(rows, "id", "name", "weight", "__update_before")
    assert [(v[0], v[1], None if v[2] is None else str(v[2]), v[3]) for v in kinds] == [
        (1, None, "3.14", True), (1, "scooter", "5.18", False), (2, "car", None, True), (2, "van", "8.10", False),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        (canal("TRUNCATE", [SCOOTER]), 'unknown "type" value "TRUNCATE"'),
        (canal("INSERT", None), 'the "data" field is null'),
        (canal("UPDATE", [HEAVIER]), 'the "old" field of an UPDATE is null'),
        (canal("INSERT", [None]), "a change event without its row"),
        (json.dumps({"data": [SCOOTER]}), 'no "type" field'),
    ],
)
def test_a_canal_message_flink_cannot_read_fails_the_query(spark: SparkSession, record: str, expected: str) -> None:
    message = failure_of(spark, table(COLUMNS, {"format": "canal-json"}), [record])
    assert message.startswith("Malformed Canal JSON record in topic 'orders' partition 0 offset 0: ")
    assert expected in message


def maxwell(kind: str, data: dict[str, Any] | None, **extra: Any) -> str:
    return json.dumps({"database": "inventory", "table": "products", "type": kind, "data": data, **extra})


def test_maxwell_messages_are_inserts_updates_and_deletes(spark: SparkSession) -> None:
    tbl = table(COLUMNS, {"format": "maxwell-json", "maxwell-json.ignore-parse-errors": "true"})
    records = [
        maxwell("insert", SCOOTER), maxwell("update", HEAVIER, old={"weight": 3.14}), maxwell("delete", HEAVIER),
        maxwell("bootstrap-start", None), maxwell("update", HEAVIER),
    ]  # fmt: skip
    rows, malformed = decode_rows(spark, tbl, records)
    assert [(*v[:1], str(v[1]), v[2]) for v in values(rows, "id", "weight", "__deleted")] == [
        (1, "3.14", False), (1, "3.14", True), (1, "5.18", False), (1, "5.18", True),
    ]  # fmt: skip
    assert malformed == 2
    message = failure_of(spark, table(COLUMNS, {"format": "maxwell-json"}), [maxwell("bootstrap-start", None)])
    assert message.startswith("Malformed Maxwell JSON record in topic 'orders' partition 0 offset 0: ")
    assert 'unknown "type" value "bootstrap-start"' in message


@pytest.mark.parametrize("fmt", ["debezium-json", "canal-json", "maxwell-json"])
def test_a_changelog_format_cannot_be_the_key_format(fmt: str) -> None:
    tbl = table(COLUMNS, {"key.format": fmt, "key.fields": "id", "value.format": "json"})
    with pytest.raises(PipelineError) as error:
        PayloadFormat.of(tbl, "key")
    assert "A key format should only deal with INSERT-only records" in str(error.value)


PIPELINE = """
CREATE TABLE products (id INT, name STRING{source_key}) WITH (
  'connector' = 'kafka', 'topic' = 'products', 'properties.bootstrap.servers' = 'localhost:9092',
  'scan.startup.mode' = 'earliest-offset', 'format' = 'debezium-json'
);
CREATE TABLE sink (id INT, name STRING{sink_key}) WITH ({sink});
INSERT INTO sink {query};
"""
UPSERT = (
    "'connector' = 'upsert-kafka', 'topic' = 'out', 'properties.bootstrap.servers' = 'localhost:9092', "
    "'key.format' = 'json', 'value.format' = 'json'"
)
KEY = ", PRIMARY KEY (id) NOT ENFORCED"


def _errors(tmp_path: Path, sink: str, query: str = "SELECT id, name FROM products", source_key: str = KEY,
            sink_key: str = KEY) -> list[str]:  # fmt: skip
    path = tmp_path / "p.sql"
    path.write_text(PIPELINE.format(source_key=source_key, sink_key=sink_key, sink=sink, query=query))
    return [f"{d.code}: {d.message}" for d in compile_file(path).errors]


def test_validate_accepts_a_projection_of_the_changelog_into_an_upsert_sink_keyed_like_it(tmp_path: Path) -> None:
    assert _errors(tmp_path, UPSERT) == []
    assert _errors(tmp_path, UPSERT, "SELECT id AS id, UPPER(name) FROM products") == []
    assert _errors(tmp_path, "'connector' = 'print'", sink_key="") == []


def test_validate_accepts_count_sum_and_avg_over_the_changelog_which_retract(tmp_path: Path) -> None:
    query = "SELECT CAST(SUM(id) AS INT), name FROM products WHERE id > 0 GROUP BY name HAVING AVG(id) < COUNT(*)"
    assert _errors(tmp_path, UPSERT, query, sink_key=", PRIMARY KEY (name) NOT ENFORCED") == []
    extremes = "SELECT MAX(id) - MIN(id), name FROM products GROUP BY name HAVING COUNT(*) > 1"  # the values kept
    assert _errors(tmp_path, UPSERT, extremes, sink_key=", PRIMARY KEY (name) NOT ENFORCED") == []


def test_validate_refuses_what_spark_cannot_retract_or_flink_refuses(tmp_path: Path) -> None:
    kafka = "'connector' = 'kafka', 'topic' = 'o', 'properties.bootstrap.servers' = 'x', 'format' = '{fmt}'"
    (aggregate,) = _errors(tmp_path, UPSERT, "SELECT CAST(COUNT(*) AS INT), LAST_VALUE(name) FROM products")
    assert aggregate.startswith("changelog-source:") and "with LAST_VALUE, which keeps every value it saw" in aggregate
    distinct_count = "SELECT CAST(COUNT(DISTINCT id) AS INT), name FROM products GROUP BY name"
    assert _errors(tmp_path, UPSERT, distinct_count, sink_key=", PRIMARY KEY (name) NOT ENFORCED") == []  # kept
    (filtered,) = _errors(tmp_path, UPSERT, "SELECT id, name FROM products WHERE id > 1")
    assert filtered.startswith("changelog-source:") and "cannot retract rows" in filtered
    join = "SELECT a.id, CAST(COUNT(*) AS STRING) FROM products a JOIN products b ON a.id = b.id GROUP BY a.id"
    (joined,) = _errors(tmp_path, UPSERT, join)
    assert joined.startswith("changelog-source:") and "a join" in joined
    (append,) = _errors(tmp_path, kafka.format(fmt="json"), sink_key="")
    assert append.startswith("insert-changelog:") and "changelog table 'products'" in append
    (no_key,) = _errors(tmp_path, UPSERT, source_key="")
    assert no_key.startswith("upsert-key:") and "upsert key: none" in no_key
    (other_key,) = _errors(tmp_path, UPSERT, "SELECT CAST(name AS INT), CAST(id AS STRING) FROM products")
    assert other_key.startswith("upsert-key:")


@pytest.mark.parametrize("fmt", ["debezium-json", "canal-json", "maxwell-json"])
def test_validate_accepts_writing_a_changelog_format_from_queries_that_carry_their_old_rows(
    tmp_path: Path, fmt: str
) -> None:
    changes = f"'connector' = 'kafka', 'topic' = 'o', 'properties.bootstrap.servers' = 'x', 'format' = '{fmt}'"
    assert _errors(tmp_path, changes, sink_key="") == []
    assert _errors(tmp_path, changes, "SELECT id, name FROM products WHERE id > 1", sink_key="") == []


def test_validate_writes_debezium_json_from_an_aggregate_of_a_cdc_changelog_not_of_upsert_kafka(
    tmp_path: Path,
) -> None:
    debezium = "'connector' = 'kafka', 'topic' = 'o', 'properties.bootstrap.servers' = 'x', 'format' = 'debezium-json'"
    counted = "SELECT CAST(COUNT(*) AS INT), name FROM products GROUP BY name HAVING MAX(id) > 1"
    assert _errors(tmp_path, debezium, counted, sink_key="") == []
    upserts = tmp_path / "upserts.sql"
    upserts.write_text(
        PIPELINE.format(source_key=KEY, sink_key="", sink=debezium, query=counted.split(" HAVING")[0]).replace(
            "'connector' = 'kafka', 'topic' = 'products', 'properties.bootstrap.servers' = 'localhost:9092',\n"
            "  'scan.startup.mode' = 'earliest-offset', 'format' = 'debezium-json'",
            UPSERT.replace("'out'", "'products'"),
        )
    )
    (aggregate,) = [f"{d.code}: {d.message}" for d in compile_file(upserts).errors]
    assert aggregate.startswith("insert-changelog:") and "upsert-kafka table 'products'" in aggregate
    (schema,) = _errors(tmp_path, debezium + ", 'debezium-json.schema-include' = 'true'", sink_key="")
    assert "'debezium-json.schema-include' is not supported for writing" in schema


def test_the_formats_metadata_is_read_as_value_keys(spark: SparkSession) -> None:
    columns = (
        f"{COLUMNS}, origin STRING METADATA FROM 'value.source.table' VIRTUAL, "
        "ingested TIMESTAMP_LTZ(3) METADATA FROM 'value.ingestion-timestamp' VIRTUAL, "
        "props MAP<STRING, STRING> METADATA FROM 'value.source.properties' VIRTUAL, "
        "part INT METADATA FROM 'partition' VIRTUAL"
    )
    tbl = table(columns, {"format": "debezium-json"})
    source = {"db": "inventory", "table": "products", "ts_ms": 1589362330000, "snapshot": "false"}
    rows, _ = decode_rows(spark, tbl, [event("c", None, SCOOTER, source=source)])
    (row,) = rows
    assert (row["origin"], row["part"], row["props"]["db"], row["props"]["ts_ms"]) == ("products", 0, "inventory",
                                                                                        "1589362330000")  # fmt: skip
    assert row["ingested"].timestamp() == 1589362330.904


def test_validate_names_the_formats_metadata_keys_and_checks_their_types(tmp_path: Path) -> None:
    path = tmp_path / "m.sql"
    path.write_text(
        "CREATE TABLE t (id INT, a STRING METADATA FROM 'value.source.tabel' VIRTUAL, "
        "b BOOLEAN METADATA FROM 'value.ingestion-timestamp' VIRTUAL) WITH ('connector' = 'kafka', "
        "'topic' = 't', 'properties.bootstrap.servers' = 'x', 'format' = 'maxwell-json');"
    )
    first, second = (d.message for d in compile_file(path).errors)
    assert "Invalid metadata key 'value.source.tabel'" in first and "value.primary-key-columns" in first
    assert "cannot be declared as 'BOOLEAN'" in second
