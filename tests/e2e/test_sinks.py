"""Sinks end to end: streaming queries over JSON files written to a real broker, printed, or to files.

Kafka output is read back with confluent-kafka and compared record by record (key, value, headers,
timestamp, partition). Exactly-once is checked by making Spark run a committed micro-batch again, as it
does after a crash between the sink's write and the commit log.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest
from confluent_kafka import Consumer, TopicPartition
from pyspark.errors import StreamingQueryException
from pyspark.sql import functions as F

from connector.catalog.loader import load_text
from connector.catalog.model import Table
from connector.connectors import reading, writing
from connector.runtime.hadoop_fs import HadoopFs

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, Row, SparkSession

UTC = timezone.utc
# key, value, partition, timestamp (ms), headers
Record = tuple[bytes | None, bytes | None, int, int, list[tuple[str, bytes | None]]]


def table(columns: str, options: dict[str, str], extra: str = "", partitioned_by: str = "") -> Table:
    with_clause = ", ".join(f"'{k}' = '{v}'" for k, v in options.items())
    partitions = f" PARTITIONED BY ({partitioned_by})" if partitioned_by else ""
    loaded = load_text(f"CREATE TABLE sink ({columns}{extra}){partitions} WITH ({with_clause});", "sink.sql")
    found = loaded.pipeline.table("sink")
    assert found is not None
    return found


def input_rows(spark: SparkSession, folder: Path, rows: Sequence[object], schema: str) -> DataFrame:
    """A streaming frame over one JSON-lines file (replayed identically when a batch runs again)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "part-0.json").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return spark.readStream.schema(schema).option("timestampFormat", "yyyy-MM-dd HH:mm:ss").json(str(folder))


def run(frame: DataFrame, tbl: Table, checkpoint: Path, output_mode: str = "append") -> None:
    """Write `frame` to `tbl` with Trigger.AvailableNow and wait until it is done (or raise its error)."""
    writer = frame.writeStream.outputMode(output_mode).option("checkpointLocation", str(checkpoint))
    query = writing.start(frame, tbl, writer.trigger(availableNow=True), output_mode, checkpoint=str(checkpoint))
    try:
        assert query.awaitTermination(180), "the query did not finish"
    finally:
        query.stop()


def replay_last_batch(checkpoint: Path) -> None:
    """Forget that the last micro-batch committed: Spark runs it again on restart, with the same offsets."""
    commits = sorted((checkpoint / "commits").glob("[0-9]*"), key=lambda p: int(p.name))
    commits[-1].unlink()
    crc = commits[-1].with_name(f".{commits[-1].name}.crc")
    crc.unlink(missing_ok=True)


def read_topic(bootstrap: str, topic: str, partitions: int, committed_only: bool = False) -> list[Record]:
    """Every record of `topic` in log order per partition (only committed ones with `committed_only`)."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"reader-{topic}",
            "enable.auto.commit": False,
            "isolation.level": "read_committed" if committed_only else "read_uncommitted",
        }
    )
    try:
        assigned = [TopicPartition(topic, p, 0) for p in range(partitions)]
        ends = [consumer.get_watermark_offsets(tp, timeout=30)[1] for tp in assigned]
        consumer.assign(assigned)
        records: list[Record] = []
        deadline = time.monotonic() + 60
        # Positions move past transaction markers too, which are never delivered as messages.
        while any(end > 0 and p.offset < end for p, end in zip(consumer.position(assigned), ends, strict=True)):
            assert time.monotonic() < deadline, f"timed out reading {topic}"
            message = consumer.poll(1)
            if message is None or message.error():
                continue
            partition = message.partition()
            assert partition is not None
            headers = cast(list[tuple[str, bytes | None]], list(message.headers() or []))
            records.append((message.key(), message.value(), partition, message.timestamp()[1], headers))
        return records
    finally:
        consumer.close()


def murmur2_partition(key: bytes, partitions: int) -> int:
    """Kafka's Java default partitioner: toPositive(murmur2(key)) % partitions."""
    m, r, mask = 0x5BD1E995, 24, 0xFFFFFFFF
    h = (0x9747B28C ^ len(key)) & mask
    length4 = len(key) // 4
    for i in range(length4):
        k = int.from_bytes(key[4 * i : 4 * i + 4], "little")
        k = (k * m) & mask
        k ^= k >> r
        k = (k * m) & mask
        h = (h * m) & mask
        h ^= k
    tail = key[4 * length4 :]
    if len(tail) == 3:
        h ^= tail[2] << 16
    if len(tail) >= 2:
        h ^= tail[1] << 8
    if len(tail) >= 1:
        h ^= tail[0]
        h = (h * m) & mask
    h ^= h >> 13
    h = (h * m) & mask
    h ^= h >> 15
    return (h & 0x7FFFFFFF) % partitions


