"""The session extension: `spark.sql()` that also runs pipeline statements, next to Spark's own SQL.

    spark = SparkSession.builder.getOrCreate()
    connector.install(spark, variables={"brokers": "127.0.0.1:9092"})
    spark.sql("CREATE TABLE orders (...) WITH ('connector' = 'kafka', ...)")   # registered: spark.table("orders")
    query = spark.sql("INSERT INTO clean_orders SELECT ... FROM orders")       # a StreamingQuery

A text passed to `spark.sql` is rendered as a template when it holds `{{`, `{%` or `{#` (the same `var()`,
`env_var()` and macros as pipeline files) and parsed with the Flink dialect. These statements are the
pipeline's; everything else, and any text the Flink dialect cannot parse, goes to Spark unchanged:

* `CREATE TABLE ... WITH ('connector' = ...)` and `CREATE TABLE ... LIKE <pipeline table>`: the table joins
  the session's catalog and is registered as a temporary view, so `spark.table`, `spark.readStream.table`,
  `SHOW TABLES`, `DESCRIBE` and Spark SQL queries see it. A table that can be read is a streaming view of its
  rows exactly as an INSERT reads them (computed columns, watermark); a sink-only table (print, blackhole,
  a table whose source options are incomplete) is an empty view with its columns.
* `CREATE VIEW` over pipeline tables or views, `ALTER` and `DROP` of them: applied to the catalog, and to the
  temporary views.
* `SET 'key' = 'value'` and `RESET 'key'` (quoted keys, Flink's syntax): pipeline settings ('pipeline.name',
  'parallelism.default', ...). Quoted `spark.*` keys set Spark's configuration; unquoted `SET k=v` is Spark's.
* `INSERT INTO <pipeline table>` and `EXECUTE STATEMENT SET`: planned and started like `kafka-sql run`
  starts them. The result is the StreamingQuery (a list of them for a statement set). When every source
  is bounded, the call returns once the query finished and its last offsets are committed.

Statements apply in order, with the semantics of a pipeline file (the session's accepted statements form
one script). Mistakes raise `PipelineError` with the line and column in the text given to `spark.sql`;
warnings (ignored settings, shared consumer groups) are issued as `PipelineWarning`.

Configuration is read from the Spark conf, so it can come from `SparkSession.builder.config(...)`,
`spark-defaults.conf` or `spark-submit --conf` (arguments of `install` win):

=====================================  =================================================================
``spark.kafka_sql.var.<name>``         template variable `name`
``spark.kafka_sql.varsFile``           a vars file (JSON or KEY=VALUE lines), below the `var.*` keys
``spark.kafka_sql.templates``          extra macro directories, comma separated
``spark.kafka_sql.checkpointLocation`` checkpoint root of INSERTs; else `spark.sql.streaming.checkpointLocation`;
                                       else a new temporary directory (no restore across runs)
=====================================  =================================================================

`builder()` is a SparkSession builder whose `getOrCreate()` installs the extension, so the configuration
alone turns it on: `connector.builder().config("spark.kafka_sql.var.brokers", "...").getOrCreate()`.
Only classic (non-Connect) sessions are supported.
"""

from __future__ import annotations

import bisect
import dataclasses
import os
import re
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyspark.errors import AnalysisException, StreamingQueryException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming import StreamingQuery
from pyspark.sql.types import StructField, StructType
from sqlglot import exp

from connector.catalog.loader import load_text
from connector.catalog.model import Pipeline, Table
from connector.catalog.spark_types import spark_type
from connector.connectors import registry
from connector.diagnostics import Diagnostic, PipelineError
from connector.errors import KafkaSqlError
from connector.planning.plan import PipelinePlan, QueryPlan, build
from connector.runtime import engine
from connector.runtime.python_launcher import cannot_import_connector, python_executable
from connector.runtime.runner import stop_cleanly
from connector.runtime.session import FLINK_SQL_CONF
from connector.sql.dialect.expressions import StatementSet
from connector.sql.dialect.script import ParsedStatement, parse_script
from connector.sql.dialect.statements import reset_of, setting_of
from connector.sql.template import templating
from connector.sql.template.variables import load_vars_file
from connector.sql.validate import validator

