"""pytest plugin (entry point `kafka_sql`): run a pipeline file on given input rows, assert expectations on its sinks.

    import great_expectations as gx

    def test_clean_orders(run_pipeline):
        result = run_pipeline("sql/examples/orders.sql", inputs={"orders": [{"id": 1, "amount": 9.5}, ...]})
        result.expect("clean_orders", gx.expectations.ExpectColumnValuesToNotBeNull(column="id"))

`run_pipeline(path, inputs=None, variables=None, timeout=300)` runs the file in bounded mode on a real broker,
isolated from every other run:

* every Kafka table (kafka, upsert-kafka) gets a fresh topic on the test broker and a fresh consumer group;
  sources read it from the earliest offset to the latest offset at start ('scan.bounded.mode' =
  'latest-offset'), and the file's security `properties.*` (production's) are replaced by the test broker's
  client properties (`kafka_client_properties`, none for the embedded plaintext broker);
* `inputs` maps a Kafka source table to its rows (dicts of column values; timestamps as datetime or text
  like '2026-01-01 10:00:09'). They are encoded with the table's own key and value formats, and writable
  metadata columns (`timestamp`, `headers`) become the record's metadata, then produced in order to one
  partition;
* sinks of other connectors (print, blackhole, filesystem, jdbc, delta, iceberg) write to a fresh topic as JSON
  instead, so that every sink's output can be read back; a keyed sink that takes updates (jdbc, delta, iceberg
  with a PRIMARY KEY) is written as upsert-kafka, so its output is the table it would hold;
* every query must be bounded (Kafka sources always are here; datagen needs 'number-of-rows').

The result holds each sink's output rows, decoded with the sink's formats, in the order they were written.
For an upsert-kafka sink it is the resulting table: the last row per key, deleted keys left out.
`result.expect(sink, *expectations)` validates them with Great Expectations (pandas engine) and fails with
one message per unmet expectation: which one, the observed value, and sample rows.

Fixtures: `run_pipeline`, and the three it uses, which a conftest.py may override: `kafka_bootstrap` (the
broker at `--kafka-sql-bootstrap` / `KAFKA_SQL_BOOTSTRAP`, else an embedded broker started for the session),
`kafka_client_properties` (a secured test broker's client properties, Java names as in 'properties.*', from
`--kafka-sql-client-config FILE` / `KAFKA_SQL_CLIENT_CONFIG` and `--kafka-sql-property KEY=VALUE`) and `spark`
(the active SparkSession, else a small local one for the session). Each run uses its own
`spark.newSession()`, so temporary views and SQL settings of runs never mix.

The plugin is loaded by every pytest run in an environment where kafka-sql is installed; Spark, the engine
and Great Expectations are imported when a fixture first needs them.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import re
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from connector.catalog.model import Column, ColumnKind, Pipeline, Table
from connector.dev import broker
from connector.diagnostics import did_you_mean
from connector.errors import KafkaSqlError
from connector.runtime.python_launcher import python_executable

if TYPE_CHECKING:
    import pandas as pd
    from great_expectations.core.batch_definition import BatchDefinition
    from great_expectations.core.expectation_validation_result import ExpectationValidationResult
    from great_expectations.expectations import Expectation
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

    from connector.planning.plan import PipelinePlan
    from connector.runtime.engine import RunningQuery

BOOTSTRAP_ENV = "KAFKA_SQL_BOOTSTRAP"
CLIENT_CONFIG_ENV = "KAFKA_SQL_CLIENT_CONFIG"
INPUT_METADATA = ("timestamp", "headers")  # metadata an input row may set: the rest is Kafka's to assign
SAMPLE_ROWS = 5
# Input records may carry old timestamps (`timestamp` metadata): time-based retention must not delete them.
TOPIC_CONFIG = {"retention.ms": "-1"}
_SECURITY_PROPERTY = re.compile(r"properties\.(security\.|sasl\.|ssl\.)")
_STARTS_AND_BOUNDS = re.compile(r"scan\.(startup|bounded)\.(?!end-watermark$)")  # a test run sets them


class PipelineRunError(KafkaSqlError, AssertionError):
    """The pipeline could not run as asked (bad inputs, unbounded query, failed query); the message says why."""


class ExpectationFailed(KafkaSqlError, AssertionError):
    """A sink's output does not meet expectations; the message lists each failure with rows."""