def kafka_options(bootstrap: str, topic: str, **extra: str) -> dict[str, str]:
    return {"connector": "kafka", "topic": topic, "properties.bootstrap.servers": bootstrap, **extra}


ORDERS: list[dict[str, Any]] = [
    {"id": 1, "name": "apple", "ts": "2024-01-02 03:04:05", "hs": {"source": "YQ=="}},
    {"id": 2, "name": None, "ts": "2024-01-02 03:04:06", "hs": {}},
    {"id": 3, "name": "cherry", "ts": "2024-01-02 03:04:07", "hs": {"source": "Yw==", "n": "Mw=="}},
]
ORDERS_SCHEMA = "id INT, name STRING, ts TIMESTAMP, hs MAP<STRING, STRING>"


def orders(spark: SparkSession, folder: Path) -> DataFrame:
    frame = input_rows(spark, folder, ORDERS, ORDERS_SCHEMA)
    headers = F.transform_values("hs", lambda _, v: F.unbase64(v))
    return frame.select("id", "name", F.col("ts"), headers.alias("hs"))


def ms(text: str) -> int:
    return int(datetime.strptime(text, "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC).timestamp() * 1000)


@pytest.mark.slow
def test_kafka_sink_writes_keys_values_headers_and_timestamps(
    spark: SparkSession, kafka_bootstrap: str, topic_factory: Callable[..., str], tmp_path: Path
) -> None:
    topic = topic_factory(partitions=3)
    options = kafka_options(
        kafka_bootstrap, topic, **{"key.format": "raw", "key.fields": "name", "value.format": "json"}
    )
    columns = (
        "id INT, name STRING, ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp', "
        "hs MAP<STRING, BYTES> METADATA FROM 'headers'"
    )
    run(orders(spark, tmp_path / "in"), table(columns, options), tmp_path / "cp")

    records = sorted(read_topic(kafka_bootstrap, topic, 3), key=lambda r: r[3])
    assert [(r[0], json.loads(r[1] or b"")) for r in records] == [
        (b"apple", {"id": 1, "name": "apple"}),
        (None, {"id": 2, "name": None}),
        (b"cherry", {"id": 3, "name": "cherry"}),
    ]
    assert [r[3] for r in records] == [ms(o["ts"]) for o in ORDERS]
    assert [sorted(r[4]) for r in records] == [[("source", b"a")], [], [("n", b"3"), ("source", b"c")]]
    # The default partitioner is Java's: murmur2 of the key bytes.
    assert records[0][2] == murmur2_partition(b"apple", 3)
    assert records[2][2] == murmur2_partition(b"cherry", 3)


@pytest.mark.slow
def test_fixed_partitioner_sends_each_write_task_to_one_partition(
    spark: SparkSession, kafka_bootstrap: str, topic_factory: Callable[..., str], tmp_path: Path
) -> None:
    topic = topic_factory(partitions=3)
    options = kafka_options(kafka_bootstrap, topic, **{"format": "json", "sink.partitioner": "fixed"})
    rows = [{"id": i} for i in range(12)]
    frame = input_rows(spark, tmp_path / "in", rows, "id INT").repartition(2, "id")
    task_of: dict[int, int] = dict(
        spark.createDataFrame(rows, "id INT").repartition(2, "id").select("id", F.spark_partition_id()).collect()
    )
    run(frame, table("id INT", options), tmp_path / "cp")

    records = read_topic(kafka_bootstrap, topic, 3)
    assert sorted((json.loads(r[1] or b"")["id"], r[2]) for r in records) == [(i, task_of[i] % 3) for i in range(12)]
    assert {task_of[i] for i in range(12)} == {0, 1}


@pytest.mark.slow
def test_failed_delivery_fails_the_batch_naming_topic_and_partition(
    spark: SparkSession, kafka_bootstrap: str, topic_factory: Callable[..., str], tmp_path: Path
) -> None:
    topic = topic_factory(partitions=1, config={"max.message.bytes": "200"})
    options = kafka_options(kafka_bootstrap, topic, **{"format": "raw", "properties.message.timeout.ms": "10000"})
    frame = input_rows(spark, tmp_path / "in", [{"v": "x" * 1000}], "v STRING")
    with pytest.raises(StreamingQueryException) as error:
        run(frame, table("v STRING", options), tmp_path / "cp")
    assert f"Failed to deliver 1 record(s) to Kafka; first: topic '{topic}' partition 0: " in str(error.value)
    assert not (tmp_path / "cp" / "commits" / "0").exists()


@pytest.mark.slow
def test_upsert_kafka_writes_keys_and_tombstones(
    spark: SparkSession, kafka_bootstrap: str, topic_factory: Callable[..., str], tmp_path: Path
) -> None:
    topic = topic_factory(partitions=2)
    options = {
        "connector": "upsert-kafka",
        "topic": topic,
        "properties.bootstrap.servers": kafka_bootstrap,
        "key.format": "json",
        "value.format": "json",
        "value.fields-include": "EXCEPT_KEY",
    }
    rows = [
        {"id": 1, "n": 5, "__deleted": False},
        {"id": 2, "n": 7, "__deleted": False},
        {"id": 1, "n": None, "__deleted": True},
    ]
    frame = input_rows(spark, tmp_path / "in", rows, "id INT, n BIGINT, __deleted BOOLEAN").coalesce(1)
    tbl = table("id INT, n BIGINT", options, extra=", PRIMARY KEY (id) NOT ENFORCED")
    run(frame, tbl, tmp_path / "cp", output_mode="update")

    records = read_topic(kafka_bootstrap, topic, 2)
    by_key = sorted(((r[0] or b"", r[2], r[1]) for r in records), key=lambda r: r[0])  # stable: log order
    assert [(k, v) for k, _, v in by_key] == [(b'{"id":1}', b'{"n":5}'), (b'{"id":1}', None), (b'{"id":2}', b'{"n":7}')]
    assert all(partition == murmur2_partition(key, 2) for key, partition, _ in by_key)


@pytest.mark.slow
@pytest.mark.parametrize("guarantee", ["exactly-once", "at-least-once"])
def test_a_micro_batch_run_again_is_written_once_only_with_exactly_once(
    spark: SparkSession, kafka_bootstrap: str, topic_factory: Callable[..., str], tmp_path: Path, guarantee: str
) -> None:
    topic = topic_factory(partitions=1)
    options = kafka_options(
        kafka_bootstrap,
        topic,
        **{"format": "json", "sink.delivery-guarantee": guarantee, "sink.transactional-id-prefix": topic},
    )
    tbl = table("id INT", options)
    frame = input_rows(spark, tmp_path / "in", [{"id": 1}, {"id": 2}], "id INT")
    run(frame, tbl, tmp_path / "cp")
    replay_last_batch(tmp_path / "cp")
    run(input_rows(spark, tmp_path / "in", [{"id": 1}, {"id": 2}], "id INT"), tbl, tmp_path / "cp")

    ids = sorted(json.loads(r[1] or b"")["id"] for r in read_topic(kafka_bootstrap, topic, 1, committed_only=True))
    assert ids == ([1, 2] if guarantee == "exactly-once" else [1, 1, 2, 2])


def test_print_sink_prints_flinks_row_format(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tbl = table(
        "id INT, name STRING, price DOUBLE, ts TIMESTAMP(3), tags ARRAY<STRING>",
        {"connector": "print", "print-identifier": "orders"},
    )
    rows = [
        {"id": 1, "name": "foo", "price": 12.5, "ts": "2024-01-02 03:04:00", "tags": ["a", "b"]},
        {"id": 2, "name": None, "price": 1.0e7, "ts": "2024-01-02 03:04:05", "tags": []},
    ]
    schema = "id INT, name STRING, price DOUBLE, ts TIMESTAMP_NTZ, tags ARRAY<STRING>"
    frame = input_rows(spark, tmp_path / "in", rows, schema).coalesce(1)
    run(frame, tbl, tmp_path / "cp")
    assert capsys.readouterr().out.splitlines() == [
        "orders> +I[1, foo, 12.5, 2024-01-02T03:04, [a, b]]",
        "orders> +I[2, null, 1.0E7, 2024-01-02T03:04:05, []]",
    ]


def test_print_to_standard_error_in_update_mode(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tbl = table("k STRING, c BIGINT", {"connector": "print", "standard-error": "true"})
    frame = input_rows(spark, tmp_path / "in", [{"k": "a"}, {"k": "a"}], "k STRING").groupBy("k").count()
    run(frame.withColumnRenamed("count", "c"), tbl, tmp_path / "cp", output_mode="update")
    captured = capsys.readouterr()
    assert captured.err.splitlines() == ["+U[a, 2]"]
    assert captured.out == ""


@pytest.mark.slow
def test_filesystem_sink_writes_each_batch_once(spark: SparkSession, tmp_path: Path) -> None:
    out = tmp_path / "out"
    tbl = table(
        "id INT, name STRING, dt STRING",
        {"connector": "filesystem", "path": str(out), "format": "json"},
        partitioned_by="dt",
    )
    rows = [{"id": 1, "name": "a", "dt": "2024-01-01"}, {"id": 2, "name": None, "dt": "2024-01-02"}]
    run(input_rows(spark, tmp_path / "in", rows, "id INT, name STRING, dt STRING"), tbl, tmp_path / "cp")
    replay_last_batch(tmp_path / "cp")
    run(input_rows(spark, tmp_path / "in", rows, "id INT, name STRING, dt STRING"), tbl, tmp_path / "cp")

    written = spark.read.schema("id INT, name STRING, dt STRING").json(str(out))
    assert sorted(tuple(r) for r in written.collect()) == [(1, "a", "2024-01-01"), (2, None, "2024-01-02")]
    lines = sorted(line for f in (out / "dt=2024-01-02").glob("part-*.json") for line in f.read_text().splitlines())
    assert lines == ['{"id":2,"name":null}']


def test_blackhole_swallows_rows(spark: SparkSession, tmp_path: Path) -> None:
    run(
        input_rows(spark, tmp_path / "in", [{"id": 1}], "id INT"),
        table("id INT", {"connector": "blackhole"}),
        tmp_path / "cp",
    )
    assert (tmp_path / "cp" / "commits" / "0").exists()


def read_table(spark: SparkSession, tbl: Table, checkpoint: Path) -> list[Row]:
    """Every row of a bounded Kafka table, through `reading.source_dataframe` (the flink-kafka source)."""
    rows: list[Row] = []
    frame = reading.source_dataframe(spark, tbl)
    writer = frame.writeStream.foreachBatch(lambda batch, _: rows.extend(batch.collect()))
    query = writer.option("checkpointLocation", str(checkpoint)).trigger(availableNow=True).start()
    try:
        assert query.awaitTermination(180), "the query did not finish"
    finally:
        query.stop()
    return rows


@pytest.mark.slow
def test_round_trip_through_kafka(
    spark: SparkSession, kafka_bootstrap: str, topic_factory: Callable[..., str], tmp_path: Path
) -> None:
    topic = topic_factory(partitions=2)
    options = kafka_options(
        kafka_bootstrap,
        topic,
        **{
            "key.format": "csv",
            "key.fields": "id",
            "value.format": "json",
            "scan.startup.mode": "earliest-offset",
            "scan.bounded.mode": "latest-offset",
        },
    )
    tbl = table("id INT, name STRING, amount DECIMAL(10, 2), ts TIMESTAMP(3)", options)
    rows = [
        {"id": 1, "name": "a", "amount": "1.50", "ts": "2024-01-02 03:04:05"},
        {"id": 2, "name": None, "amount": None, "ts": None},
    ]
    schema = "id INT, name STRING, amount DECIMAL(10, 2), ts TIMESTAMP_NTZ"
    run(input_rows(spark, tmp_path / "in", rows, schema), tbl, tmp_path / "out-cp")
    back = read_table(spark, tbl, tmp_path / "in-cp")
    assert sorted((r["id"], r["name"], r["amount"], r["ts"]) for r in back) == [
        (1, "a", Decimal("1.50"), datetime(2024, 1, 2, 3, 4, 5)),
        (2, None, None, None),
    ]
    assert {r["__topic"] for r in back} == {topic}


@pytest.mark.slow
def test_upsert_kafka_source_reads_tombstones_as_deletes(
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Callable[..., None],
    tmp_path: Path,
) -> None:
    topic = topic_factory(partitions=1)
    produce(topic, [('{"id":1}', '{"id":1,"n":5}', None, None, None), ('{"id":1}', None, None, None, None)])
    options = {
        "connector": "upsert-kafka",
        "topic": topic,
        "properties.bootstrap.servers": kafka_bootstrap,
        "key.format": "json",
        "value.format": "json",
        "scan.bounded.mode": "latest-offset",
    }
    tbl = table("id INT, n BIGINT", options, extra=", PRIMARY KEY (id) NOT ENFORCED")
    back = read_table(spark, tbl, tmp_path / "cp")
    assert sorted((r["__offset"], r["id"], r["n"], r["__deleted"]) for r in back) == [
        (0, 1, 5, False),
        (1, 1, None, True),
    ]


def test_results_files_on_the_local_file_system_are_replaced_whole(spark: SparkSession, tmp_path: Path) -> None:
    """The quality gate's per-batch records: a batch run again replaces its record, and a checksum Hadoop wrote
    for an earlier version is removed, so Hadoop readers do not reject the new content."""
    fs = HadoopFs(spark, str(tmp_path))
    target = tmp_path / "quality" / "batch-000000000001.json"
    fs.write_text(str(target), '{"status": "failed"}')
    (target.parent / f".{target.name}.crc").write_bytes(b"stale")
    fs.write_text(f"file://{target}", '{"status": "passed"}')
    assert json.loads(target.read_text()) == {"status": "passed"}
    assert sorted(p.name for p in target.parent.iterdir()) == [target.name]
    assert fs.read_text(str(target)) == '{"status": "passed"}'
