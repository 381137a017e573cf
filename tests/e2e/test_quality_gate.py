"""The data-quality gate end to end, against the real broker and Spark: each ON VIOLATION mode and each
'quality.on-failure' mode with the exact rows written and quarantined, quarantine records with their
provenance, results records and progress metrics, and fail -> fix -> restart with nothing lost or duplicated."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from confluent_kafka import Consumer, TopicPartition

from connector.entrypoints.cli import EXIT_OK, EXIT_QUALITY, main
from connector.planning.plan import build
from connector.quality.provenance import provenance_view, with_provenance
from connector.quality.report import TableReport, load_records, render
from connector.runtime import engine
from connector.sql.frontend import compile_file

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# (partition, record): offsets are 0, 1, 2, ... per partition in this order
ORDERS: list[tuple[int, dict[str, Any]]] = [
    (0, {"id": 1, "amount": 10.0, "country": "DE"}),
    (0, {"id": 2, "amount": -5.0, "country": "FR"}),
    (0, {"id": 3, "amount": 20.0, "country": "XX"}),
    (1, {"id": 4, "amount": 500.0, "country": "FR"}),
    (1, {"id": 5, "amount": -1.0, "country": "YY"}),
    (1, {"id": 6, "amount": 30.0, "country": None}),
    (1, {"id": 99, "amount": -7.0, "country": "ZZ"}),
]


def produce_orders(produce: Callable[..., None], topic: str, rows: Sequence[tuple[int, dict[str, Any]]]) -> None:
    produce(topic, [(None, json.dumps(row).encode(), partition, None, None) for partition, row in rows])


def read_topic(bootstrap: str, topic: str, partitions: int = 1) -> list[tuple[int, int, dict[str, Any]]]:
    """(partition, offset, JSON value) of every record of `topic`, by partition and offset."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{topic}", "enable.auto.commit": False})
    try:
        assigned = [TopicPartition(topic, p, 0) for p in range(partitions)]
        ends = [consumer.get_watermark_offsets(tp, timeout=30)[1] for tp in assigned]
        consumer.assign(assigned)
        found: list[tuple[int, int, dict[str, Any]]] = []
        deadline = time.monotonic() + 60
        while len(found) < sum(ends):
            assert time.monotonic() < deadline, f"timed out reading {topic}"
            message = consumer.poll(1)
            if message is None or message.error():
                continue
            partition, offset, value = message.partition(), message.offset(), message.value()
            assert partition is not None and offset is not None and value is not None
            found.append((partition, offset, json.loads(value)))
        return sorted(found, key=lambda r: (r[0], r[1]))
    finally:
        consumer.close()


def json_lines(directory: Path) -> list[dict[str, Any]]:
    """The rows of a json filesystem table: every visible file under `directory`."""
    rows = []
    for path in sorted(directory.rglob("*")):
        if path.is_file() and not any(part.startswith(("_", ".")) for part in path.relative_to(directory).parts):
            rows += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return rows


def kafka_source(name: str, topic: str, bootstrap: str, extra: str = "") -> str:
    return (
        f"CREATE TABLE {name} (id BIGINT, amount DOUBLE, country STRING) WITH (\n"
        f"  'connector' = 'kafka', 'topic' = '{topic}', 'properties.bootstrap.servers' = '{bootstrap}',\n"
        "  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset',\n"
        f"  'format' = 'json'{extra});\n"
    )


def run_to_end(spark: SparkSession, tmp_path: Path, sql: str) -> list[engine.RunningQuery]:
    """Run pipeline `sql` (bounded sources) as `p.sql` in `tmp_path` until every query has finished."""
    (tmp_path / "p.sql").write_text(sql)
    compiled = compile_file(tmp_path / "p.sql")
    assert compiled.errors == []
    pipeline = compiled.require()
    running = engine.start_all(spark, build(pipeline, "p"), tmp_path / "cp", pipeline)
    try:
        for r in running:
            assert r.query.awaitTermination(240), f"{r.plan.name} did not finish"
            assert r.query.exception() is None
    finally:
        for r in running:
            r.query.stop()
    return running


