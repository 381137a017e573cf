"""`kafka-sql run`: start a pipeline's queries on Spark, show progress, stop cleanly.

A clean stop (Ctrl-C, --timeout, --max-batches) waits for the micro-batch in flight to complete before
stopping a query, then commits the last batch's offsets to the consumer group: nothing is half-committed.
A query that fails stops the others the same way and makes the exit code non-zero.
"""

from __future__ import annotations

import logging
import re
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.live import Live
from rich.markup import escape
from rich.table import Table as RichTable

from connector.dev.maven import MavenError
from connector.diagnostics import PipelineError, print_diagnostics
from connector.planning.plan import PipelinePlan, build
from connector.runtime import engine, live
from connector.runtime.session import (
    LOST_DRIVER_WAIT,
    JvmLaunch,
    SparkStartError,
    driver_exit,
    master_unreachable,
    spark_session,
)
from connector.runtime.spark_jars import package_jars
from connector.secrets import SecretMaskingFilter, is_secret_key
from connector.sql.frontend import compile_file

if TYPE_CHECKING:
    from pyspark.sql.streaming import StreamingQueryManager

    from connector.catalog.model import Pipeline

log = logging.getLogger(__name__)
console = Console(stderr=True, highlight=False, soft_wrap=True)

EXIT_OK, EXIT_ERRORS, EXIT_FAILED, EXIT_QUALITY = 0, 1, 1, 3  # as in connector.entrypoints.cli


@dataclass
class RunOptions:
    variables: dict[str, str] = field(default_factory=dict)
    master: str = "local[*]"
    checkpoint_dir: Path = Path("checkpoints")
    max_batches: int | None = None
    timeout: float | None = None
    launch: JvmLaunch | None = None  # the driver JVM, started while the file compiles (`kafka-sql run`)


def _install_masking(plan: PipelinePlan, secrets: frozenset[str]) -> None:
    values = set(secrets)
    for query in plan.queries:
        for table in [query.sink, *(s.table for s in query.sources)]:
            values.update(v for k, v in table.options.items() if is_secret_key(k) and v)
    masking = SecretMaskingFilter(values)
    root = logging.getLogger()
    if not root.handlers:
        logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    for handler in root.handlers:
        handler.addFilter(masking)
        handler.addFilter(_lost_driver_calls)


def _lost_driver_calls(record: logging.LogRecord) -> bool:
    """Drop py4j's traceback of a call the driver JVM never answered (py4j logs it on the root logger): the run
    reports what happened to the driver (`driver_exit`) once, in words."""
    return not (record.name == "root" and record.getMessage() == "Exception while sending command.")


def _lag(progress: dict[str, Any]) -> int | None:
    total = None
    for doc in engine.kafka_source_metrics(progress):
        for lag in doc.get("lag", {}).values():
            for value in (lag.values() if isinstance(lag, dict) else [lag]):
                total = (total or 0) + int(value)
    return total


def _progress(running: engine.RunningQuery) -> dict[str, Any]:
    last = running.query.lastProgress
    return dict(last) if last else {}


@dataclass
class _Tally:
    """Micro-batches, input records and skipped malformed records of one query, over the batches it ran."""

    batches: set[int] = field(default_factory=set)
    rows: int = 0
    malformed: int = 0
    seen: int | None = None  # batch id of the last progress looked at
    last: dict[str, Any] = field(default_factory=dict)  # that progress: what the counts include

    def update(self, query: Any) -> None:
        """Count the executed batches not counted yet (progress of idle triggers has no 'addBatch'). The last
        progress is enough unless batches ran since the previous look; then the recent ones are read."""
        last = query.lastProgress
        if not last:
            return
        self.last = last
        batch_id = last.get("batchId", -1)
        recent = self.seen is None or batch_id > self.seen + 1
        self.seen = batch_id
        for progress in query.recentProgress if recent else [last]:
            batch = progress.get("batchId", -1)
            if batch in self.batches or "addBatch" not in (progress.get("durationMs") or {}):
                continue
            self.batches.add(batch)
            self.rows += engine.records_read(progress)
            self.malformed += engine.malformed_records(progress)

    def summary(self) -> str:
        return (
            f"{len(self.batches)} micro-batch(es), {self.rows} record(s) read, "
            f"{self.malformed} malformed record(s) skipped"
        )


