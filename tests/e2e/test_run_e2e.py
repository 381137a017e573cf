"""`kafka-sql run` end to end: pipeline files against the real broker and real Spark.

Each test writes a pipeline file, produces records, runs it the way a user does (`kafka-sql run FILE
--checkpoint-dir DIR --var brokers=...`) and checks exactly which records reached the sink, what the consumer
group holds afterwards and what the run printed. Runs go through `connector.entrypoints.cli.main` in this process (so
they reuse the test SparkSession) unless the test looks at everything a user sees on the terminal, Spark's
own log included: then `kafka-sql` runs as a subprocess.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from confluent_kafka import Producer
from support.commands import assert_readable, run, run_subprocess
from support.pipelines import COPY_TO_KAFKA, ORDERS_TO_FILES, expected_big_orders, named, orders, read_files
from support.topics import Produce, committed, produce_json, read_topic

from connector.dev import broker
from connector.entrypoints import cli

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

ROOT = Path(__file__).resolve().parents[2]


# ---- kafka -> filesystem -------------------------------------------------------------------------------

@pytest.mark.slow
def test_bounded_kafka_to_files_writes_exactly_the_filtered_rows_and_commits_the_group(
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Produce,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    topic = topic_factory(partitions=3)
    records = orders(12, 3)
    produce_json(produce, topic, records)
    sql = tmp_path / "orders_to_files.sql"
    sql.write_text(ORDERS_TO_FILES)
    output = tmp_path / "big_orders"

    result = run(
        capsys, sql, tmp_path / "checkpoints", brokers=kafka_bootstrap, topic=topic, group="files", path=str(output)
    )

    assert result.code == 0, result.err
    assert read_files(spark, output) == expected_big_orders(records)
    assert "orders_to_files.big_orders: finished, " in result.err
    assert "12 record(s) read, 0 malformed record(s) skipped" in result.err
    # Flink's committed offset is the next record to read: last processed + 1, i.e. the end of each partition.
    assert committed(kafka_bootstrap, "files", topic, 3) == {0: 4, 1: 4, 2: 4}


# ---- event-time windows, kafka -> kafka ----------------------------------------------------------------

CLICKS_PER_MINUTE = """
SET 'pipeline.name' = 'clicks_per_minute';