@pytest.mark.slow
def test_each_violation_mode_writes_and_quarantines_exact_rows(
    spark: SparkSession,
    tmp_path: Path,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Callable[..., None],
    capsys: pytest.CaptureFixture[str],
) -> None:
    orders, dead_letters = topic_factory(partitions=2), topic_factory()
    produce_orders(produce, orders, ORDERS)
    (tmp_path / "suite.json").write_text(
        json.dumps(
            {
                "name": "batch_rules",
                "expectations": [
                    {"type": "expect_table_row_count_to_be_between", "kwargs": {"min_value": 100}},
                    {"type": "expect_column_values_to_not_be_null", "kwargs": {"column": "country"}},
                    {"type": "expect_column_values_to_be_unique", "kwargs": {"column": "id"}},
                    {"type": "expect_column_mean_to_be_between", "kwargs": {"column": "amount", "min_value": 0}},
                ],
            }
        )
    )
    (tmp_path / "ranges.json").write_text(
        json.dumps(
            {
                "name": "ranges",
                "expectations": [
                    {
                        "type": "expect_column_values_to_be_between",
                        "kwargs": {"column": "amount", "min_value": 0, "max_value": 100},
                    },
                ],
            }
        )
    )
    sql = (
        kafka_source("orders", orders, kafka_bootstrap)
        + f"""
-- inline rules: drop, quarantine (to a Kafka dead-letter topic), keep and record
CREATE TABLE clean (
  id BIGINT, amount DOUBLE, country STRING,
  CONSTRAINT positive EXPECT (amount > 0) ON VIOLATION DROP ROW,
  CONSTRAINT eu EXPECT (country IN ('DE', 'FR')) ON VIOLATION QUARANTINE,
  CONSTRAINT small EXPECT (amount < 100)
) WITH ('connector' = 'filesystem', 'path' = '{tmp_path / "clean"}', 'format' = 'json',
        'quality.quarantine.table' = 'dead_letters', 'quality.results.path' = '{tmp_path / "results"}');
CREATE TABLE dead_letters (
  id BIGINT, country STRING, failed_expectations ARRAY<STRING>,
  source_topic STRING, source_partition INT, source_offset BIGINT, batch_id BIGINT
) WITH ('connector' = 'kafka', 'topic' = '{dead_letters}', 'properties.bootstrap.servers' = '{kafka_bootstrap}',
        'format' = 'json');
-- a suite whose batch-level rule fails: the whole batch goes to a file quarantine table (uniqueness: checked
-- from memory; the mean of about 78 passes)
CREATE TABLE counted (id BIGINT, amount DOUBLE, country STRING)
  WITH ('connector' = 'blackhole', 'quality.suite' = 'suite.json', 'quality.on-failure' = 'quarantine',
        'quality.quarantine.table' = 'held');
CREATE TABLE held (id BIGINT, failed_expectations STRING, source_offset BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{tmp_path / "held"}', 'format' = 'json');
-- a suite with 'drop': failing rows of row-level rules are left out
CREATE TABLE ranged (id BIGINT, amount DOUBLE)
  WITH ('connector' = 'print', 'print-identifier' = 'ranged', 'quality.suite' = 'ranges.json',
        'quality.on-failure' = 'drop');
EXECUTE STATEMENT SET BEGIN
INSERT INTO clean SELECT id, amount, country FROM orders WHERE id <> 99;
INSERT INTO counted SELECT * FROM orders;
INSERT INTO ranged SELECT id, amount FROM orders;
END;
"""
    )
    running = run_to_end(spark, tmp_path, sql)
    gates = {r.plan.sink.name: r for r in running}

    # DROP ROW leaves out 2 and 5; QUARANTINE sends 3, 5 and 6 (NULL country: IN gives NULL, which passes;
    # 6 is kept); `small` only records 4. Quarantine wins over drop for 5. 99 is filtered by the query.
    assert sorted(r["id"] for r in json_lines(tmp_path / "clean")) == [1, 4, 6]
    assert sorted((value for *_, value in read_topic(kafka_bootstrap, dead_letters)), key=lambda v: v["id"]) == [
        {
            "id": 3,
            "country": "XX",
            "failed_expectations": ["eu"],
            "source_topic": orders,
            "source_partition": 0,
            "source_offset": 2,
            "batch_id": 0,
        },
        {
            "id": 5,
            "country": "YY",
            "failed_expectations": ["positive", "eu"],
            "source_topic": orders,
            "source_partition": 1,
            "source_offset": 1,
            "batch_id": 0,
        },
    ]
    clean_gate = gates["clean"].gate
    assert clean_gate is not None and clean_gate.last is not None
    assert (clean_gate.last.rows, clean_gate.last.written, clean_gate.last.dropped, clean_gate.last.quarantined) == (
        6,
        3,
        1,
        2,
    )

    # The batch-level row count fails: every row is quarantined, naming it (and the row-level rule it breaks).
    held = sorted(json_lines(tmp_path / "held"), key=lambda r: r["id"])
    assert [(r["id"], r["failed_expectations"]) for r in held] == [
        (1, "expect_table_row_count_to_be_between"),
        (2, "expect_table_row_count_to_be_between"),
        (3, "expect_table_row_count_to_be_between"),
        (4, "expect_table_row_count_to_be_between"),
        (5, "expect_table_row_count_to_be_between"),
        (6, "expect_table_row_count_to_be_between, expect_column_values_to_not_be_null(country)"),
        (99, "expect_table_row_count_to_be_between"),
    ]

    # 'drop' with a row-level suite (written as it is checked): the between rule drops 2, 4, 5 and 99.
    printed = sorted(line for line in capsys.readouterr().out.splitlines() if line.startswith("ranged> "))
    assert printed == ["ranged> +I[1, 10.0]", "ranged> +I[3, 20.0]", "ranged> +I[6, 30.0]"]

    # One results record per batch, with figures, offsets and the great-expectations validation result.
    record = json.loads((tmp_path / "results" / "p.clean" / "batch-000000000000.json").read_text())
    assert record["status"] == "filtered"
    assert record["rows"] == {"checked": 6, "passed": 3, "dropped": 1, "quarantined": 2, "malformed_quarantined": 0}
    assert record["offsets"]["end"] == [{orders: {"0": 3, "1": 4}}]
    assert record["lag"] == {orders: {"0": 0, "1": 0}}
    figures = {e["name"]: (e["failed"], e["dropped"], e["quarantined"], e["success"]) for e in record["expectations"]}
    assert figures == {"positive": (2, 1, 0, False), "eu": (2, 0, 2, False), "small": (1, 0, 0, False)}
    sample = next(e["sample"] for e in record["expectations"] if e["name"] == "eu")
    assert sorted(s["provenance"] for s in sample) == [
        f"topic {orders}, partition 0, offset 2",
        f"topic {orders}, partition 1, offset 1",
    ]
    validation = record["validation_result"]
    assert validation["success"] is False
    assert validation["statistics"]["evaluated_expectations"] == 3
    assert [r["expectation_config"]["type"] for r in validation["results"]] == ["unexpected_rows_expectation"] * 3

    # The same figures as StreamingQueryProgress metrics.
    progress = gates["clean"].query.lastProgress
    assert progress is not None
    observed = progress["observedMetrics"]["quality_clean"]
    assert (observed["rows"], observed["positive"], observed["eu"], observed["small"]) == (6, 2, 2, 1)

    # dq-report finds every gated table's records.
    assert {(r.table, len(r.records)) for r in load_records(tmp_path)} == {("clean", 1), ("counted", 1), ("ranged", 1)}
    assert main(["dq-report", str(tmp_path), "--output", str(tmp_path / "report.html")]) == EXIT_OK
    page = (tmp_path / "report.html").read_text()
    assert "Table <code>clean</code>" in page and f"topic {orders}, partition 1, offset 1" in page