# ---------------------------------------------------------------------------------------------------------
# Results and expectations
# ---------------------------------------------------------------------------------------------------------


@dataclass
class SinkOutput:
    """What one sink table received: its persisted columns and rows (dicts), in write order."""

    table: str
    columns: list[str]
    rows: list[dict[str, Any]] = field(default_factory=list)
    topic: str = ""


class PipelineResult:
    """The outputs of one bounded run of a pipeline file, per sink table."""

    def __init__(self, path: Path, outputs: Mapping[str, SinkOutput]) -> None:
        self.path = path
        self.outputs = {name.lower(): output for name, output in outputs.items()}

    @property
    def sinks(self) -> list[str]:
        return [o.table for o in self.outputs.values()]

    def output(self, sink: str) -> SinkOutput:
        found = self.outputs.get(sink.lower())
        if found is None:
            raise KeyError(
                f"'{sink}' is not a sink of {self.path}.{did_you_mean(sink, self.sinks)} "
                f"Sinks: {', '.join(self.sinks) or 'none'}."
            )
        return found

    def rows(self, sink: str) -> list[dict[str, Any]]:
        return self.output(sink).rows

    def frame(self, sink: str) -> pd.DataFrame:
        """The sink's rows as a pandas DataFrame (what expectations are evaluated on)."""
        import pandas as pd

        output = self.output(sink)
        return pd.DataFrame.from_records(output.rows, columns=output.columns)

    def expect(self, sink: str, *expectations: Expectation) -> PipelineResult:
        """Validate the sink's rows; raise ExpectationFailed describing every unmet expectation."""
        __tracebackhide__ = True
        output = self.output(sink)
        frame = self.frame(sink)
        failures = []
        for expectation in expectations:
            result = _batch_definition().get_batch(batch_parameters={"dataframe": frame}).validate(
                expectation, result_format="COMPLETE"
            )
            if not result.success:
                failures.append(_describe(result, output))
        if failures:
            raise ExpectationFailed(
                f"Sink '{output.table}' of {self.path} ({len(output.rows)} rows) does not meet "
                f"{len(failures)} of {len(expectations)} expectation(s):\n" + "\n".join(failures)
            )
        return self


@functools.cache
def _batch_definition() -> BatchDefinition:
    """One in-memory GX context for the process: a pandas data source whose batches are DataFrames."""
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig

    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    source = context.data_sources.add_pandas(name="kafka_sql_sinks")
    return source.add_dataframe_asset(name="sink").add_batch_definition_whole_dataframe("whole")


def _describe(result: ExpectationValidationResult, output: SinkOutput) -> str:
    """One failed expectation: its call, what was observed, and the rows that show it."""
    rows = output.rows
    config = result.expectation_config
    arguments = ", ".join(f"{k}={v!r}" for k, v in (config.kwargs if config else {}).items() if k != "batch_id")
    lines = [f"  {config.type if config else 'expectation'}({arguments})"]
    details = result.result or {}
    error = _exception_message(result.exception_info)
    if error:
        lines.append(f"    error: {error}")
    elif "observed_value" in details:
        lines.append(f"    observed value: {_plain(details['observed_value'])!r}")
    elif "unexpected_count" in details:
        percent = details.get("unexpected_percent") or 0.0
        values = [_plain(v) for v in list(details.get("partial_unexpected_list") or [])[:SAMPLE_ROWS]]
        lines.append(
            f"    observed: {details['unexpected_count']} of {details.get('element_count', len(rows))} rows "
            f"unexpected ({percent:.1f}%), e.g. {values}"
        )
    if error:
        lines.append(f"    columns: {', '.join(output.columns)}")
        return "\n".join(lines)
    indices = [i for i in details.get("unexpected_index_list") or [] if isinstance(i, int) and 0 <= i < len(rows)]
    sample = [rows[i] for i in indices[:SAMPLE_ROWS]] if indices else list(rows[:SAMPLE_ROWS])
    lines.append("    unexpected rows:" if indices else "    rows:" if sample else "    rows: none")
    lines.extend(f"      {_show(row)}" for row in sample)
    return "\n".join(lines)