SQL_FILE = "<spark.sql>"
CONF_PREFIX = "spark.kafka_sql."
CONF_VAR = CONF_PREFIX + "var."
CONF_VARS_FILE = CONF_PREFIX + "varsFile"
CONF_TEMPLATES = CONF_PREFIX + "templates"
CONF_CHECKPOINT = CONF_PREFIX + "checkpointLocation"
SPARK_CHECKPOINT = "spark.sql.streaming.checkpointLocation"
DEFAULT_PIPELINE_NAME = "session"
_TEMPLATE_MARKERS = ("{{", "{%", "{#")
_QUOTED_SET = re.compile(r"\s*(SET|RESET)\s+'", re.IGNORECASE)
# Text that is meant for the pipeline even when it does not parse: its syntax errors are ours to report.
_PIPELINE_TEXT = re.compile(r"WITH\s*\(\s*'connector'|STATEMENT\s+SET|^\s*(SET|RESET)\s+'", re.IGNORECASE)


class PipelineWarning(UserWarning):
    """A warning about a pipeline statement run through `spark.sql` (the diagnostic's text)."""


class QueryFailedError(KafkaSqlError, RuntimeError):
    """A bounded INSERT started by `spark.sql` failed; the message is Spark's, without stack frames."""


@dataclass(frozen=True)
class _Chunk:
    """One accepted pipeline statement: its rendered text and how to map its positions back."""

    text: str
    line: int  # where the statement starts in the rendered text of its spark.sql call
    column: int
    rendered: templating.RenderedFile

    def original(self, line: int, column: int) -> tuple[int, int]:
        """(line, column) in the text given to spark.sql, of `line`:`column` within this chunk."""
        rendered_line = self.line + line - 1
        rendered_column = column + (self.column - 1 if line == 1 else 0)
        return self.rendered.original_position(rendered_line, rendered_column)


class _Script:
    """The accepted statements joined into one script, with positions mapped to their spark.sql calls."""

    def __init__(self, chunks: Sequence[_Chunk]) -> None:
        self.chunks = list(chunks)
        self.starts: list[int] = []
        line = 1
        for chunk in self.chunks:
            self.starts.append(line)
            line += chunk.text.count("\n") + 1
        self.text = ";\n".join(c.text for c in self.chunks)

    def map(self, line: int, column: int) -> tuple[int, int]:
        index = max(bisect.bisect_right(self.starts, line) - 1, 0)
        if not self.chunks:
            return line, column
        return self.chunks[index].original(line - self.starts[index] + 1, column)


def _compile(chunks: Sequence[_Chunk]) -> tuple[Pipeline, list[Diagnostic]]:
    """Load and validate the script; raise PipelineError on errors, return the catalog and warnings."""
    script = _Script(chunks)
    loaded = load_text(script.text, SQL_FILE, script.map)
    diagnostics = loaded.warnings + validator.validate(loaded.pipeline, loaded.locate)
    errors = [d for d in diagnostics if d.severity == "error"]
    if errors:
        raise PipelineError(errors)
    return loaded.pipeline, diagnostics


def _short(message: str) -> str:
    """The user-facing lines of a Spark error (no JVM or Python stack frames)."""
    lines = [ln for ln in message.splitlines() if ln.strip() and not ln.startswith(("\tat ", "  File ", "    "))]
    return "\n".join(lines[:6])