@pytest.mark.slow
@pytest.mark.parametrize("users_setting", [None, "true"])
def test_a_gated_query_plans_without_constraint_propagation_and_leaves_the_session_as_it_was(
    spark: SparkSession,
    tmp_path: Path,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Callable[..., None],
    users_setting: str | None,
) -> None:
    key = "spark.sql.constraintPropagation.enabled"
    orders = topic_factory()
    produce_orders(produce, orders, ORDERS[:2])
    sql = kafka_source("orders", orders, kafka_bootstrap) + (
        "CREATE TABLE checked (id BIGINT, CONSTRAINT known EXPECT (id IS NOT NULL) ON VIOLATION DROP ROW)\n"
        "  WITH ('connector' = 'blackhole');\n"
        "CREATE TABLE unchecked (id BIGINT) WITH ('connector' = 'blackhole');\n"
        "EXECUTE STATEMENT SET BEGIN\n"
        "INSERT INTO checked SELECT id FROM orders;\n"
        "INSERT INTO unchecked SELECT id FROM orders;\n"
        "END;\n"
    )
    if users_setting is not None:
        spark.conf.set(key, users_setting)
    try:
        running = run_to_end(spark, tmp_path, sql)
        assert spark.conf.get(key, None) == users_setting
    finally:
        spark.conf.unset(key)
    planned = {r.plan.name: r.query._jsq.streamingQuery().sparkSessionForStream().conf().get(key) for r in running}
    assert planned == {"p.checked": "false", "p.unchecked": users_setting or "true"}