CREATE TABLE clicks (
  user_name STRING,
  clicks BIGINT,
  event_time TIMESTAMP_LTZ(3) METADATA FROM 'timestamp',
  WATERMARK FOR event_time AS event_time - INTERVAL '5' SECOND
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("topic") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE clicks_per_minute (
  window_start TIMESTAMP(3),
  window_end TIMESTAMP(3),
  user_name STRING,
  events BIGINT,
  clicks BIGINT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("out") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO clicks_per_minute
SELECT window_start, window_end, user_name, COUNT(*), SUM(clicks)
FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(event_time), INTERVAL '1' MINUTE))
GROUP BY window_start, window_end, user_name;
"""


@pytest.mark.slow
def test_tumbling_window_writes_every_window_of_a_bounded_input_to_kafka(
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Produce,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    source, sink = topic_factory(partitions=2), topic_factory(partitions=1)
    start = datetime(2026, 1, 1, 10, 0, tzinfo=timezone.utc)
    users = ("ann", "ben", "cy")
    # One event every 10 s from 10:00:00 to 10:03:30 in both partitions, record timestamps as event time.
    events = [(start + timedelta(seconds=10 * k), users[k % 3], k + 1) for k in range(22)]
    produce_json(
        produce,
        source,
        [(k % 2, {"user_name": user, "clicks": clicks}) for k, (_, user, clicks) in enumerate(events)],
        [int(at.timestamp() * 1000) for at, _, _ in events],
    )
    sql = tmp_path / "clicks.sql"
    sql.write_text(CLICKS_PER_MINUTE)

    result = run(capsys, sql, tmp_path / "checkpoints", brokers=kafka_bootstrap, topic=source, out=sink)

    assert result.code == 0, result.err
    # The data's watermark ends at 10:03:30 - 5 s, which closes the windows up to 10:03; the end of the bounded
    # scan moves it to the end of time (Flink's final watermark), so the 10:03 windows are emitted too.
    windows: dict[tuple[datetime, str], list[int]] = {}
    for at, user, clicks in events:
        windows.setdefault((at.replace(second=0), user), []).append(clicks)
    expected = [
        {
            "window_start": f"{minute:%Y-%m-%d %H:%M:%S}",
            "window_end": f"{minute + timedelta(minutes=1):%Y-%m-%d %H:%M:%S}",
            "user_name": user,
            "events": len(clicks),
            "clicks": sum(clicks),
        }
        for (minute, user), clicks in windows.items()
    ]
    assert len(expected) == 12
    key = json.dumps
    assert sorted(read_topic(kafka_bootstrap, sink), key=key) == sorted(expected, key=key)

    assert "22 record(s) read" in result.err  # the end-of-input row is no record

    # A later bounded run on that checkpoint restores the end-of-time watermark: the user is told.
    later = start + timedelta(minutes=10)
    produce_json(produce, source, [(0, {"user_name": "ann", "clicks": 1})], [int(later.timestamp() * 1000)])
    with caplog.at_level(logging.WARNING, logger="connector.runtime.engine"):
        again = run(capsys, sql, tmp_path / "checkpoints", brokers=kafka_bootstrap, topic=source, out=sink)
    assert again.code == 0, again.err
    assert "1 record(s) read" in again.err
    assert any("reached the end of its input" in r.getMessage() for r in caplog.records)
    assert len(read_topic(kafka_bootstrap, sink)) == 12  # the late record opened no window


# ---- a failing sink ------------------------------------------------------------------------------------

@pytest.mark.slow
def test_a_failed_sink_commits_nothing_and_a_restart_writes_everything(
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Produce,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    source, first_sink = topic_factory(partitions=2), topic_factory(partitions=1)
    missing = f"{first_sink}-missing"  # the test broker does not create topics automatically
    sql = tmp_path / "copy.sql"
    sql.write_text(COPY_TO_KAFKA)
    checkpoint = tmp_path / "checkpoints"
    variables = {"brokers": kafka_bootstrap, "topic": source, "group": "copy"}
    produce_json(produce, source, named(range(0, 10), 2))
    assert run(capsys, sql, checkpoint, **variables, out=first_sink).code == 0
    assert committed(kafka_bootstrap, "copy", source, 2) == {0: 5, 1: 5}

    produce_json(produce, source, named(range(10, 16), 2))
    failed = run_subprocess(sql, checkpoint, **variables, out=missing)

    assert failed.code == 1
    assert f"query failed: copy.copied: Topic '{missing}' of sink table 'copied' does not exist" in failed.err
    assert_readable(failed.err)
    assert committed(kafka_bootstrap, "copy", source, 2) == {0: 5, 1: 5}

    broker.create_topic(kafka_bootstrap, missing, partitions=1)
    fixed = run(capsys, sql, checkpoint, **variables, out=missing)

    assert fixed.code == 0, fixed.err
    assert sorted(r["id"] for r in read_topic(kafka_bootstrap, missing)) == list(range(10, 16))
    assert sorted(r["id"] for r in read_topic(kafka_bootstrap, first_sink)) == list(range(0, 10))
    assert committed(kafka_bootstrap, "copy", source, 2) == {0: 8, 1: 8}


@pytest.mark.slow
def test_a_run_that_completes_no_batch_commits_nothing_to_the_group(
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Produce,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The checkpoint's offsets are the previous run's: committing them again when the topic was deleted and
    recreated meanwhile would make a later `group-offsets` start skip records never processed."""
    source, out = topic_factory(partitions=2), topic_factory(partitions=1)
    sql = tmp_path / "copy.sql"
    sql.write_text(COPY_TO_KAFKA)
    checkpoint = tmp_path / "checkpoints"
    variables = {"brokers": kafka_bootstrap, "topic": source, "group": "stale"}
    produce_json(produce, source, named(range(0, 10), 2))
    assert run(capsys, sql, checkpoint, **variables, out=out).code == 0
    assert committed(kafka_bootstrap, "stale", source, 2) == {0: 5, 1: 5}

    broker.delete_topic(kafka_bootstrap, source)
    broker.create_topic(kafka_bootstrap, source, partitions=2)
    deadline = time.monotonic() + 60
    while committed(kafka_bootstrap, "stale", source, 2):  # the broker drops a deleted topic's group offsets
        assert time.monotonic() < deadline
        time.sleep(0.5)
    fresh = Producer({"bootstrap.servers": kafka_bootstrap})  # knows the new topic
    for partition, value in named(range(100, 116), 2):
        fresh.produce(source, json.dumps(value), partition=partition)
    assert fresh.flush(30) == 0
    # Its first batch fails in the sink (the topic does not exist): no batch of this run completes.
    failed = run(capsys, sql, checkpoint, **variables, out=f"{out}-missing")

    assert failed.code == 1, failed.err
    assert "does not exist" in failed.err
    assert committed(kafka_bootstrap, "stale", source, 2) == {}