def _plain(value: Any) -> Any:
    """numpy scalars (what the pandas engine reports) as Python values, so messages read `70.0`."""
    item = getattr(value, "item", None)
    return item() if callable(item) and getattr(value, "shape", None) == () else value


def _show(row: Mapping[str, Any]) -> str:
    """A row as `{id: 7, customer: 'GRACE', order_time: 2026-01-01 10:00:30}`."""
    def value(v: Any) -> str:
        return v.isoformat(sep=" ") if isinstance(v, datetime) else str(v) if isinstance(v, date) else repr(v)

    return "{" + ", ".join(f"{k}: {value(v)}" for k, v in row.items()) + "}"


def _exception_message(info: Any) -> str | None:
    """GX's exception info: one dict, or one per metric."""
    if not isinstance(info, dict):
        return None
    if "raised_exception" in info:
        return str(info.get("exception_message")) if info.get("raised_exception") else None
    messages = [_exception_message(v) for v in info.values()]
    return next((m for m in messages if m), None)


# ---------------------------------------------------------------------------------------------------------
# Running a file in bounded mode
# ---------------------------------------------------------------------------------------------------------


def run_pipeline_file(
    spark: SparkSession,
    bootstrap: str,
    path: str | Path,
    inputs: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
    variables: Mapping[str, str] | None = None,
    workdir: Path | None = None,
    timeout: float = 300.0,
    client_properties: Mapping[str, str] | None = None,
) -> PipelineResult:
    """Run pipeline file `path` once on `inputs`, isolated on broker `bootstrap` (a secured one: its
    `client_properties`, Java names); return its sinks' outputs."""
    from connector.planning.plan import build
    from connector.runtime import engine
    from connector.sql.frontend import compile_file

    path = Path(path)
    pipeline = compile_file(path, variables).require()
    run_id = uuid.uuid4().hex[:8]
    inputs = dict(inputs or {})
    _check_inputs(pipeline, inputs, path)
    topics = _isolate(pipeline, bootstrap, run_id, client_properties or {})
    plan = build(pipeline, path.stem)
    _check_bounded(plan, path)
    session = spark.newSession()
    for name, rows in inputs.items():
        table = pipeline.table(name)
        assert table is not None  # checked above
        _produce(session, table, rows)
    root = workdir or Path(tempfile.mkdtemp(prefix="kafka-sql-test-"))
    running = engine.start_all(session, plan, root / run_id, pipeline)
    _wait(running, timeout)
    outputs: dict[str, SinkOutput] = {}
    for query in plan.queries:
        if query.sink.name.lower() not in outputs:
            outputs[query.sink.name.lower()] = _read_sink(session, query.sink, topics[query.sink.name.lower()])
    return PipelineResult(path, outputs)


def _topic_table(table: Table) -> bool:
    """Whether the table is of a connector of topics (kafka, upsert-kafka): the tables a test feeds and reads."""
    from connector.connectors import registry

    factory = registry.connector_factory(table)
    return factory is not None and factory.topic_option is not None