@pytest.mark.slow
def test_malformed_records_go_to_the_quarantine_table_with_their_provenance(
    spark: SparkSession,
    tmp_path: Path,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Callable[..., None],
) -> None:
    orders = topic_factory(partitions=2)
    records = [
        (None, b'{"id": 1, "amount": 10.0, "country": "DE"}', 0, None, None),
        (b"k-2", b"{not json", 0, None, None),
        (None, b'{"id": 3, "amount": 20.0, "country": "XX"}', 0, None, None),
        (None, b'"not an object"', 1, None, None),
        (None, b'{"id": 5, "amount": 30.0, "country": "FR"}', 1, None, None),
    ]
    produce(orders, records)
    (tmp_path / "lines").mkdir()
    (tmp_path / "lines" / "part-1.json").write_text('{"id": 7, "amount": 1.0, "country": "DE"}\nnot json either\n')
    provenance = "source_topic STRING, source_partition INT, source_offset BIGINT"
    sql = (
        kafka_source("orders", orders, kafka_bootstrap, ", 'json.ignore-parse-errors' = 'true'")
        + f"""
CREATE TABLE clean (id BIGINT, amount DOUBLE, country STRING,
  CONSTRAINT eu EXPECT (country IN ('DE', 'FR')) ON VIOLATION QUARANTINE
) WITH ('connector' = 'filesystem', 'path' = '{tmp_path / "clean"}', 'format' = 'json',
        'quality.quarantine.table' = 'dead_letters', 'quality.quarantine.malformed' = 'true');
CREATE TABLE dead_letters (id BIGINT, failed_expectations ARRAY<STRING>, {provenance}, raw_key STRING, raw_value STRING)
  WITH ('connector' = 'filesystem', 'path' = '{tmp_path / "dead"}', 'format' = 'json');
CREATE TABLE lines (id BIGINT, amount DOUBLE, country STRING)
  WITH ('connector' = 'filesystem', 'path' = '{tmp_path / "lines"}', 'format' = 'json',
        'json.ignore-parse-errors' = 'true');
CREATE TABLE copied (id BIGINT)
  WITH ('connector' = 'blackhole', 'quality.quarantine.table' = 'bad_lines', 'quality.quarantine.malformed' = 'true');
CREATE TABLE bad_lines (failed_expectations STRING, source_topic STRING, raw_value BYTES)
  WITH ('connector' = 'filesystem', 'path' = '{tmp_path / "bad_lines"}', 'format' = 'json');
EXECUTE STATEMENT SET BEGIN
INSERT INTO clean SELECT * FROM orders;
INSERT INTO copied SELECT id FROM lines;
END;
"""
    )
    running = run_to_end(spark, tmp_path, sql)

    assert sorted(r["id"] for r in json_lines(tmp_path / "clean")) == [1, 5]
    quarantined = sorted(json_lines(tmp_path / "dead"), key=lambda r: (r["source_partition"], r["source_offset"]))
    def dead(id_: int | None, failed: str, partition: int, offset: int, key: str | None, value: str | None) -> Any:
        return {
            "id": id_,
            "failed_expectations": [failed],
            "source_topic": orders,
            "source_partition": partition,
            "source_offset": offset,
            "raw_key": key,
            "raw_value": value,
        }

    assert quarantined == [
        dead(None, "malformed_record", 0, 1, "k-2", "{not json"),
        dead(3, "eu", 0, 2, None, None),
        dead(None, "malformed_record", 1, 0, None, '"not an object"'),
    ]
    gate = next(r.gate for r in running if r.plan.sink.name == "clean")
    assert gate is not None and gate.totals.malformed == 2 and gate.totals.quarantined == 1
    record = json.loads((tmp_path / "cp" / "p" / "clean" / "quality" / "batch-000000000000.json").read_text())
    assert record["rows"] == {"checked": 3, "passed": 2, "dropped": 0, "quarantined": 1, "malformed_quarantined": 2}

    assert main(["dq-report", str(tmp_path), "--output", str(tmp_path / "report.html")]) == EXIT_OK
    assert "<b>2</b>malformed records quarantined" in (tmp_path / "report.html").read_text()

    # A file source: the malformed line, as bytes (base64 in JSON), named by its file.
    [bad_line] = json_lines(tmp_path / "bad_lines")
    assert bad_line["failed_expectations"] == "malformed_record"
    assert bad_line["source_topic"].endswith("/lines/part-1.json")
    assert base64.b64decode(bad_line["raw_value"]) == b"not json either"