class PipelineSession:
    """The pipeline side of one SparkSession: its catalog, its temporary views and the queries it started."""

    def __init__(
        self,
        spark: SparkSession,
        variables: Mapping[str, str],
        checkpoint_root: Path,
        templates_dirs: Sequence[Path] = (),
    ) -> None:
        self.spark = spark
        self.variables = dict(variables)
        self.checkpoint_root = checkpoint_root
        self.templates_dirs = list(templates_dirs)
        self.queries: list[engine.RunningQuery] = []
        self._chunks: list[_Chunk] = []
        self._pipeline = Pipeline(file=SQL_FILE)
        self._warned: set[Diagnostic] = set()
        self._query_names: set[str] = set()
        self._previous_sql = vars(spark).get("sql")
        self._local = threading.local()

    @property
    def pipeline(self) -> Pipeline:
        """The session's catalog: tables, views and settings of the statements run so far."""
        return self._pipeline

    # ---- spark.sql

    def sql(self, sqlQuery: str, args: Any = None, **kwargs: Any) -> Any:
        """`SparkSession.sql`, plus pipeline statements (see the module docstring)."""
        if args is not None or kwargs or getattr(self._local, "internal", False):
            return self._spark_sql(sqlQuery, args, **kwargs)
        try:
            rendered = self._render(sqlQuery)
        except PipelineError as err:  # Spark SQL may hold "{{" in a literal: only template mistakes are ours
            if _PIPELINE_TEXT.search(sqlQuery) or any(d.code != "template-syntax" for d in err.diagnostics):
                raise
            return self._spark_sql(sqlQuery)
        try:
            statements = parse_script(rendered.text, SQL_FILE)
        except PipelineError as err:
            if _PIPELINE_TEXT.search(rendered.text):
                raise PipelineError(self._map_call(err.diagnostics, rendered)) from None
            return self._spark_sql(rendered.text)
        if not any(self._is_pipeline(st) for st in statements):
            return self._spark_sql(rendered.text)
        results = [self._run(st, rendered) if self._is_pipeline(st) else self._spark_sql(st.text) for st in statements]
        return results[-1]

    def _spark_sql(self, text: str, args: Any = None, **kwargs: Any) -> DataFrame:
        return type(self.spark).sql(self.spark, text, args, **kwargs)

    def _render(self, text: str) -> templating.RenderedFile:
        if not any(marker in text for marker in _TEMPLATE_MARKERS):
            return templating.RenderedFile(SQL_FILE, text, text)
        return templating.render_string(text, SQL_FILE, self.variables, self.templates_dirs)

    @staticmethod
    def _map_call(diagnostics: Sequence[Diagnostic], rendered: templating.RenderedFile) -> list[Diagnostic]:
        return [dataclasses.replace(d, line=p[0], column=p[1])
                for d in diagnostics for p in [rendered.original_position(d.line, d.column)]]

    def _is_pipeline(self, statement: ParsedStatement) -> bool:
        """Whether a statement is the pipeline's to run (else Spark's)."""
        node = statement.expression
        if setting_of(node) is not None or reset_of(node) is not None:
            return _QUOTED_SET.match(statement.text) is not None
        if isinstance(node, StatementSet):
            return True
        if isinstance(node, exp.Insert):
            target = node.this.this if isinstance(node.this, exp.Schema) else node.this
            return self._pipeline.table(target.name) is not None
        if isinstance(node, exp.Create):
            kind = (node.args.get("kind") or "").upper()
            if kind == "TABLE":
                props = node.args.get("properties")
                for prop in props.expressions if props else []:
                    if isinstance(prop, exp.Property) and isinstance(prop.this, exp.Literal):
                        return True
                    if isinstance(prop, exp.LikeProperty) and self._pipeline.table(prop.this.name) is not None:
                        return True
                return False
            if kind == "VIEW" and isinstance(node.expression, exp.Query):
                return self._reads_pipeline(node.expression)
            return False
        if isinstance(node, exp.Drop | exp.Alter) and (node.args.get("kind") or "").upper() in ("TABLE", "VIEW"):
            targets = node.args.get("tables") or [node.this]  # sqlglot keeps a DROP's names in `tables`
            return any(
                self._pipeline.table(t.name) is not None or self._pipeline.view(t.name) is not None
                for t in targets
                if t is not None
            )
        return False

    def _reads_pipeline(self, query: exp.Query) -> bool:
        return any(
            self._pipeline.table(ref.name) is not None or self._pipeline.view(ref.name) is not None
            for ref in query.find_all(exp.Table)
        )

    # ---- running pipeline statements

    def _run(self, statement: ParsedStatement, rendered: templating.RenderedFile) -> Any:
        chunk = _Chunk(statement.text, statement.line, statement.column, rendered)
        node = statement.expression
        if isinstance(node, exp.Insert | StatementSet):
            pipeline, diagnostics = _compile([*self._chunks, chunk])
            self._warn(diagnostics)
            queries = self._start(pipeline)
            return queries[0] if isinstance(node, exp.Insert) and len(queries) == 1 else queries
        before = self._pipeline
        after, diagnostics = _compile([*self._chunks, chunk])
        plan = build(after, after.setting("pipeline.name") or DEFAULT_PIPELINE_NAME)  # raises what Spark can't run
        self._warn([*diagnostics, *plan.warnings])
        self._chunks.append(chunk)
        self._pipeline = after
        with self._internal():
            self._sync_views(before, after, plan.views)
        setting = setting_of(node)
        if setting is not None:
            return self.spark.createDataFrame([setting], "key string, value string")
        return self.spark.createDataFrame([], StructType([]))

    def _warn(self, diagnostics: Sequence[Diagnostic]) -> None:
        """Each new warning once, attributed to the caller of spark.sql."""
        level, frame = 1, sys._getframe(1)
        while frame.f_back is not None and frame.f_globals.get("__name__") == __name__:
            level, frame = level + 1, frame.f_back
        for d in diagnostics:
            if d.severity == "warning" and d not in self._warned:
                self._warned.add(d)
                warnings.warn(str(d), PipelineWarning, stacklevel=level + 1)

    @contextmanager
    def _internal(self) -> Iterator[None]:
        """Our own spark.sql calls (the engine's views and queries) go straight to Spark."""
        previous = getattr(self._local, "internal", False)
        self._local.internal = True
        try:
            yield
        finally:
            self._local.internal = previous

    def _sync_views(self, before: Pipeline, after: Pipeline, views: Sequence[tuple[str, str]]) -> None:
        """Temporary views follow the catalog: new or changed tables and views (re)registered, dropped ones
        dropped. Settings are applied to Spark where they have a meaning."""
        for key, spark_key in (("table.local-time-zone", "spark.sql.session.timeZone"),
                               ("parallelism.default", "spark.sql.shuffle.partitions")):
            value = after.setting(key)
            if value is not None and value != before.setting(key):
                self.spark.conf.set(spark_key, value)
        for name in [*before.tables, *before.views]:
            if after.table(name) is None and after.view(name) is None:
                self.spark.catalog.dropTempView(name)
        for table in after.tables.values():
            if before.table(table.name) != table:
                self._register_table(table)
        for view_name, sql in views:
            view = after.view(view_name)
            if view is not None and before.view(view_name) != view:
                with engine.flink_arithmetic(self.spark):  # the view keeps Flink's semantics wherever it is read
                    self.spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW `{view_name}` AS {sql}")

    def _register_table(self, table: Table) -> None:
        factory = registry.factories().get(table.connector or "")
        readable = factory is not None and factory.source
        if readable and not any(d.severity == "error" for d in registry.validate_source(table)):
            try:
                engine.table_frame(self.spark, table).createOrReplaceTempView(table.name)
                return
            except AnalysisException as err:  # a filesystem table whose directory an INSERT creates later
                if err.getCondition() != "PATH_NOT_FOUND":
                    raise
        columns = [c for c in table.columns if c.persisted and c.data_type is not None]
        schema = StructType([StructField(c.name, spark_type(c.data_type), c.nullable) for c in columns
                             if c.data_type is not None])
        self.spark.createDataFrame([], schema).createOrReplaceTempView(table.name)

    def _start(self, pipeline: Pipeline) -> list[StreamingQuery]:
        plan = self._unique_names(build(pipeline, pipeline.setting("pipeline.name") or DEFAULT_PIPELINE_NAME))
        self._warn(plan.warnings)
        with self._internal():
            running = engine.start_all(self.spark, plan, self.checkpoint_root, pipeline)
            self._restore_views(plan)
        self.queries.extend(running)
        try:
            for r in running:
                if r.plan.bounded or r.plan.row_limit is not None:
                    finish(r)
        except BaseException:
            for r in running:
                stop_cleanly(r)
            raise
        return [r.query for r in running]

    def _unique_names(self, plan: PipelinePlan) -> PipelinePlan:
        """Every query of the session gets its own name and checkpoint (a second INSERT into a sink too)."""
        queries: list[QueryPlan] = []
        for query in plan.queries:
            name, checkpoint, n = query.name, query.checkpoint, 2
            while name in self._query_names:
                name, checkpoint, n = f"{query.name}-{n}", f"{query.checkpoint}-{n}", n + 1
            self._query_names.add(name)
            queries.append(dataclasses.replace(query, name=name, checkpoint=checkpoint))
        return dataclasses.replace(plan, queries=queries)

    def _restore_views(self, plan: PipelinePlan) -> None:
        """The engine registered each query's own source views; put the session's back (queries keep theirs)."""
        read: dict[str, Table] = {}
        for source in (s for query in plan.queries for s in query.sources):
            if source.view != source.table.name:
                self.spark.catalog.dropTempView(source.view)
            table = self._pipeline.table(source.table.name)
            if table is not None:
                read[table.name.lower()] = table
        for table in read.values():
            self._register_table(table)

    # ---- lifecycle

    def stop(self) -> None:
        """Stop the session's running queries after their current micro-batch, committing their offsets."""
        for running in self.queries:
            if running.query.isActive:
                stop_cleanly(running)

    def close(self) -> None:
        """Stop the queries, drop the pipeline's temporary views and give `spark.sql` back to Spark."""
        self.stop()
        for name in [*self._pipeline.tables, *self._pipeline.views]:
            self.spark.catalog.dropTempView(name)
        if vars(self.spark).get("sql") == self.sql:
            if self._previous_sql is None:
                del vars(self.spark)["sql"]
            else:
                vars(self.spark)["sql"] = self._previous_sql