@dataclass(frozen=True)
class _Figures:
    """A query's figures as shown: its batch (the running one while it runs), records read (those of the running
    batch so far included) and records read per second."""

    batch: str
    rows: int
    rate: float

    @classmethod
    def of(cls, r: engine.RunningQuery, tally: _Tally, batches: dict[str, live.BatchSoFar]) -> _Figures:
        progress = tally.last  # the report the tally counted (the caller's last update): a newer one would show
        # its batch without its rows
        so_far = batches.get(str(r.query.id))
        if so_far is not None and so_far.batch > progress.get("batchId", -1):
            return cls(str(so_far.batch), tally.rows + so_far.records, so_far.records_per_second)
        rate = _records_per_second(progress, "inputRowsPerSecond")
        return cls(str(progress.get("batchId", "-")), tally.rows, rate)


def _running_batches(watch: live.Watch) -> dict[str, live.BatchSoFar]:
    """The running batches (`live`); none when Spark cannot say (the session stopping)."""
    from pyspark.sql import SparkSession

    spark = SparkSession.getActiveSession()
    try:
        return watch.batches(spark) if spark is not None else {}
    except Exception:  # py4j errors while the session stops: the display shows the last reports
        return {}


def _table(
    running: list[engine.RunningQuery], done: dict[str, str], tallies: dict[str, _Tally], watch: live.Watch
) -> RichTable:
    view = RichTable(title="kafka-sql run", expand=False)
    for name in ("query", "batch", "rows", "in rows/s", "done rows/s", "lag", "malformed", "quality", "state"):
        view.add_column(name)
    batches = _running_batches(watch)
    for r in running:
        progress = _progress(r)
        lag = _lag(progress)
        figures = _Figures.of(r, tallies[r.plan.name], batches)
        view.add_row(
            r.plan.name,
            figures.batch,
            str(figures.rows),
            f"{figures.rate:.0f}",
            f"{_records_per_second(progress, 'processedRowsPerSecond'):.0f}",
            "-" if lag is None else str(lag),
            str(tallies[r.plan.name].malformed),
            _quality(r),
            done.get(r.plan.name, r.query.status.get("message", "")),
        )
    return view


def _records_per_second(progress: dict[str, Any], rate: str) -> float:
    """Spark's rate `rate` of the last batch, of records read (`engine.records_read`) rather than numInputRows."""
    rows = int(progress.get("numInputRows") or 0)
    return float(progress.get(rate) or 0.0) * engine.records_read(progress) / rows if rows else 0.0


def _quality(running: engine.RunningQuery) -> str:
    """What the query's data-quality gate did so far: rows written, dropped, quarantined."""
    if running.gate is None:
        return "-"
    totals = running.gate.totals
    return f"{totals.written} passed, {totals.dropped} dropped, {totals.quarantined} quarantined"


def stop_cleanly(running: engine.RunningQuery, timeout: float = 120.0) -> None:
    """Let the batch in flight finish, then stop; commit the last batch's offsets."""
    stop_all_cleanly([running], timeout)


def stop_all_cleanly(queries: list[engine.RunningQuery], timeout: float = 120.0) -> None:
    """Stop each query as soon as its batch in flight has completed, then commit its last batch's offsets.

    The queries are watched together, so waiting for one does not keep the others running. With a backlog
    the next batch starts as soon as one ends, so the trigger is never idle: a query is stopped once the
    batch that was running has completed. A batch that started since is interrupted, which is safe: it has
    no commit yet, so a restart runs it again from its logged offsets."""
    deadline = time.monotonic() + timeout
    completed = {id(r): _progress(r).get("batchId", -1) for r in queries}
    pending = list(queries)
    while pending:
        for r in list(pending):
            query = r.query
            running = query.isActive and query.status.get("isTriggerActive")
            if running and _progress(r).get("batchId", -1) <= completed[id(r)] and time.monotonic() < deadline:
                continue
            query.stop()
            engine.commit_final_offsets(r)
            pending.remove(r)
        if pending:
            time.sleep(0.1)


def run_file(path: Path, options: RunOptions) -> int:
    try:
        return _run_file(path, options)
    finally:
        if options.launch is not None:
            options.launch.close()  # a run that ended before it started Spark


