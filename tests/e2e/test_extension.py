"""The session extension: pipeline statements through `spark.sql`, next to Spark's own SQL, on a real broker.

Each test installs the extension on its own `spark.newSession()` (temporary views and SQL settings are per
session) and closes it, so `spark.sql` of the shared session is never changed for other tests.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient
from pyspark.errors import AnalysisException, ParseException
from pyspark.sql.streaming import StreamingQuery

import connector
from connector.dev.produce import produce_file
from connector.diagnostics import PipelineError
from connector.entrypoints import extension
from connector.runtime.runner import RunOptions, run_file

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

REPO = Path(__file__).resolve().parents[2]
ORDERS: list[dict[str, Any]] = [
    {"id": 1, "customer": "alice", "amount": 12.5},
    {"id": 2, "customer": "bob", "amount": -3.0},
    {"id": 3, "customer": "carol", "amount": 40.0},
    {"id": 4, "customer": "alice", "amount": 7.25},
]


@pytest.fixture
def session(spark: SparkSession, kafka_bootstrap: str, tmp_path: Path) -> Iterator[extension.PipelineSession]:
    """The extension on a fresh session of the shared SparkContext, closed after the test."""
    installed = connector.install(
        spark.newSession(), variables={"brokers": kafka_bootstrap}, checkpoint_dir=tmp_path / "checkpoints"
    )
    yield installed
    installed.close()


def orders_table(topic: str, name: str = "orders", bounded: bool = True, extra: str = "") -> str:
    """A Kafka source with a computed column and a metadata column; the broker comes from a template."""
    bound = ", 'scan.bounded.mode' = 'latest-offset'" if bounded else ""
    return f"""
        CREATE TABLE {name} (
          id BIGINT,
          customer STRING,
          amount DOUBLE,
          doubled AS amount * 2,
          part INT METADATA FROM 'partition' VIRTUAL
        ) WITH (
          'connector' = 'kafka', 'topic' = '{topic}', 'properties.bootstrap.servers' = '{{{{ var("brokers") }}}}',
          'scan.startup.mode' = 'earliest-offset', 'format' = 'json'{bound}{extra}
        )"""


def json_sink(topic: str, name: str = "output") -> str:
    return f"""
        CREATE TABLE {name} (id BIGINT, customer STRING, amount DOUBLE, doubled DOUBLE, part INT) WITH (
          'connector' = 'kafka', 'topic' = '{topic}', 'properties.bootstrap.servers' = '{{{{ var("brokers") }}}}',
          'format' = 'json'
        )"""


def produce_orders(produce: Callable[..., None], topic: str, rows: Sequence[dict[str, Any]] = ORDERS) -> None:
    produce(topic, [(str(r["id"]).encode(), json.dumps(r).encode(), None, None, None) for r in rows])


def read_json_topic(bootstrap: str, topic: str) -> list[dict[str, Any]]:
    """Every JSON value of a one-partition topic, in order."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"check-{topic}", "enable.auto.commit": False})
    try:
        partition = TopicPartition(topic, 0, 0)
        end = consumer.get_watermark_offsets(partition, timeout=30)[1]
        consumer.assign([partition])
        values: list[dict[str, Any]] = []
        deadline = time.monotonic() + 60
        while len(values) < end:
            assert time.monotonic() < deadline, f"timed out reading {topic}"
            message = consumer.poll(1)
            if message is not None and not message.error():
                values.append(json.loads(message.value() or b"null"))
        return values
    finally:
        consumer.close()


def by_id(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda r: r["id"])


def expected_rows(partitions: dict[int, int]) -> list[dict[str, Any]]:
    return [{**r, "doubled": r["amount"] * 2, "part": partitions[r["id"]]} for r in ORDERS]


# ---------------------------------------------------------------------------------------------------------