def _isolate(pipeline: Pipeline, bootstrap: str, run_id: str, client_properties: Mapping[str, str]) -> dict[str, str]:
    """Point every Kafka table at a fresh topic on `bootstrap`, and every other sink at one too (JSON)."""
    from connector.connectors import registry
    from connector.connectors.kafka.java_properties import librdkafka_properties

    sinks = {t.name.lower() for i in pipeline.inserts if (t := pipeline.table(i.target)) is not None}
    client = librdkafka_properties(client_properties)
    topics: dict[str, str] = {}
    for key, table in pipeline.tables.items():
        if not _topic_table(table) and key not in sinks:
            continue
        topic = f"{re.sub(r'[^A-Za-z0-9._-]+', '-', table.name)}-{run_id}"
        broker.create_topic(bootstrap, topic, config=TOPIC_CONFIG, client=client)
        topics[key] = topic
        factory = registry.connector_factory(table)
        if _topic_table(table) and factory is not None:
            options = {k: v for k, v in table.options.items()
                       if not _SECURITY_PROPERTY.match(k) and not _STARTS_AND_BOUNDS.match(k) and k != "topic-pattern"}
            if any(o.key == "scan.startup.mode" for o in factory.options):
                options["scan.startup.mode"] = "earliest-offset"
            for unique in ("properties.group.id", "sink.transactional-id-prefix"):
                if unique in options:
                    options[unique] = f"{options[unique]}-{run_id}"
        else:  # a data-quality gate ('quality.*') stays with its sink
            keyed = bool(table.primary_key) and factory is not None and factory.updates == "with-primary-key"
            stand_ins = {f.upsert_source: f.stand_in for f in registry.factories().values() if f.stand_in}
            written = dict(stand_ins[keyed])
            options = {**written, **{k: v for k, v in table.options.items() if k.startswith("quality.")}}
        table.options = {
            **options,
            **{f"properties.{key}": value for key, value in client_properties.items()},
            "topic": topic,
            "properties.bootstrap.servers": bootstrap,
            "scan.bounded.mode": "latest-offset",
        }
    return topics


def _check_inputs(pipeline: Pipeline, inputs: Mapping[str, Sequence[Mapping[str, Any]]], path: Path) -> None:
    for name, rows in inputs.items():
        table = pipeline.table(name)
        if table is None:
            kafka = [t.name for t in pipeline.tables.values() if _topic_table(t)]
            raise PipelineRunError(
                f"inputs: {path} has no table '{name}'.{did_you_mean(name, kafka)} Kafka tables: {', '.join(kafka)}."
            )
        if not _topic_table(table):
            raise PipelineRunError(
                f"inputs: table '{name}' uses connector '{table.connector}'; only Kafka tables take input rows."
            )
        allowed = {c.name for c in _input_columns(table)}
        unknown = sorted({key for row in rows for key in row} - allowed)
        if unknown:
            raise PipelineRunError(
                f"inputs: table '{name}' has no column(s) {', '.join(unknown)} to set. Input columns: "
                f"{', '.join(c.name for c in _input_columns(table))} (computed columns and read-only metadata "
                "are derived)."
            )


def _check_bounded(plan: PipelinePlan, path: Path) -> None:
    for query in plan.queries:
        if query.bounded or query.row_limit is not None:
            continue
        endless = [s.table.name for s in query.sources if not s.bounded and s.row_limit is None]
        raise PipelineRunError(
            f"{path}: query '{query.name}' reads unbounded table(s) {', '.join(endless)}; a test run needs "
            "bounded sources (datagen: set 'number-of-rows'; filesystem: no 'source.monitor-interval')."
        )


def _input_columns(table: Table) -> list[Column]:
    """Columns an input row may set: physical ones, and metadata Kafka records carry from the producer."""
    return [
        dataclasses.replace(c, virtual=False)
        for c in table.columns
        if c.kind is ColumnKind.PHYSICAL
        or (c.kind is ColumnKind.METADATA and (c.metadata_key or c.name) in INPUT_METADATA)
    ]


def _json_value(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, bytes):
        return value.decode("utf-8")
    raise TypeError(f"cannot use {value!r} ({type(value).__name__}) as an input value")