def _run_file(path: Path, options: RunOptions) -> int:
    compiled = compile_file(path, options.variables)
    print_diagnostics(console, compiled.diagnostics)
    if compiled.errors:
        return EXIT_ERRORS
    pipeline = compiled.require()
    try:
        plan = build(pipeline, path.stem)
    except PipelineError as err:
        print_diagnostics(console, err.diagnostics)
        return EXIT_ERRORS
    print_diagnostics(console, plan.warnings)
    if not plan.queries:
        console.print("Nothing to run: the file has no INSERT.")
        return EXIT_OK
    _install_masking(plan, compiled.rendered.secrets if compiled.rendered else frozenset())
    console.print(f"Starting Spark ({options.master}) for pipeline '{plan.name}'...")
    try:
        jars = package_jars(plan.spark_packages, lambda line: console.print(escape(line)))
    except MavenError as err:
        console.print(f"[red]error[/red]: the Spark modules {', '.join(plan.spark_packages)}: {escape(str(err))}")
        return EXIT_ERRORS
    unreachable = master_unreachable(options.master)
    if unreachable:
        console.print(f"[yellow]warning[/yellow]: the Spark master does not accept connections ({escape(unreachable)});"
                      " Spark tries to register with it for about 60 s")
    try:
        spark = spark_session(options.master, plan.name, jars, options.launch)
    except SparkStartError as err:
        console.print(f"[red]error[/red]: {escape(str(err))}")
        return EXIT_FAILED
    stop_requested = False

    def on_signal(_signum: int, _frame: FrameType | None) -> None:
        nonlocal stop_requested
        if stop_requested:
            raise KeyboardInterrupt
        stop_requested = True
        console.print("Stopping after the current micro-batch (Ctrl-C again to abort)...")

    previous = signal.signal(signal.SIGINT, on_signal)
    try:
        return _run_queries(spark, plan, pipeline, options, lambda: stop_requested)
    except Exception as err:
        gone = _lost_driver(err)
        if gone is None:
            raise
        console.print(f"[red]error[/red]: {escape(gone)}", highlight=False)
        return EXIT_FAILED
    finally:
        signal.signal(signal.SIGINT, previous)


def _lost_driver(error: Exception) -> str | None:
    """Why the driver JVM is gone when `error` is a lost connection to it (given time to exit), else None."""
    from py4j.protocol import Py4JNetworkError

    lost = isinstance(error, (ConnectionError, Py4JNetworkError))
    return driver_exit(wait=LOST_DRIVER_WAIT if lost else 0)


def _run_queries(
    spark: Any, plan: PipelinePlan, pipeline: Pipeline, options: RunOptions, stop_requested: Callable[[], bool]
) -> int:
    """Start the plan's queries and watch them to their end; the exit code."""
    try:
        running = engine.start_all(spark, plan, options.checkpoint_dir, pipeline)
    except PipelineError as err:
        print_diagnostics(console, err.diagnostics)
        return EXIT_ERRORS
    except Exception as err:  # Spark analysis errors and the like: the message, not a traceback
        if _lost_driver(err) is not None:
            raise
        console.print(f"[red]cannot start the pipeline[/red]: {_short(str(err))}", highlight=False)
        return EXIT_FAILED
    try:
        failures = _monitor(spark.streams, running, options, stop_requested)
    finally:
        if driver_exit() is None:
            for r in running:
                if r.query.isActive:
                    r.query.stop()
    for failure in failures:
        console.print(f"[red]query failed[/red]: {failure}", markup=True, highlight=False)
    if any(r.gate is not None and r.gate.failure for r in running):
        return EXIT_QUALITY
    return EXIT_FAILED if failures else EXIT_OK


def _wait(
    streams: StreamingQueryManager, running: list[engine.RunningQuery], done: dict[str, str], seconds: float
) -> None:
    """Until the next look: `seconds`, or less when any query still running ends (a bounded run exits as soon
    as its last batch is committed, not at the next tick). The session's queries are the pipeline's own."""
    active = [r for r in running if r.plan.name not in done]
    if not active:
        time.sleep(seconds)
        return
    streams.resetTerminated()  # the ends already seen; one after the look above is seen below through isActive
    if not all(r.query.isActive for r in active):
        return
    try:
        streams.awaitAnyTermination(seconds)  # type: ignore[arg-type]  # pyspark takes seconds as a float
    except Exception:  # a failed query raises here; the next look reports it from exception()
        log.debug("a query ended with a failure")