def records_read(query: StreamingQuery) -> int:
    """Records the query's recent micro-batches read (progress of an idle trigger has no 'addBatch'): Kafka
    records consumed, malformed ones included, or rows a generator made (`engine.records_read`)."""
    batches = {p["batchId"]: p for p in query.recentProgress if "addBatch" in (p.get("durationMs") or {})}
    return sum(engine.records_read(p) for p in batches.values())


def finish(running: engine.RunningQuery, timeout: float | None = None) -> bool:
    """Wait until a finite query is done, as `kafka-sql run` does: a bounded one ends by itself and gets its
    last offsets committed, a row-limited one (datagen 'number-of-rows') is stopped cleanly once it has read
    its rows. Raises QueryFailedError when the query fails; False when `timeout` (seconds) passed first."""
    deadline = None if timeout is None else time.monotonic() + timeout
    query = running.query
    try:
        while query.isActive and not engine.generated_input_done(running, records_read(query)):
            if deadline is not None and time.monotonic() >= deadline:
                return False
            query.awaitTermination(1)
    except StreamingQueryException as err:
        raise QueryFailedError(f"Query '{running.plan.name}' failed: {_short(str(err))}") from None
    if query.isActive:
        stop_cleanly(running)
    else:
        engine.commit_final_offsets(running)
    return True