def _produce(spark: SparkSession, table: Table, rows: Sequence[Mapping[str, Any]]) -> None:
    """Encode `rows` with the table's formats and write them, in order, to its topic."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructField, StructType

    from connector.catalog.spark_types import spark_type
    from connector.connectors.kafka.writing import KafkaBatch

    columns = _input_columns(table)
    options = {**table.options, "sink.delivery-guarantee": "at-least-once"}
    writable = dataclasses.replace(table, columns=columns, options=options)
    schema = StructType([StructField(c.name, spark_type(c.data_type)) for c in columns if c.data_type is not None])
    data = [(index, json.dumps(row, default=_json_value)) for index, row in enumerate(rows, start=1)]
    lines = spark.createDataFrame(data, "__row int, __line string")
    problem = _unreadable_value(lines, table, columns, schema, rows)
    if problem is not None:
        raise PipelineRunError(problem)
    frame = lines.select(F.from_json("__line", schema, {"mode": "FAILFAST"}).alias("row")).select("row.*")
    # As a pipeline's Kafka sink writes (one task: the rows keep their order), without the data source write path's
    # two Python processes on the driver.
    KafkaBatch(writable)(frame.coalesce(1), 0)


def _unreadable_value(
    lines: DataFrame, table: Table, columns: Sequence[Column], schema: StructType, rows: Sequence[Mapping[str, Any]]
) -> str | None:
    """The first input value that its column's type cannot hold, said as the user wrote it, before any is written
    (Spark's FAILFAST error in the write names neither row nor column): `lines` (`__row`, the row's JSON `__line`)
    parsed one column at a time."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType, StructField, StructType

    permissive = {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": "__corrupt"}
    failed = [
        F.from_json("__line", StructType([typed, StructField("__corrupt", StringType())]), permissive)
        .getField("__corrupt").isNotNull().alias(typed.name)
        for typed in schema.fields
    ]
    by_name = {column.name: column for column in columns}
    for found in lines.select("__row", *failed).orderBy("__row").collect():
        for typed in schema.fields:
            if found[typed.name]:
                value = rows[found["__row"] - 1].get(typed.name)
                return (
                    f"inputs: table '{table.name}' row {found['__row']}: column '{typed.name}' "
                    f"({by_name[typed.name].type_sql}) cannot hold {value!r}."
                )
    return None


def _wait(running: Sequence[RunningQuery], timeout: float) -> None:
    """Wait until every query finished; stop them all and raise on a failure or at the timeout."""
    from connector.entrypoints.extension import QueryFailedError, finish

    deadline = time.monotonic() + timeout
    try:
        for r in running:
            if not finish(r, max(deadline - time.monotonic(), 0.001)):
                raise PipelineRunError(f"Query '{r.plan.name}' did not finish within {timeout:.0f} s.")
    except QueryFailedError as err:
        raise PipelineRunError(str(err)) from None
    finally:
        for r in running:
            r.query.stop()


def _read_sink(spark: SparkSession, table: Table, topic: str) -> SinkOutput:
    """The sink's topic, decoded with its formats; an upsert-kafka sink materialized (last row per key)."""
    from connector.connectors import registry
    from connector.connectors.kafka.reading import kafka_rows
    from connector.connectors.kafka.source import KafkaSource
    from connector.connectors.reading import DELETED, OFFSET, PARTITION
    from connector.runtime import data_sources

    data_sources.register(spark, KafkaSource)
    options = {
        **{key: value for key, value in table.options.items() if key.startswith("properties.")},
        "topic": topic,
        "properties.bootstrap.servers": table.options["properties.bootstrap.servers"],
        "scan.startup.mode": "earliest-offset",
        "scan.bounded.mode": "latest-offset",
        "properties.isolation.level": "read_committed",
    }
    raw = spark.read.format(KafkaSource.name()).options(**options).load()
    decoded = kafka_rows(raw, table, observation=f"malformed_{uuid.uuid4().hex}")
    names = [c.name for c in table.columns if c.persisted]
    upsert = registry.upsert_source(table)
    hidden = [PARTITION, OFFSET, *([DELETED] if upsert else [])]
    records = sorted(decoded.select(*names, *hidden).collect(), key=lambda r: (r[PARTITION], r[OFFSET]))
    rows = [{n: record.asDict(recursive=True)[n] for n in names} for record in records]
    if upsert:
        latest: dict[tuple[Any, ...], dict[str, Any] | None] = {}
        for record, row in zip(records, rows, strict=True):
            latest[tuple(row[k] for k in table.primary_key)] = None if record[DELETED] else row
        rows = [row for row in latest.values() if row is not None]
    return SinkOutput(table.name, names, rows, topic)


# ---------------------------------------------------------------------------------------------------------
# Fixtures
# ---------------------------------------------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kafka-sql")
    group.addoption(
        "--kafka-sql-bootstrap",
        default=None,
        help=f"Kafka broker for run_pipeline (else ${BOOTSTRAP_ENV}, else an embedded broker for the session)",
    )
    group.addoption(
        "--kafka-sql-client-config",
        default=None,
        help=f"client properties file of a secured test broker, Java names (else ${CLIENT_CONFIG_ENV})",
    )
    group.addoption(
        "--kafka-sql-property",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a client property of a secured test broker (repeatable; wins over the file)",
    )


@pytest.fixture(scope="session")
def kafka_bootstrap(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The broker of `run_pipeline`: the given one, else an embedded broker started for the session."""
    given = request.config.getoption("kafka_sql_bootstrap") or os.environ.get(BOOTSTRAP_ENV)
    if given:
        yield given
        return
    data_dir = tmp_path_factory.mktemp("kafka-sql-broker")
    info = broker.start(data_dir, on_progress=lambda message: print(message, file=sys.stderr))
    try:
        yield info.bootstrap
    finally:
        broker.stop(data_dir)


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    """The active SparkSession, else a small local one (stopped at the end of the session)."""
    os.environ.setdefault("PYSPARK_PYTHON", python_executable())
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        yield active
        return
    from connector.runtime import data_sources
    from connector.runtime.session import FLINK_SQL_CONF
    from connector.runtime.spark_jars import every_package, package_jars

    jars = package_jars(every_package())  # the formats' Spark modules (spark-avro), downloaded once
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("kafka-sql-pytest")
        .config("spark.jars", ",".join(str(jar) for jar in jars))
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
    )
    for key, value in FLINK_SQL_CONF.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("WARN")
    data_sources.load_static(session)
    yield session
    session.stop()


@pytest.fixture(scope="session")
def kafka_client_properties(request: pytest.FixtureRequest) -> dict[str, str]:
    """Client properties of the test broker (Java names, as in 'properties.*'); empty for a plaintext one."""
    from connector.connectors.kafka.java_properties import client_properties

    path = request.config.getoption("kafka_sql_client_config") or os.environ.get(CLIENT_CONFIG_ENV)
    try:
        return client_properties(Path(path) if path else None, request.config.getoption("kafka_sql_property"))
    except ValueError as error:
        raise pytest.UsageError(str(error)) from None


@pytest.fixture
def run_pipeline(
    spark: SparkSession, kafka_bootstrap: str, kafka_client_properties: dict[str, str], tmp_path: Path
) -> Callable[..., PipelineResult]:
    """`run_pipeline(path, inputs=None, variables=None, timeout=300) -> PipelineResult` (see the module doc)."""

    def run(
        path: str | Path,
        inputs: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
        variables: Mapping[str, str] | None = None,
        timeout: float = 300.0,
    ) -> PipelineResult:
        __tracebackhide__ = True
        return run_pipeline_file(
            spark, kafka_bootstrap, path, inputs, variables, tmp_path, timeout, kafka_client_properties
        )

    return run