def between_suite(minimum: float) -> str:
    between = {"column": "amount", "min_value": minimum}
    return json.dumps({"expectations": [{"type": "expect_column_values_to_be_between", "kwargs": between}]})


# The failing rule and its fix, inline (ON VIOLATION FAIL UPDATE) and in a suite file ('quality.on-failure' fail).
FORMS = {
    "inline": (
        "non_negative",
        "ALTER TABLE output SET ('quality.results.path' = '{results}');\n",
        ("CONSTRAINT non_negative EXPECT (amount >= 0)", "CONSTRAINT non_negative EXPECT (amount >= -10)"),
    ),
    "suite": (
        "expect_column_values_to_be_between(amount)",
        "ALTER TABLE output SET ('quality.suite' = 'suite.json', 'quality.results.path' = '{results}');\n",
        (between_suite(0), between_suite(-10)),
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("form", FORMS)
def test_fail_stops_the_batch_then_a_fixed_rule_reprocesses_it_exactly_once(
    spark: SparkSession,
    tmp_path: Path,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Callable[..., None],
    capsys: pytest.CaptureFixture[str],
    form: str,
) -> None:
    name, options, (failing, fixed) = FORMS[form]
    orders, out = topic_factory(partitions=2), topic_factory()
    produce_orders(produce, orders, ORDERS[:5])
    group = f"gate-{orders}"
    results = tmp_path / "results"

    def write_pipeline(rule: str) -> None:
        inline = f",\n  {rule} ON VIOLATION FAIL UPDATE" if form == "inline" else ""
        if form == "suite":
            (tmp_path / "suite.json").write_text(rule)
        source = kafka_source("orders", orders, kafka_bootstrap, f", 'properties.group.id' = '{group}'")
        (tmp_path / "p.sql").write_text(
            source
            + f"CREATE TABLE output (id BIGINT, amount DOUBLE{inline}) WITH ('connector' = 'kafka', "
            f"'topic' = '{out}',\n"
            f"  'properties.bootstrap.servers' = '{kafka_bootstrap}', 'format' = 'json');\n"
            + options.format(results=results)
            + "INSERT INTO output SELECT id, amount FROM orders;\n"
        )

    write_pipeline(failing)
    run = ["run", str(tmp_path / "p.sql"), "--checkpoint-dir", str(tmp_path / "cp"), "--timeout", "240"]
    assert main(run) == EXIT_QUALITY
    report = capsys.readouterr().err
    assert "Data-quality gate stopped query 'p.output' at batch 0 (table 'output', 5 rows)" in report
    assert f"expectation '{name}'" in report
    assert "2 of 5 rows violate it" in report
    assert f"id=2, amount=-5.0  (topic {orders}, partition 0, offset 1)" in report
    assert f"id=5, amount=-1.0  (topic {orders}, partition 1, offset 1)" in report
    assert read_topic(kafka_bootstrap, out) == []  # nothing written
    assert committed_offsets(kafka_bootstrap, group, orders) == {0: None, 1: None}  # no offset moved on
    failed = json.loads((results / "p.output" / "batch-000000000000.json").read_text())
    assert failed["status"] == "failed" and failed["failure"].startswith("Data-quality gate stopped")

    # Fix the rule; meanwhile two more records arrived. Batch 0 runs again with the same offsets.
    produce_orders(produce, orders, ORDERS[5:])
    write_pipeline(fixed)
    assert main(run) == EXIT_OK
    written = sorted(value["id"] for *_, value in read_topic(kafka_bootstrap, out))
    assert written == [1, 2, 3, 4, 5, 6, 99]  # every record exactly once
    assert committed_offsets(kafka_bootstrap, group, orders) == {0: 3, 1: 4}
    passed = json.loads((results / "p.output" / "batch-000000000000.json").read_text())
    assert passed["status"] == "passed" and passed["rows"]["checked"] == 5
    # The batch was cached uncompressed in the query's own session; the user's keeps Spark's default.
    assert spark.conf.get("spark.sql.inMemoryColumnarStorage.compressed") == "true"


def committed_offsets(bootstrap: str, group: str, topic: str) -> dict[int, int | None]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        found = consumer.committed([TopicPartition(topic, p) for p in range(2)], timeout=30)
        return {tp.partition: (tp.offset if tp.offset >= 0 else None) for tp in found}
    finally:
        consumer.close()


# ---------------------------------------------------------------------------------------------------------
# Provenance through the query, and the report page
# ---------------------------------------------------------------------------------------------------------

VIEWS = {"orders": ["id", "amount", "country"]}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (
            "SELECT * FROM orders WHERE amount > 0",
            "SELECT `orders`.`id`, `orders`.`amount`, `orders`.`country`, `orders`.`__topic` AS `__topic`, "
            "`orders`.`__partition` AS `__partition`, `orders`.`__offset` AS `__offset` FROM `__dq_orders` AS "
            "`orders` WHERE amount > 0",
        ),
        (
            "SELECT o.id, UPPER(o.country) AS c FROM orders AS o",
            "SELECT o.id, UPPER(o.country) AS c, `o`.`__topic` AS `__topic`, `o`.`__partition` AS `__partition`, "
            "`o`.`__offset` AS `__offset` FROM `__dq_orders` AS o",
        ),
        ("SELECT country, COUNT(*) FROM orders GROUP BY country", None),
        ("SELECT a.id FROM orders AS a JOIN orders AS b ON a.id = b.id", None),
        ("SELECT DISTINCT country FROM orders", None),
        ("SELECT id FROM other_view", None),
        ("SELECT id FROM orders UNION ALL SELECT id FROM orders", None),
    ],
)
def test_provenance_travels_only_where_each_row_has_one_source_row(query: str, expected: str | None) -> None:
    assert with_provenance(query, VIEWS) == expected
    assert provenance_view("orders") == "__dq_orders"


def test_the_report_escapes_what_the_data_holds() -> None:
    record = {
        "query": "p.q",
        "table": "t",
        "batch_id": 3,
        "status": "failed",
        "rows": {"checked": 2, "passed": 0, "dropped": 0, "quarantined": 0},
        "offsets": {"start": None, "end": [{"orders": {"0": 2}}]},
        "lag": {"orders": {"0": 5}},
        "failure": "stopped <b>",
        "expectations": [
            {
                "name": "positive",
                "type": "unexpected_rows_expectation",
                "scope": "row",
                "action": "fail",
                "success": False,
                "observed_value": 1,
                "failed": 1,
                "dropped": 0,
                "quarantined": 0,
                "sample": [{"note": "<script>alert(1)</script>", "provenance": "topic orders, partition 0, offset 1"}],
            }
        ],
        "validation_result": {},
    }
    page = render([TableReport("p.q", "t", [record])], "/results")
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "stopped &lt;b&gt;" in page
    assert "orders [0:2]" in page and "<td class='n'>5</td>" in page