BIG_RECORD = COPY_TO_KAFKA.replace(
    "SELECT id, name FROM events", "SELECT id, REPEAT(name, 1000000) FROM events"
).replace("  'topic' = '{{ var(\"out\") }}',", "  'topic' = '{{ var(\"out\") }}',\n  {{ var(\"limit\", \"\") }}")


@pytest.mark.slow
@pytest.mark.parametrize("limit", ["", "'properties.max.request.size' = '5000000',"])
def test_a_record_over_the_size_limit_fails_naming_topic_size_limit_and_option(
    limit: str,
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Produce,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Over the producer's limit (Java's max.request.size, 1 MiB) it fails at once; over the broker's (raised
    producer limit), when the broker refuses it."""
    source, out = topic_factory(partitions=1), topic_factory(partitions=1)
    produce_json(produce, source, [(0, {"id": 1, "name": "ab"})])
    sql = tmp_path / "big.sql"
    sql.write_text(BIG_RECORD)
    variables = {"brokers": kafka_bootstrap, "topic": source, "group": "big", "out": out, "limit": limit}
    result = run(capsys, sql, tmp_path / "checkpoints", **variables)

    assert result.code == 1
    assert_readable(result.err)
    message = " ".join(result.err.split())
    size = len(json.dumps({"id": 1, "name": "ab" * 1_000_000}, separators=(",", ":")))  # what the sink writes
    if not limit:
        assert (
            f"A record of {size} bytes (key and value) for topic '{out}' is over the producer's limit of "
            "1000000 bytes. Raise it with 'properties.max.request.size'"
        ) in message
    else:
        assert f"Failed to deliver 1 record(s) to Kafka; first: topic '{out}' partition 0:" in message
        assert f"(a record of {size} bytes; the broker's limit is the topic's max.message.bytes)" in message
    assert committed(kafka_bootstrap, "big", source, 1) == {}


# ---- counts --------------------------------------------------------------------------------------------

GENERATED = """
CREATE TABLE gen (id BIGINT, name STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '5');
CREATE TABLE sink (id BIGINT, name STRING) WITH ('connector' = 'blackhole');
INSERT INTO sink SELECT * FROM gen;
"""

GATED_COPY = COPY_TO_KAFKA.replace(
    "CREATE TABLE copied (id BIGINT, name STRING)",
    "CREATE TABLE copied (id BIGINT, name STRING, CONSTRAINT small EXPECT (id < 8) ON VIOLATION QUARANTINE)",
).replace("  'format' = 'json'\n);\n\nINSERT", "  'format' = 'json', 'quality.quarantine.table' = 'held'\n);\n\n"
          "CREATE TABLE held (id BIGINT, failed_expectations ARRAY<STRING>) WITH ('connector' = 'print');\n\nINSERT")


@pytest.mark.slow
def test_a_generator_reports_the_rows_it_made(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Spark's numInputRows counts the rate source's rows behind datagen, 'number-of-rows' or not."""
    sql = tmp_path / "generated.sql"
    sql.write_text(GENERATED)
    result = run(capsys, sql, tmp_path / "checkpoints")
    assert result.code == 0, result.err
    assert "generated.sink: finished, " in result.err
    assert " 5 record(s) read, 0 malformed record(s) skipped" in result.err


@pytest.mark.slow
def test_a_session_without_pinned_threads_is_refused_with_what_to_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sinks and the gate read their query's id in foreachBatch, which works only with pinned threads."""
    sql = tmp_path / "generated.sql"
    sql.write_text(GENERATED)
    monkeypatch.setenv("PYSPARK_PIN_THREAD", "false")  # for the subprocess only: this session's JVM is running
    result = run_subprocess(sql, tmp_path / "checkpoints")
    assert result.code == 1, result.err
    assert "cannot start the pipeline: kafka-sql needs pyspark's pinned-thread mode (its default)" in result.err
    assert "PYSPARK_PIN_THREAD='false': unset PYSPARK_PIN_THREAD" in result.err
    assert_readable(result.err)


