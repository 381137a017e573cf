"""Aggregates over changelog sources across runs: the old rows they retract survive a restart.

An upsert-kafka record carries only the new row of its key; the row it replaces was read by an earlier micro-batch,
perhaps by an earlier run. Flink keeps it in ChangelogNormalize's state; here it lives in the query's checkpoint.
Real broker, `kafka-sql run` twice on one checkpoint, the sink's final table read back from Kafka.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, TopicPartition
from pyspark.sql import SparkSession
from support.commands import explain_json, run

PIPELINE = """
CREATE TABLE users (id INT, country STRING, PRIMARY KEY (id) NOT ENFORCED) WITH (
  'connector' = 'upsert-kafka', 'topic' = '{{ var("users") }}', 'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.bounded.mode' = 'latest-offset', 'key.format' = 'json', 'value.format' = 'json'
);
CREATE TABLE per_country (country STRING, users BIGINT, PRIMARY KEY (country) NOT ENFORCED) WITH (
  'connector' = 'upsert-kafka', 'topic' = '{{ var("per_country") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}', 'key.format' = 'json', 'value.format' = 'json'
);
INSERT INTO per_country SELECT country, COUNT(*) FROM users WHERE id > 0 GROUP BY country;
"""


def final_table(bootstrap: str, topic: str) -> dict[str, Any]:
    """The upsert topic's table: the last value of each key, tombstones removing theirs."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "test-final-table", "enable.partition.eof": True})
    table: dict[str, Any] = {}
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        while True:
            message = consumer.poll(30)
            assert message is not None, f"timed out reading {topic}"
            error = message.error()
            if error is not None:
                assert error.code() == KafkaError._PARTITION_EOF, error
                return table
            key = json.loads(message.key() or b"")["country"]
            value = message.value()
            if value is None:
                table.pop(key, None)
            else:
                table[key] = json.loads(value)["users"]
    finally:
        consumer.close()


def test_an_aggregate_over_upsert_kafka_retracts_rows_read_before_a_restart(
    spark: SparkSession,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Callable[[str, Sequence[tuple[Any, ...]]], None],
) -> None:
    users, per_country = topic_factory(), topic_factory()
    sql = tmp_path / "per_country.sql"
    sql.write_text(PIPELINE)
    names = {"brokers": kafka_bootstrap, "users": users, "per_country": per_country}

    def user(key: int, country: str | None) -> tuple[Any, ...]:
        value = None if country is None else json.dumps({"id": key, "country": country}).encode()
        return (json.dumps({"id": key}).encode(), value, None, None, None)

    produce(users, [user(1, "NL"), user(2, "NL"), user(3, "DE")])
    first = run(capsys, sql, tmp_path / "checkpoint", **names)
    assert first.code == 0, first.out + first.err
    assert final_table(kafka_bootstrap, per_country) == {"NL": 2, "DE": 1}

    # Each of these replaces or deletes a row the first run read: only its kept row says which group loses it.
    produce(users, [user(2, "DE"), user(1, None), user(3, "BE"), user(9, None)])
    second = run(capsys, sql, tmp_path / "checkpoint", **names)
    assert second.code == 0, second.out + second.err
    assert final_table(kafka_bootstrap, per_country) == {"DE": 1, "BE": 1}
    assert "4 record(s) read" in second.err, second.err  # Kafka records, not the rows they retract and add


def test_max_over_upsert_kafka_is_refused_naming_the_formats_that_take_it(tmp_path: Path) -> None:
    """MIN and MAX keep the values they saw in a stateful operator; upsert-kafka's normalization already is the
    query's one (Spark runs one per query), so only the CDC formats' changelogs take them."""
    from connector.sql.frontend import compile_file

    path = tmp_path / "max.sql"
    path.write_text(PIPELINE.replace("COUNT(*)", "CAST(MAX(id) AS BIGINT)"))
    errors = compile_file(path, {"users": "u", "per_country": "p", "brokers": "localhost:9092"}).errors
    assert [e.code for e in errors] == ["changelog-source"]
    assert "with MAX, which keeps every value it saw to retract one" in errors[0].message
    assert "MIN and MAX over a CDC format (debezium-json, canal-json" in errors[0].message


CDC_TO_PRINT = """
CREATE TABLE products (id INT, name STRING) WITH (
  'connector' = 'kafka', 'topic' = '{{ var("products") }}', 'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', 'format' = '{{ var("format") }}'
);
CREATE TABLE shown (id INT, name STRING) WITH ('connector' = 'print', 'print-identifier' = 'cdc');
INSERT INTO shown SELECT id, UPPER(name) FROM products;
"""
CHANGES = {
    "debezium-json": [
        {"before": None, "after": {"id": 1, "name": "a"}, "op": "c"},
        {"before": {"id": 1, "name": "a"}, "after": {"id": 1, "name": "b"}, "op": "u"},
        {"before": {"id": 1, "name": "b"}, "after": None, "op": "d"},
    ],
    "canal-json": [
        {"data": [{"id": 1, "name": "a"}], "type": "INSERT"},
        {"data": [{"id": 1, "name": "b"}], "old": [{"name": "a"}], "type": "UPDATE"},
        {"data": [{"id": 1, "name": "b"}], "type": "DELETE"},
    ],
    "maxwell-json": [
        {"data": {"id": 1, "name": "a"}, "type": "insert"},
        {"data": {"id": 1, "name": "b"}, "old": {"name": "a"}, "type": "update"},
        {"data": {"id": 1, "name": "b"}, "type": "delete"},
    ],
}