def test_create_table_registers_a_spark_table_and_spark_sql_keeps_working(
    session: extension.PipelineSession, topic_factory: Callable[..., str]
) -> None:
    spark = session.spark
    topic = topic_factory()
    spark.sql(orders_table(topic))
    spark.sql("CREATE TABLE refunds (id BIGINT, amount DOUBLE) WITH ('connector' = 'print')")

    tables = {(r.tableName, r.isTemporary) for r in spark.sql("SHOW TABLES").collect()}
    assert {("orders", True), ("refunds", True)} <= tables
    described = [(r.col_name, r.data_type) for r in spark.sql("DESCRIBE orders").collect()]
    assert described == [
        ("id", "bigint"), ("customer", "string"), ("amount", "double"), ("doubled", "double"), ("part", "int")
    ]
    assert spark.table("orders").isStreaming
    assert spark.readStream.table("orders").isStreaming
    orders = session.pipeline.table("orders")
    assert orders is not None and orders.options["properties.bootstrap.servers"] == session.variables["brokers"]
    # a sink-only table is an empty view with its columns
    assert [(r.col_name, r.data_type) for r in spark.sql("DESCRIBE refunds").collect()] == [
        ("id", "bigint"), ("amount", "double")
    ]
    assert spark.table("refunds").count() == 0

    # Spark's own SQL, including syntax the Flink dialect rejects, is Spark's
    spark.sql("CREATE OR REPLACE TEMPORARY VIEW numbers AS SELECT id FROM range(3)")
    assert [r.id for r in spark.sql('SELECT id FROM numbers WHERE "a" = "a" ORDER BY id').collect()] == [0, 1, 2]
    assert spark.sql("SELECT :x AS x", args={"x": 5}).collect()[0].x == 5
    assert spark.sql("SELECT '{{' AS braces").collect()[0].braces == "{{"  # not a template: Spark's
    with pytest.raises(AnalysisException):
        spark.sql("SELECT * FROM no_such_table")


@pytest.mark.slow
def test_insert_runs_until_a_bounded_source_ends_and_reads_what_the_runner_reads(
    session: extension.PipelineSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Callable[..., None],
    tmp_path: Path,
) -> None:
    spark = session.spark
    source, via_sql, via_runner = topic_factory(partitions=2), topic_factory(), topic_factory()
    produce_orders(produce, source)
    spark.sql(orders_table(source))
    spark.sql(json_sink(via_sql))

    query = spark.sql("INSERT INTO output SELECT id, customer, amount, doubled, part FROM orders")

    assert isinstance(query, StreamingQuery)
    assert not query.isActive and query.exception() is None
    assert query.name == "session.output"
    from_sql = read_json_topic(kafka_bootstrap, via_sql)
    partitions = {r["id"]: r["part"] for r in from_sql}
    assert by_id(from_sql) == expected_rows(partitions)

    stream = (
        spark.readStream.table("orders")
        .writeStream.format("memory")
        .queryName("orders_from_readstream")
        .option("checkpointLocation", str(tmp_path / "memory"))
        .trigger(availableNow=True)
        .start()
    )
    assert stream.awaitTermination(120)
    from_stream = [r.asDict() for r in spark.table("orders_from_readstream").collect()]

    pipeline = tmp_path / "copy.sql"
    pipeline.write_text(
        ";\n".join([orders_table(source), json_sink(via_runner), "INSERT INTO output SELECT * FROM orders"]) + ";\n"
    )
    shuffle = spark.conf.get("spark.sql.shuffle.partitions")
    try:
        code = run_file(pipeline, RunOptions({"brokers": kafka_bootstrap}, "local[2]", tmp_path / "runner"))
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", shuffle or "2")
    assert code == 0
    from_runner = read_json_topic(kafka_bootstrap, via_runner)
    assert by_id(from_stream) == by_id(from_runner) == by_id(from_sql)


