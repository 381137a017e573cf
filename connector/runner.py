"""`kafka-sql run`: start a pipeline's queries on Spark, show progress, stop cleanly.

A clean stop (Ctrl-C, --timeout, --max-batches) waits for the micro-batch in flight to complete before
stopping a query, then commits the last batch's offsets to the consumer group: nothing is half-committed.
A query that fails stops the others the same way and makes the exit code non-zero.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from rich.console import Console
from rich.live import Live
from rich.table import Table as RichTable

from connector import engine
from connector.diagnostics import Diagnostic, PipelineError
from connector.frontend import compile_file
from connector.plan import PipelinePlan, build
from connector.secrets import SecretMaskingFilter, is_secret_key

log = logging.getLogger(__name__)
console = Console(stderr=True, highlight=False, soft_wrap=True)

EXIT_OK, EXIT_ERRORS, EXIT_FAILED = 0, 1, 1


@dataclass
class RunOptions:
    variables: dict[str, str] = field(default_factory=dict)
    master: str = "local[*]"
    checkpoint_dir: Path = Path("checkpoints")
    max_batches: int | None = None
    timeout: float | None = None


def spark_session(master: str, app_name: str) -> Any:
    """A SparkSession whose Python workers run this interpreter, with the package shipped to executors."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if master.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master(master)
        .appName(app_name)
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.streaming.stopTimeout", "60s")
        .config("spark.ui.showConsoleProgress", "false")
        # Flink's TIMESTAMP is a wall-clock value; UTC keeps it unchanged through Spark's event-time TIMESTAMP.
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("WARN")
    if not master.startswith("local"):
        spark.sparkContext.addPyFile(_package_zip())
    return spark


def _package_zip() -> str:
    """The `connector` package as a zip for executors on other machines (Spark's --py-files)."""
    package = Path(__file__).resolve().parent
    target = Path(tempfile.mkdtemp(prefix="kafka-sql-")) / "connector"
    return shutil.make_archive(str(target), "zip", root_dir=package.parent, base_dir=package.name)


def _print_diagnostics(diagnostics: list[Diagnostic]) -> None:
    for d in diagnostics:
        console.print(str(d), markup=False, style="red" if d.severity == "error" else "yellow")


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


def _malformed(progress: dict[str, Any]) -> int:
    observed = progress.get("observedMetrics") or {}
    total = 0
    for name, row in observed.items():
        if name.startswith("malformed_records_"):
            values = row.asDict() if hasattr(row, "asDict") else dict(row)
            total += int(values.get("records") or 0)
    return total


def _table(running: list[engine.RunningQuery], done: dict[str, str], malformed: dict[str, int]) -> RichTable:
    view = RichTable(title="kafka-sql run", expand=False)
    for name in ("query", "batch", "rows", "in rows/s", "done rows/s", "lag", "malformed", "state"):
        view.add_column(name)
    for r in running:
        progress = _progress(r)
        lag = _lag(progress)
        view.add_row(
            r.plan.name,
            str(progress.get("batchId", "-")),
            str(progress.get("numInputRows", "-")),
            f"{progress.get('inputRowsPerSecond', 0.0):.0f}",
            f"{progress.get('processedRowsPerSecond', 0.0):.0f}",
            "-" if lag is None else str(lag),
            str(malformed.get(r.plan.name, 0)),
            done.get(r.plan.name, r.query.status.get("message", "")),
        )
    return view


def _stop_cleanly(running: engine.RunningQuery, timeout: float = 120.0) -> None:
    """Let the batch in flight finish, then stop; commit the last batch's offsets."""
    deadline = time.monotonic() + timeout
    while running.query.isActive and running.query.status.get("isTriggerActive") and time.monotonic() < deadline:
        time.sleep(0.1)
    running.query.stop()
    engine.commit_final_offsets(running)