def _conf_settings(spark: SparkSession) -> tuple[dict[str, str], Path | None, list[Path]]:
    """Template variables, checkpoint root and macro directories from the `spark.kafka_sql.*` conf."""
    conf = spark.conf.getAll
    variables: dict[str, str] = {}
    vars_file = conf.get(CONF_VARS_FILE)
    if vars_file:
        variables.update(load_vars_file(vars_file))
    variables.update((k[len(CONF_VAR):], v) for k, v in conf.items() if k.startswith(CONF_VAR))
    location = conf.get(CONF_CHECKPOINT) or conf.get(SPARK_CHECKPOINT)
    templates = [Path(p.strip()) for p in conf.get(CONF_TEMPLATES, "").split(",") if p.strip()]
    return variables, Path(location) if location else None, templates


def install(
    spark: SparkSession,
    variables: Mapping[str, str] | None = None,
    checkpoint_dir: str | Path | None = None,
    templates_dirs: Sequence[str | Path] = (),
) -> PipelineSession:
    """Make `spark.sql` run pipeline statements too; returns the session's `PipelineSession`.

    Installing twice returns the first installation. `variables`, `checkpoint_dir` and `templates_dirs`
    extend or replace the `spark.kafka_sql.*` configuration.
    """
    current = getattr(vars(spark).get("sql"), "__self__", None)
    if isinstance(current, PipelineSession):
        return current
    _require_workers_with_connector(spark)
    conf_variables, conf_checkpoint, conf_templates = _conf_settings(spark)
    root = Path(checkpoint_dir) if checkpoint_dir is not None else conf_checkpoint
    if root is None:
        root = Path(tempfile.mkdtemp(prefix="kafka-sql-session-"))
    session = PipelineSession(
        spark,
        {**conf_variables, **(variables or {})},
        root,
        [*conf_templates, *(Path(p) for p in templates_dirs)],
    )
    vars(spark)["sql"] = session.sql
    return session


def _require_workers_with_connector(spark: SparkSession) -> None:
    """On a local master, Spark's Python workers must import kafka-sql (its sources and sinks run there); else the
    first CREATE TABLE fails with a worker's ModuleNotFoundError. A cluster's executors cannot be asked here."""
    context = engine.classic_context(spark)
    if context is None or not str(context.master).startswith("local"):
        return
    problem = cannot_import_connector(context.pythonExec)
    if problem is not None:
        raise RuntimeError(
            f"Spark's Python workers run {context.pythonExec!r} (PYSPARK_PYTHON), which {problem}; kafka-sql's "
            f"sources and sinks run in them. Start the session with PYSPARK_PYTHON={sys.executable} (the Python "
            "with kafka-sql), or with connector.builder(), which sets it for a local master."
        )


class _Builder(SparkSession.Builder):
    """A SparkSession builder whose `getOrCreate()` also installs the extension; a new session gets the settings
    under which Spark evaluates Flink SQL as Flink does (`session.FLINK_SQL_CONF`) where the builder sets none of
    its own, and on a local master this interpreter for its Python workers unless PYSPARK_PYTHON names one."""

    def getOrCreate(self) -> SparkSession:
        if str(self._options.get("spark.master", "")).startswith("local"):
            os.environ.setdefault("PYSPARK_PYTHON", python_executable())  # read when the SparkContext starts
        for key, value in FLINK_SQL_CONF.items():
            if key not in self._options:
                self.config(key, value)
        spark = super().getOrCreate()
        install(spark)
        return spark


def builder() -> SparkSession.Builder:
    """`SparkSession.builder` that installs the extension when the session is created or fetched."""
    return _Builder()