@pytest.mark.slow
def test_insert_over_a_bounded_generator_returns_once_its_final_watermark_fired_every_window(
    session: extension.PipelineSession, kafka_bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    """A datagen table bounded by its sequence alone ends, and as Flink's bounded sources do, with the final
    watermark: the last window is written before spark.sql returns."""
    spark, out = session.spark, topic_factory()
    spark.sql(
        "CREATE TABLE ticks (id BIGINT, ts AS TO_TIMESTAMP_LTZ(id * 1000, 3), WATERMARK FOR ts AS ts) WITH ("
        "'connector' = 'datagen', 'rows-per-second' = '50', 'fields.id.kind' = 'sequence', "
        "'fields.id.start' = '1', 'fields.id.end' = '25')"
    )
    spark.sql(
        "CREATE TABLE per_window (id BIGINT, cnt BIGINT) WITH ('connector' = 'kafka', "
        f"'topic' = '{out}', 'properties.bootstrap.servers' = '{{{{ var(\"brokers\") }}}}', 'format' = 'json')"
    )

    query = spark.sql(
        "INSERT INTO per_window SELECT MAX(id), COUNT(*) "
        "FROM TABLE(TUMBLE(TABLE ticks, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end"
    )

    assert isinstance(query, StreamingQuery)
    assert not query.isActive and query.exception() is None
    assert sorted((r["id"], r["cnt"]) for r in read_json_topic(kafka_bootstrap, out)) == [(9, 9), (19, 10), (25, 6)]


@pytest.mark.slow
def test_insert_from_an_unbounded_source_returns_the_running_query(
    session: extension.PipelineSession, topic_factory: Callable[..., str], produce: Callable[..., None]
) -> None:
    spark = session.spark
    source = topic_factory()
    produce_orders(produce, source)
    spark.sql(orders_table(source, bounded=False))
    spark.sql("CREATE TABLE nowhere (id BIGINT) WITH ('connector' = 'blackhole')")

    query = spark.sql("INSERT INTO nowhere SELECT id FROM orders")
    again = spark.sql("INSERT INTO nowhere SELECT id FROM orders WHERE amount > 0")
    try:
        assert query.isActive and again.isActive
        assert [query.name, again.name] == ["session.nowhere", "session.nowhere-2"]  # own names, own checkpoints
        spark.sql("DROP TABLE orders")  # as in Flink, the INSERTs already started keep reading it
        query.processAllAvailable()
        assert query.isActive and again.isActive
    finally:
        session.close()
    assert not query.isActive and not again.isActive
    with pytest.raises(ParseException):  # spark.sql is Spark's own again
        spark.sql("SET 'pipeline.name' = 'x'")


def test_settings_views_alter_and_drop_follow_the_catalog(
    session: extension.PipelineSession, topic_factory: Callable[..., str]
) -> None:
    spark = session.spark
    assert [tuple(r) for r in spark.sql("SET 'pipeline.name' = 'notebook'").collect()] == [
        ("pipeline.name", "notebook")
    ]
    assert session.pipeline.setting("pipeline.name") == "notebook"
    spark.sql("SET 'parallelism.default' = '3'")
    assert spark.conf.get("spark.sql.shuffle.partitions") == "3"
    spark.sql("SET spark.sql.shuffle.partitions = 2")  # Spark's own SET
    assert spark.conf.get("spark.sql.shuffle.partitions") == "2"
    with pytest.warns(extension.PipelineWarning, match="ignored-setting"):
        spark.sql("SET 'table.exec.mini-batch.enabled' = 'true'")

    spark.sql(orders_table(topic_factory()))
    spark.sql("CREATE VIEW big_orders AS SELECT id, amount FROM orders WHERE amount > 10")
    assert spark.table("big_orders").isStreaming
    assert [r.col_name for r in spark.sql("DESCRIBE big_orders").collect()] == ["id", "amount"]

    spark.sql("ALTER TABLE orders SET ('scan.startup.mode' = 'latest-offset')")
    altered = session.pipeline.table("orders")
    assert altered is not None and altered.options["scan.startup.mode"] == "latest-offset"
    spark.sql("ALTER TABLE orders RESET ('scan.startup.mode')")
    reset = session.pipeline.table("orders")
    assert reset is not None and "scan.startup.mode" not in reset.options

    spark.sql("DROP VIEW big_orders")
    spark.sql("DROP TABLE orders")
    names = {r.tableName for r in spark.sql("SHOW TABLES").collect()}
    assert not names & {"orders", "big_orders"}
    assert session.pipeline.table("orders") is None


def test_mistakes_raise_pipeline_errors_that_point_into_the_statement(
    session: extension.PipelineSession, topic_factory: Callable[..., str]
) -> None:
    spark = session.spark
    spark.sql(orders_table(topic_factory()))
    with pytest.raises(PipelineError) as unknown_option:
        spark.sql("CREATE TABLE refunds (id BIGINT)\nWITH ('connector' = 'print', 'print-identifer' = 'r')")
    assert str(unknown_option.value).startswith("<spark.sql>:2:30: error: [unknown-option]")
    assert "Did you mean 'print-identifier'?" in str(unknown_option.value)
    assert session.pipeline.table("refunds") is None

    with pytest.raises(PipelineError, match=r"<spark.sql>:1:46: error: \[syntax\] Unexpected 'print', expected '='"):
        spark.sql("CREATE TABLE t (id BIGINT) WITH ('connector' 'print')")
    with pytest.raises(PipelineError, match=r"\[missing-var\] Variable 'topic' is not defined"):
        spark.sql("CREATE TABLE t (id BIGINT) WITH ('connector' = 'print', 'print-identifier' = '{{ var('topic') }}')")

    spark.sql("CREATE TABLE refunds (id BIGINT, amount DOUBLE) WITH ('connector' = 'print')")
    with pytest.raises(PipelineError, match=r"^<spark.sql>:2:12: error: \[unknown-column\] Column 'amont'"):
        spark.sql("INSERT INTO refunds\nSELECT id, amont FROM orders")
    assert spark.streams.active == []


def test_builder_installs_the_extension_from_the_configuration(spark: SparkSession, tmp_path: Path) -> None:
    keys = {"spark.kafka_sql.var.identifier": "from-conf", "spark.kafka_sql.checkpointLocation": str(tmp_path)}
    builder = connector.builder()
    for key, value in keys.items():
        builder = builder.config(key, value)
    installed = builder.getOrCreate()  # the running session, with the extension
    session = getattr(installed.sql, "__self__", None)
    try:
        assert isinstance(session, extension.PipelineSession)
        assert connector.install(installed) is session
        assert session.checkpoint_root == tmp_path
        installed.sql(
            "CREATE TABLE p (id BIGINT) WITH ('connector' = 'print', 'print-identifier' = '{{ var('identifier') }}')"
        )
        table = session.pipeline.table("p")
        assert table is not None and table.options["print-identifier"] == "from-conf"
    finally:
        if isinstance(session, extension.PipelineSession):
            session.close()
        for key in keys:
            spark.conf.unset(key)
    assert "sql" not in vars(installed)


@pytest.mark.slow
def test_a_notebook_script_runs_the_quickstart_through_spark_sql_alone(kafka_bootstrap: str, tmp_path: Path) -> None:
    data = REPO / "sql/examples/quickstart_orders.jsonl"
    produce_file(kafka_bootstrap, "quickstart_orders", data, partitions=2, key_field="id", recreate=True)
    admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
    if any(g.group_id == "quickstart" for g in admin.list_consumer_groups().result().valid):
        admin.delete_consumer_groups(["quickstart"])["quickstart"].result()
    environment = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    done = subprocess.run(
        [sys.executable, str(REPO / "sql/examples/quickstart_notebook.py"), kafka_bootstrap],
        cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=600, check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    orders = [json.loads(line) for line in data.read_text().splitlines()]
    refunds = {f"refund> +I[{o['id']}, {o['customer']}, {o['amount']}]" for o in orders if o["amount"] <= 0}
    assert {line for line in lines if line.startswith("refund> ")} == refunds
    assert any(line.startswith("revenue> +I[2026-01-01T10:00, 2026-01-01T10:01, ") for line in lines)
    assert "quickstart.refunds: finished, 40 input rows" in lines
    assert "quickstart.revenue_per_minute: finished, 40 input rows" in lines
    assert "|         |revenue_per_minute|       true|" in lines  # SHOW TABLES
    assert [line for line in lines if line in ("|alice|  2|", "|  bob|  1|")] == ["|alice|  2|", "|  bob|  1|"]


def _workers_default_to_another_python() -> dict[str, str]:
    """The environment of a session started without PYSPARK_PYTHON, where `python3` (Spark's default for its Python
    workers) is a Python without kafka-sql: the base interpreter of this virtual environment. (Run it outside the
    checkout, whose `connector` folder any Python started there imports.)"""
    environment = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}
    environment["PATH"] = f"{Path(sys.base_prefix) / 'bin'}{os.pathsep}{os.environ['PATH']}"
    return environment


@pytest.mark.slow
def test_a_session_whose_workers_lack_kafka_sql_is_refused_at_install_saying_what_to_set(tmp_path: Path) -> None:
    script = (
        "import connector\nfrom pyspark.sql import SparkSession\n"
        "spark = SparkSession.builder.master('local[1]').getOrCreate()\n"
        "try:\n    connector.install(spark)\nexcept RuntimeError as error:\n    print('refused:', error)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], env=_workers_default_to_another_python(), cwd=tmp_path,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (
        "refused: Spark's Python workers run 'python3' (PYSPARK_PYTHON), which does not have kafka-sql installed; "
        f"kafka-sql's sources and sinks run in them. Start the session with PYSPARK_PYTHON={sys.executable} (the "
        "Python with kafka-sql), or with connector.builder(), which sets it for a local master."
    ) in done.stdout


@pytest.mark.slow
def test_the_builder_gives_a_new_local_session_workers_that_run_kafka_sql(kafka_bootstrap: str, tmp_path: Path) -> None:
    """Without PYSPARK_PYTHON, a Kafka table's view is planned in a Python worker, which imports kafka-sql."""
    script = (
        "import sys, connector\n"
        "spark = connector.builder().master('local[1]').getOrCreate()\n"
        "spark.sql(\"CREATE TABLE o (id BIGINT, name STRING) WITH ('connector' = 'kafka', 'topic' = 'o', "
        "'properties.bootstrap.servers' = '\" + sys.argv[1] + \"', 'properties.group.id' = 'g', 'format' = 'json')\")\n"
        "print('columns', spark.table('o').columns)\n"
    )
    done = subprocess.run([sys.executable, "-c", script, kafka_bootstrap], env=_workers_default_to_another_python(),
                          cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "columns ['id', 'name']" in done.stdout
