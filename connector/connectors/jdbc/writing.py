"""Writing a jdbc table: each micro-batch in one database transaction, exactly once per batch.

Spark's JDBC writer puts the batch into a staging table of the query (`<table>__kafka_sql_stage_<n>`), then the
driver moves it into the table in one transaction that also records the batch in `kafka_sql_batches` (keyed by
the checkpoint's query id and the batch id): a batch replayed after a crash finds its record and changes nothing,
and a new checkpoint writing the same table is a new key. Without a PRIMARY KEY the rows are appended (Flink's JDBC
sink appends at least once; here exactly once). With one they are upserted as Flink's PostgreSQL dialect does
(`INSERT ... ON CONFLICT (key) DO UPDATE SET ...`), the last row of a key in the batch winning, and deletes of the
changelog delete their key. TIME values lose their fraction of a second, as Flink's do. As in Flink, the table
must exist, identifiers are written as declared (not quoted), and a write that fails is retried 'sink.max-retries'
times when the failure is a lost connection or a serialization conflict. (Flink 2.3 fails on ARRAY columns with
PostgreSQL arrays; Spark writes them, so they are allowed here.)
"""

from __future__ import annotations

import hashlib
import time
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.streaming import DataStreamWriter, StreamingQuery

from connector.catalog.model import Table
from connector.catalog.types import type_root
from connector.connectors import registry
from connector.connectors.filesystem.sink_log import query_id
from connector.connectors.jdbc.factory import POSTGRES_DRIVER, JdbcOptions, driver_of
from connector.connectors.writing import DELETED, BatchWriter, Staged, persisted_columns
from connector.diagnostics import Diagnostic, PipelineError
from connector.errors import KafkaSqlError
from connector.runtime.hadoop_fs import HadoopFs

BATCHES_TABLE = "kafka_sql_batches"
_SEQUENCE = "__kafka_sql_seq"
_RETRIED_STATES = ("08", "40")  # connection exceptions, transaction rollbacks (serialization failures)


class JdbcError(KafkaSqlError, RuntimeError):
    """The database refused a micro-batch; the message names the table and the database's reason."""


def start(
    frame: DataFrame, table: Table, writer: DataStreamWriter, output_mode: str, checkpoint: str
) -> StreamingQuery:
    return writer.foreachBatch(batch_writer(frame, table, output_mode, checkpoint)).start()


def batch_writer(frame: DataFrame, table: Table, output_mode: str, checkpoint: str) -> BatchWriter:
    target = JdbcTarget(table, checkpoint)
    try:
        target.check(frame.sparkSession)
    except JdbcError as err:
        raise PipelineError([Diagnostic.at(table.option_position("table-name"), "jdbc", str(err))]) from None
    return JdbcBatch(target)


class JdbcTarget:
    """The database table of a jdbc sink, reached from the driver over the session's JDBC driver."""

    def __init__(self, table: Table, checkpoint: str) -> None:
        options = registry.resolve(table)
        self.table = table
        self.name = str(options.get(JdbcOptions.TABLE_NAME))
        self.url = str(options.get(JdbcOptions.URL))
        found = driver_of(self.url)
        self.driver = options.get(JdbcOptions.DRIVER) or (found[0] if found else "")
        self.user = options.get(JdbcOptions.USERNAME)
        self.password = options.get(JdbcOptions.PASSWORD)
        retries = options.get(JdbcOptions.SINK_MAX_RETRIES)
        self.retries = retries or 0
        self.checkpoint = checkpoint
        self.columns = [c.name for c in persisted_columns(table)]
        # Flink writes TIME through java.sql.Time, which keeps whole seconds (measured: 12:34:56.789 -> 12:34:56).
        self.times = {
            c.name for c in persisted_columns(table) if c.data_type is not None and type_root(c.data_type) == "TIME"
        }
        self.key = list(table.primary_key)
        self.stage = f"{self.name}__kafka_sql_stage_{hashlib.sha256(checkpoint.encode()).hexdigest()[:12]}"

    def properties(self) -> dict[str, str]:
        found = {"driver": self.driver}
        if self.user is not None:
            found["user"] = str(self.user)
        if self.password is not None:
            found["password"] = str(self.password)
        return found

    def connect(self, spark: Any) -> Any:
        jvm = spark.sparkContext._jvm
        loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
        if not jvm.org.apache.spark.util.Utils.classIsLoadable(self.driver):
            raise JdbcError(
                f"JDBC driver class {self.driver} is not on this Spark session: start it with spark.jars.packages = "
                f"'{POSTGRES_DRIVER}' (`kafka-sql run` does)"
            )
        driver = jvm.java.lang.Class.forName(self.driver, True, loader).newInstance()
        props = jvm.java.util.Properties()
        for key, value in self.properties().items():
            if key != "driver":
                props.setProperty(key, value)
        connection = driver.connect(self.url, props)
        if connection is None:
            raise JdbcError(f"JDBC driver {self.driver} does not accept the url {self.url}")
        return connection

    def check(self, spark: Any) -> None:
        """The table exists and has the declared columns (Flink fails the job otherwise); the batch table too."""
        self._run(spark, self._check_statements, "checking")

    def _check_statements(self, statement: Any) -> None:
        statement.executeQuery(f"SELECT {', '.join(self.columns)} FROM {self.name} WHERE 1 = 0").close()
        statement.execute(
            f"CREATE TABLE IF NOT EXISTS {BATCHES_TABLE} (sink VARCHAR(512) NOT NULL, query_id VARCHAR(64) NOT NULL, "
            "batch_id BIGINT NOT NULL, written_at TIMESTAMP NOT NULL DEFAULT now(), PRIMARY KEY (sink, query_id, "
            "batch_id))"
        )

    def column_types(self, spark: Any) -> dict[str, str]:
        types: dict[str, str] = {}

        def read(statement: Any) -> None:
            result = statement.executeQuery(
                "SELECT a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a "
                f"WHERE a.attrelid = '{self.name}'::regclass AND a.attnum > 0 AND NOT a.attisdropped"
            )
            while result.next():
                types[str(result.getString(1))] = str(result.getString(2))
            result.close()

        self._run(spark, read, "reading the columns of")
        return types

    def _run(self, spark: Any, work: Any, action: str) -> None:
        """`work(statement)` in one transaction, retried on lost connections and serialization failures."""
        for attempt in range(self.retries + 1):
            try:
                connection = self.connect(spark)
                try:
                    connection.setAutoCommit(False)
                    statement = connection.createStatement()
                    work(statement)
                    connection.commit()
                    return
                finally:
                    connection.close()
            except JdbcError:
                raise
            except Exception as err:  # py4j's Py4JJavaError carries the SQLException
                state = _sql_state(err)
                if attempt < self.retries and state is not None and state.startswith(_RETRIED_STATES):
                    time.sleep(min(2**attempt, 10))
                    continue
                raise JdbcError(
                    f"JDBC sink '{self.table.name}': {action} table {self.name} at {self.url} failed: "
                    f"{_sql_message(err)}"
                ) from None