def run_file(path: Path, options: RunOptions) -> int:
    compiled = compile_file(path, options.variables)
    _print_diagnostics(compiled.diagnostics)
    if compiled.errors:
        return EXIT_ERRORS
    pipeline = compiled.require()
    try:
        plan = build(pipeline, path.stem)
    except PipelineError as err:
        _print_diagnostics(err.diagnostics)
        return EXIT_ERRORS
    _print_diagnostics(plan.warnings)
    if not plan.queries:
        console.print("Nothing to run: the file has no INSERT.")
        return EXIT_OK
    _install_masking(plan, compiled.rendered.secrets if compiled.rendered else frozenset())
    console.print(f"Starting Spark ({options.master}) for pipeline '{plan.name}'...")
    spark = spark_session(options.master, plan.name)
    stop_requested = False

    def on_signal(_signum: int, _frame: FrameType | None) -> None:
        nonlocal stop_requested
        if stop_requested:
            raise KeyboardInterrupt
        stop_requested = True
        console.print("Stopping after the current micro-batch (Ctrl-C again to abort)...")

    previous = signal.signal(signal.SIGINT, on_signal)
    try:
        running = engine.start_all(spark, plan, options.checkpoint_dir)
    except PipelineError as err:
        signal.signal(signal.SIGINT, previous)
        _print_diagnostics(err.diagnostics)
        return EXIT_ERRORS
    except Exception as err:  # Spark analysis errors and the like: the message, not a traceback
        signal.signal(signal.SIGINT, previous)
        console.print(f"[red]cannot start the pipeline[/red]: {_short(str(err))}", highlight=False)
        return EXIT_FAILED
    try:
        failures = _monitor(running, options, lambda: stop_requested)
    finally:
        signal.signal(signal.SIGINT, previous)
        for r in running:
            if r.query.isActive:
                r.query.stop()
    for failure in failures:
        console.print(f"[red]query failed[/red]: {failure}", markup=True, highlight=False)
    return EXIT_FAILED if failures else EXIT_OK


def _monitor(running: list[engine.RunningQuery], options: RunOptions, stop_requested: Any) -> list[str]:
    """Watch the queries until all finish, one fails, a limit is reached or a stop is requested."""
    started = time.monotonic()
    done: dict[str, str] = {}
    malformed: dict[str, int] = {}  # per query, summed over batches
    rows: dict[str, int] = {}
    seen_batch: dict[str, int] = {}
    failures: list[str] = []
    live = Live(_table(running, done, malformed), console=console, refresh_per_second=2, redirect_stdout=False,
                transient=False) if console.is_terminal else None
    last_line = 0.0
    if live is not None:
        live.start()
    try:
        while True:
            for r in running:
                if r.plan.name in done or r.query.isActive:
                    continue
                exception = r.query.exception()
                if exception is not None:
                    failures.append(f"{r.plan.name}: {_short(str(exception))}")
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
                p = _progress(r)
                batch = p.get("batchId", -1)
                if batch > seen_batch.get(r.plan.name, -1):
                    seen_batch[r.plan.name] = batch
                    malformed[r.plan.name] = malformed.get(r.plan.name, 0) + _malformed(p)
                    rows[r.plan.name] = rows.get(r.plan.name, 0) + int(p.get("numInputRows", 0) or 0)
                limit = r.plan.row_limit
                if limit is not None and r.plan.name not in done and rows.get(r.plan.name, 0) >= limit:
                    _stop_cleanly(r)
                    done[r.plan.name] = "finished"
            if live is not None:
                live.update(_table(running, done, malformed))
            elif time.monotonic() - last_line >= 5:
                last_line = time.monotonic()
                for r in running:
                    p = _progress(r)
                    console.print(f"{r.plan.name}: batch {p.get('batchId', '-')} rows {rows.get(r.plan.name, 0)} "
                                  f"lag {_lag(p) if p else '-'} malformed {malformed.get(r.plan.name, 0)}",
                                  markup=False)
            time.sleep(0.5)
        for r in running:
            if r.plan.name not in done:
                _stop_cleanly(r)
                done[r.plan.name] = "stopped"
        if live is not None:
            live.update(_table(running, done, malformed))
    finally:
        if live is not None:
            live.stop()
    return failures


def _short(message: str) -> str:
    """The user-facing part of a Spark/Python exception (drop JVM and Python stack frames)."""
    lines = [ln for ln in message.splitlines() if ln.strip() and not ln.startswith(("\tat ", "  File ", "    "))]
    return "\n".join(lines[:6])