@pytest.mark.parametrize("fmt", sorted(CHANGES))
def test_a_changelog_projected_into_print_shows_flinks_row_kinds(
    fmt: str,
    spark: SparkSession,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Callable[[str, Sequence[tuple[Any, ...]]], None],
) -> None:
    """As Flink's print sink shows a CDC source: an insert +I, an update its old row -U and its new row +U, a delete
    -D."""
    products = topic_factory()
    produce(products, [(None, json.dumps(change).encode(), None, None, None) for change in CHANGES[fmt]])
    sql = tmp_path / "shown.sql"
    sql.write_text(CDC_TO_PRINT)

    result = run(capsys, sql, tmp_path / "cp", brokers=kafka_bootstrap, products=products, format=fmt)

    assert result.code == 0, result.err
    assert [line for line in result.out.splitlines() if line.startswith("cdc> ")] == [
        "cdc> +I[1, A]", "cdc> -U[1, A]", "cdc> +U[1, B]", "cdc> -D[1, B]",
    ]  # fmt: skip


GROUPS_TO_PRINT = """
CREATE TABLE g (k STRING, v INT) WITH (
  'connector' = 'kafka', 'topic' = '{{ var("topic") }}', 'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', 'format' = 'json'
);
CREATE TABLE shown (k STRING, n BIGINT, s INT, m INT) WITH ('connector' = 'print', 'print-identifier' = 'agg');
INSERT INTO shown SELECT k, COUNT(*), SUM(v), MAX(v) FROM g GROUP BY k HAVING COUNT(*) < 4;
"""


def test_a_group_by_into_print_shows_each_change_as_flink_prints_it(
    spark: SparkSession,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Callable[[str, Sequence[tuple[Any, ...]]], None],
) -> None:
    """Flink's group aggregate, per record: a group's first row +I, a changed result -U and +U, a result HAVING no
    longer admits only its -U. These are the lines Flink 2.3 printed for these records (parallelism 1); the order
    across groups is not defined, within a group it is the records' order."""
    topic = topic_factory()
    rows = [("a", 1), ("a", 3), ("b", 5), ("a", 2), ("b", -5), ("a", None)]
    produce(topic, [(None, json.dumps({"k": k, "v": v}).encode(), None, None, None) for k, v in rows])
    sql = tmp_path / "groups.sql"
    sql.write_text(GROUPS_TO_PRINT)

    result = run(capsys, sql, tmp_path / "cp", brokers=kafka_bootstrap, topic=topic)

    assert result.code == 0, result.err
    printed = [line.removeprefix("agg> ") for line in result.out.splitlines() if line.startswith("agg> ")]
    assert [line for line in printed if line[3] == "a"] == [
        "+I[a, 1, 1, 1]", "-U[a, 1, 1, 1]", "+U[a, 2, 4, 3]", "-U[a, 2, 4, 3]", "+U[a, 3, 6, 3]", "-U[a, 3, 6, 3]",
    ]  # fmt: skip
    assert [line for line in printed if line[3] == "b"] == ["+I[b, 1, 5, 5]", "-U[b, 1, 5, 5]", "+U[b, 2, 0, 5]"]


KAFKA = "'connector' = 'kafka', 'topic' = 'g', 'format' = 'json', 'scan.startup.mode' = 'earliest-offset'"


@pytest.mark.parametrize(
    ("source", "query", "shown"),
    [
        (KAFKA, "SELECT k, COUNT(*) FROM g GROUP BY k", "append"),
        (KAFKA, "SELECT k, STDDEV_POP(v) FROM g GROUP BY k", "update"),
        ("'connector' = 'upsert-kafka', 'topic' = 'g', 'key.format' = 'json', 'value.format' = 'json'",
         "SELECT CAST(v AS STRING), COUNT(*) FROM g GROUP BY v", "update"),
    ],
    ids=["by-operator", "aggregate-it-lacks", "upsert-kafka-source"],
)
def test_a_group_by_the_changelog_operator_cannot_run_is_printed_by_sparks_aggregation(
    source: str, query: str, shown: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Per record (append mode: +I, -U, +U) where the operator can compute the GROUP BY; otherwise Spark's aggregation
    still prints it, each group's latest row per micro-batch as +U (update mode)."""

    path = tmp_path / "p.sql"
    key = ", PRIMARY KEY (k) NOT ENFORCED" if "upsert" in source else ""
    path.write_text(
        f"CREATE TABLE g (k STRING, v INT{key}) WITH ({source}, 'properties.bootstrap.servers' = 'localhost:9092');\n"
        "CREATE TABLE shown (k STRING, n DOUBLE) WITH ('connector' = 'print');\n"
        f"INSERT INTO shown {query};\n"
    )

    planned = explain_json(capsys, path)["queries"][0]

    assert planned["output_mode"] == shown
    assert ("changelog_aggregations" in planned) == (shown == "append")