@pytest.mark.slow
def test_a_gated_query_reports_each_record_read_once(
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Produce,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The quality gate runs a batch more than once (check, write, quarantine); Spark counts each run's scan."""
    source, out = topic_factory(partitions=2), topic_factory(partitions=1)
    produce_json(produce, source, named(range(10), 2))
    sql = tmp_path / "copy.sql"
    sql.write_text(GATED_COPY)
    result = run(capsys, sql, tmp_path / "checkpoints", brokers=kafka_bootstrap, topic=source, group="g", out=out)
    assert result.code == 0, result.err
    assert "copy.copied: finished, 1 micro-batch(es), 10 record(s) read, 0 malformed record(s) skipped; " in result.err
    assert "quality gate: 8 passed, 0 dropped, 2 quarantined" in result.err
    assert sorted(r["id"] for r in read_topic(kafka_bootstrap, out)) == list(range(8))


# ---- malformed records ---------------------------------------------------------------------------------

PRINT_EVENTS = """
SET 'pipeline.name' = 'show';

CREATE TABLE events (id BIGINT, name STRING) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("topic") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json',
  'json.ignore-parse-errors' = '{{ var("ignore") }}'
);

CREATE TABLE shown (id BIGINT, name STRING) WITH ('connector' = 'print');

INSERT INTO shown SELECT id, name FROM events;
"""


@pytest.fixture
def malformed_topic(topic_factory: Callable[..., str], produce: Produce) -> str:
    """Six good records in two partitions; partition 1 has malformed records at offsets 1 and 3."""
    topic = topic_factory(partitions=2)
    produce_json(
        produce,
        topic,
        [
            (0, {"id": 0, "name": "a"}),
            (0, {"id": 2, "name": "c"}),
            (0, {"id": 4, "name": "e"}),
            (1, {"id": 1, "name": "b"}),
            (1, b"{oops"),
            (1, {"id": 3, "name": "d"}),
            (1, b"[1, 2"),
            (1, {"id": 5, "name": "f"}),
        ],
    )
    return topic


@pytest.mark.slow
def test_malformed_records_are_skipped_and_counted_with_ignore_parse_errors(
    spark: SparkSession,
    kafka_bootstrap: str,
    malformed_topic: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    sql = tmp_path / "show.sql"
    sql.write_text(PRINT_EVENTS)

    result = run(capsys, sql, tmp_path / "checkpoints", brokers=kafka_bootstrap, topic=malformed_topic, ignore="true")

    assert result.code == 0, result.err
    assert sorted(result.out.splitlines()) == [f"+I[{i}, {name}]" for i, name in enumerate("abcdef")]
    assert "show.shown: finished, " in result.err
    assert "8 record(s) read, 2 malformed record(s) skipped" in result.err


@pytest.mark.slow
def test_a_malformed_record_fails_the_run_naming_topic_partition_and_offset(
    kafka_bootstrap: str, malformed_topic: str, tmp_path: Path
) -> None:
    sql = tmp_path / "show.sql"
    sql.write_text(PRINT_EVENTS)

    result = run_subprocess(
        sql, tmp_path / "checkpoints", brokers=kafka_bootstrap, topic=malformed_topic, ignore="false"
    )

    assert result.code == 1
    assert (
        f"query failed: show.shown: Malformed JSON record in topic '{malformed_topic}' partition 1 offset 1: "
        "not a JSON object: \"{oops\". Set 'json.ignore-parse-errors' = 'true' to skip malformed records."
    ) in result.err
    assert_readable(result.err)


# ---- the quickstart ------------------------------------------------------------------------------------

QUICKSTART_REFUNDS = [
    "refund> +I[7, bob, -2.1]",
    "refund> +I[14, carol, -16.71]",
    "refund> +I[21, alice, -19.55]",
    "refund> +I[28, bob, -16.51]",
    "refund> +I[35, carol, -2.13]",
]
# The watermark ends at 10:06:00 - 5 s: windows up to 10:05 are closed and printed, 10:05 and 10:06 are not.
QUICKSTART_REVENUE = [
    "revenue> +I[2026-01-01T10:00, 2026-01-01T10:01, alice, 2, 126.91]",
    "revenue> +I[2026-01-01T10:00, 2026-01-01T10:01, bob, 2, 55.57]",
    "revenue> +I[2026-01-01T10:00, 2026-01-01T10:01, carol, 2, 88.97999999999999]",
    "revenue> +I[2026-01-01T10:01, 2026-01-01T10:02, alice, 2, 24.740000000000002]",
    "revenue> +I[2026-01-01T10:01, 2026-01-01T10:02, bob, 2, 108.69]",
    "revenue> +I[2026-01-01T10:01, 2026-01-01T10:02, carol, 2, 76.39]",
    "revenue> +I[2026-01-01T10:02, 2026-01-01T10:03, alice, 2, 133.23]",
    "revenue> +I[2026-01-01T10:02, 2026-01-01T10:03, bob, 2, 102.04]",
    "revenue> +I[2026-01-01T10:02, 2026-01-01T10:03, carol, 1, 77.15]",
    "revenue> +I[2026-01-01T10:03, 2026-01-01T10:04, alice, 1, 38.31]",
    "revenue> +I[2026-01-01T10:03, 2026-01-01T10:04, bob, 2, 31.95]",
    "revenue> +I[2026-01-01T10:03, 2026-01-01T10:04, carol, 3, 172.89000000000001]",
    "revenue> +I[2026-01-01T10:04, 2026-01-01T10:05, alice, 3, 180.34999999999997]",
    "revenue> +I[2026-01-01T10:04, 2026-01-01T10:05, bob, 1, 78.48]",
    "revenue> +I[2026-01-01T10:04, 2026-01-01T10:05, carol, 2, 73.61]",
    # the windows the end of the bounded input fires (Flink's final watermark)
    "revenue> +I[2026-01-01T10:05, 2026-01-01T10:06, alice, 2, 69.82000000000001]",
    "revenue> +I[2026-01-01T10:05, 2026-01-01T10:06, bob, 2, 95.47]",
    "revenue> +I[2026-01-01T10:05, 2026-01-01T10:06, carol, 1, 54.17]",
    "revenue> +I[2026-01-01T10:06, 2026-01-01T10:07, bob, 1, 72.34]",
]


@pytest.mark.slow
def test_produce_reports_records_the_client_or_broker_refused(
    kafka_bootstrap: str, topic_factory: Callable[..., str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Nothing is dropped silently: a record above the client's limit names its line; one the broker refuses (above
    the topic's max.message.bytes) is counted as not delivered, with the batch it travelled in."""
    lines = tmp_path / "big.jsonl"
    lines.write_text('{"id": 1}\n' + json.dumps({"id": 2, "pad": "x" * 1_200_000}) + "\n")
    assert cli.main(["produce", topic_factory(), str(lines), "--bootstrap", kafka_bootstrap]) == 1
    assert f"{lines}:2: cannot produce the record: " in capsys.readouterr().err
    topic = topic_factory(config={"max.message.bytes": "50000"})
    lines.write_text('{"id": 1}\n' + json.dumps({"id": 2, "pad": "x" * 200_000}) + "\n")
    assert cli.main(["produce", topic, str(lines), "--bootstrap", kafka_bootstrap]) == 1
    err = capsys.readouterr().err
    assert f"of 2 record(s) were not delivered to '{topic}' at {kafka_bootstrap}: " in err, err
    assert "Message size too large" in err


@pytest.mark.slow
def test_quickstart_prints_the_refunds_and_every_window(
    spark: SparkSession, kafka_bootstrap: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    examples = ROOT / "sql" / "examples"
    produced = cli.main(
        [
            "produce", "quickstart_orders", str(examples / "quickstart_orders.jsonl"), "--bootstrap", kafka_bootstrap,
            "--partitions", "2", "--key-field", "id", "--recreate",
        ]
    )
    assert produced == 0
    assert "produced 40 record(s) to 'quickstart_orders'" in capsys.readouterr().err

    result = run(capsys, examples / "quickstart.sql", tmp_path / "checkpoints", brokers=kafka_bootstrap)

    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert sorted(line for line in lines if line.startswith("refund>")) == sorted(QUICKSTART_REFUNDS)
    assert sorted(line for line in lines if line.startswith("revenue>")) == sorted(QUICKSTART_REVENUE)
    assert len(lines) == len(QUICKSTART_REFUNDS) + len(QUICKSTART_REVENUE)