def _monitor(
    streams: StreamingQueryManager, running: list[engine.RunningQuery], options: RunOptions, stop_requested: Any
) -> list[str]:
    """Watch the queries until all finish, one fails, a limit is reached or a stop is requested; then print
    what each query did (batches, records, malformed records skipped)."""
    started = time.monotonic()
    done: dict[str, str] = {}
    tallies = {r.plan.name: _Tally() for r in running}
    failures: list[str] = []
    watch = live.Watch()
    display = Live(
        _table(running, done, tallies, watch), console=console, refresh_per_second=2, redirect_stdout=False,
        transient=False,
    ) if console.is_terminal else None
    last_lines: dict[str, str] = {}  # without a terminal: the progress line last printed per query
    if display is not None:
        display.start()
    try:
        while True:
            for r in running:
                tallies[r.plan.name].update(r.query)
                if r.plan.name in done or r.query.isActive:
                    continue
                exception = r.query.exception()
                if exception is not None:
                    report = r.gate.failure if r.gate is not None else None  # rows' values: no markup
                    failures.append(escape(report) if report else f"{r.plan.name}: {_short(str(exception))}")
                    done[r.plan.name] = "failed"
                else:
                    done[r.plan.name] = "finished"
                    engine.commit_final_offsets(r)
            limit_reached = (options.timeout is not None and time.monotonic() - started >= options.timeout) or (
                options.max_batches is not None
                and all(_progress(r).get("batchId", -1) + 1 >= options.max_batches
                        for r in running if r.plan.name not in done)
            )
            if failures or stop_requested() or limit_reached or len(done) == len(running):
                break
            for r in running:
                if r.plan.name not in done and engine.generated_input_done(r, tallies[r.plan.name].rows):
                    stop_cleanly(r)
                    done[r.plan.name] = "finished"
            if display is not None:
                display.update(_table(running, done, tallies, watch))
            else:  # CI logs, nohup: a line when a query's figures changed, not one per refresh
                batches = _running_batches(watch)
                for r in running:
                    tally, lag = tallies[r.plan.name], _lag(_progress(r))
                    figures = _Figures.of(r, tally, batches)
                    line = (f"{r.plan.name}: batch {figures.batch} rows {figures.rows} "
                            f"lag {'-' if lag is None else lag} malformed {tally.malformed} quality {_quality(r)}")
                    if last_lines.get(r.plan.name) != line:
                        last_lines[r.plan.name] = line
                        console.print(line, markup=False)
            _wait(streams, running, done, 0.5)
        stopping = [r for r in running if r.plan.name not in done]
        stop_all_cleanly(stopping)
        for r in running:
            done.setdefault(r.plan.name, "stopped")
            tallies[r.plan.name].update(r.query)
        if display is not None:
            display.update(_table(running, done, tallies, watch))
    finally:
        if display is not None:
            display.stop()
    for r in running:
        quality = f"; quality gate: {_quality(r)}" if r.gate is not None else ""
        console.print(f"{r.plan.name}: {done[r.plan.name]}, {tallies[r.plan.name].summary()}{quality}", markup=False)
    return failures


# A SQL raise_error (malformed records, quality gates): the message is for the user as it is.
_RAISED = re.compile(r"\[USER_RAISED_EXCEPTION\] (.+?)(?: SQLSTATE: \w+)?$", re.MULTILINE)
# kafka-sql's own errors, as the last line of the Python traceback Spark wraps them in.
_OWN_ERROR = re.compile(
    r"^[\w.]*\b(?:KafkaSourceError|DataLossError|KafkaSinkError|PipelineError|JdbcScanError|PythonFunctionError"
    r"|DeltaSinkError|IcebergSinkError|ProtobufWriteError): (.+)$",
    re.MULTILINE,
)
_NOISE = ("An exception was raised by the Python Proxy. Return Message: ", "Traceback (most recent call last):")


def _short(message: str) -> str:
    """The user-facing part of a Spark/Python exception: the error kafka-sql or the SQL raised if there is
    one, else the first lines without JVM and Python stack frames."""
    message = message.split("=== Streaming Query ===")[0]
    raised = _RAISED.search(message)
    if raised:
        return raised.group(1)
    own = list(_OWN_ERROR.finditer(message))
    if own:
        return own[-1].group(1)
    for noise in _NOISE:
        message = message.replace(noise, "")
    lines = [ln for ln in message.splitlines() if ln.strip() and not ln.startswith(("\tat ", "  File ", "    "))]
    if "java.lang.OutOfMemoryError" in message or "exited with code 52" in message:  # 52: Spark executors' OOM exit
        lines = [*lines[:5], "An executor ran out of memory: raise spark.executor.memory, or bound each micro-batch "
                             "with the Kafka source's 'scan.max-records-per-batch'."]  # fmt: skip
    return "\n".join(lines[:6])