def _sql_state(err: Exception) -> str | None:
    java = getattr(err, "java_exception", None)
    while java is not None:
        if java.getClass().getName().startswith(("java.sql.", "org.postgresql.")):
            state = java.getSQLState() if hasattr(java, "getSQLState") else None
            return str(state) if state is not None else None
        java = java.getCause()
    return None


def _sql_message(err: Exception) -> str:
    java = getattr(err, "java_exception", None)
    return str(java.getMessage()) if java is not None else str(err)


class JdbcBatch:
    """foreachBatch function of a jdbc sink (also the quality gate's `StagingWriter`)."""

    def __init__(self, target: JdbcTarget) -> None:
        self.target = target
        self._types: dict[str, str] | None = None
        self._query: str | None = None

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        self.stage(batch, batch_id).publish()

    def stage(self, batch: DataFrame, batch_id: int) -> Staged:
        spark = batch.sparkSession
        target = self.target
        if self._types is None:
            self._types = target.column_types(spark)
        staged = batch.select(
            *(F.substring(c, 1, 8).alias(c) if c in target.times else F.col(c) for c in target.columns),
            *([DELETED] if DELETED in batch.columns else []),
            F.monotonically_increasing_id().alias(_SEQUENCE),
        )
        writer = staged.write.format("jdbc").option("url", target.url).option("dbtable", target.stage)
        for key, value in target.properties().items():
            writer = writer.option(key, value)
        writer.option("truncate", "true").mode("overwrite").save()
        if self._query is None:  # the checkpoint's, which never changes: read once
            self._query = query_id(HadoopFs(spark, target.checkpoint), target.checkpoint)
        if self._query is None:
            raise JdbcError(f"checkpoint '{target.checkpoint}' has no query id (its 'metadata' file)")
        return _Transaction(target, self._types, spark, self._query, batch_id, DELETED in batch.columns)


class _Transaction:
    """A staged batch, moved into the table by `publish` (once per query and batch id)."""

    def __init__(
        self, target: JdbcTarget, types: dict[str, str], spark: Any, query: str, batch_id: int, deletes: bool
    ) -> None:
        self.target, self.types, self.spark = target, types, spark
        self.query, self.batch_id, self.deletes = query, batch_id, deletes

    def publish(self) -> None:
        self.target._run(self.spark, self._statements, f"writing batch {self.batch_id} to")

    def discard(self) -> None:
        """Nothing to undo: the staging table is only read by `publish`, and the next batch overwrites it."""

    def _value(self, column: str) -> str:
        declared = self.types.get(column)
        return f"CAST(s.{column} AS {declared})" if declared else f"s.{column}"

    def _statements(self, statement: Any) -> None:
        target = self.target
        sink = f"{target.url}/{target.name}"[:512]
        marked = statement.executeUpdate(
            f"INSERT INTO {BATCHES_TABLE} (sink, query_id, batch_id) VALUES ('{_literal(sink)}', "
            f"'{_literal(self.query)}', {int(self.batch_id)}) ON CONFLICT DO NOTHING"
        )
        if marked == 0:
            return  # this batch was written before a crash: nothing to do
        columns = ", ".join(target.columns)
        values = ", ".join(self._value(c) for c in target.columns)
        if not target.key:
            where = f" WHERE NOT s.{DELETED}" if self.deletes else ""
            statement.executeUpdate(
                f"INSERT INTO {target.name} ({columns}) SELECT {values} FROM {target.stage} s{where} "
                f"ORDER BY s.{_SEQUENCE}"
            )
            return
        keys = ", ".join(target.key)
        latest = f"(SELECT DISTINCT ON ({keys}) * FROM {target.stage} ORDER BY {keys}, {_SEQUENCE} DESC) s"
        if self.deletes:
            matches = " AND ".join(f"t.{k} = {self._value(k)}" for k in target.key)
            statement.executeUpdate(f"DELETE FROM {target.name} t USING {latest} WHERE s.{DELETED} AND {matches}")
        others = [c for c in target.columns if c not in target.key]
        action = ", ".join(f"{c} = EXCLUDED.{c}" for c in others)
        where = f" WHERE NOT s.{DELETED}" if self.deletes else ""
        statement.executeUpdate(
            f"INSERT INTO {target.name} ({columns}) SELECT {values} FROM {latest}{where} ON CONFLICT ({keys}) "
            + (f"DO UPDATE SET {action}" if action else "DO NOTHING")
        )


def _literal(text: str) -> str:
    return text.replace("'", "''")
