"""What a running micro-batch has read so far, from Spark's SQL status store.

A query's progress report comes only when a batch ends, so a long batch (a bounded run's whole backlog in its first
batch) would show nothing moving for its whole length. While tasks run, executors send their SQL metrics with each
heartbeat; the scans' "number of output rows" of the batch's running execution is the records read so far, as
Flink's web UI shows records received while a job runs. The runner sets the heartbeat to `HEARTBEAT_INTERVAL`
(Spark's default, 10 s, would update the figure rarely).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, replace
from typing import Any

HEARTBEAT_INTERVAL = "3s"
# How often `Watch` asks Spark, in seconds.
ASK_EVERY = 2.0
# Executions looked at, the latest ones: a batch of a query running a foreachBatch sink has two (the batch's and
# the sink's), and other queries of the pipeline run theirs at the same time.
_RECENT = 16
_SCAN_NODES = ("MicroBatchScan",)
_ROWS_METRIC = "number of output rows"


@dataclass(frozen=True)
class BatchSoFar:
    """Batch `batch` of a query, running for `seconds`, has read `records` so far."""

    batch: int
    records: int
    seconds: float

    @property
    def records_per_second(self) -> float:
        return self.records / self.seconds if self.seconds > 0 else 0.0


class Watch:
    """`running_batches`, asked at most every `ASK_EVERY` seconds: each look costs dozens of calls into Spark's JVM,
    and the figures change with executor heartbeats only."""

    def __init__(self) -> None:
        self.interval = ASK_EVERY
        self._asked = float("-inf")
        self._batches: dict[str, BatchSoFar] = {}

    def batches(self, spark: Any) -> dict[str, BatchSoFar]:
        """`running_batches`; a batch's records never go down between looks. When a batch written by foreachBatch
        ends, the execution that read it completes before the batch's own, whose scans read nothing, and before
        the batch's progress report: the display would fall back to 0 for a moment."""
        now = time.monotonic()
        if now - self._asked >= self.interval:
            self._asked = now
            earlier, self._batches = self._batches, running_batches(spark)
            for query, batch in self._batches.items():
                before = earlier.get(query)
                if before is not None and before.batch == batch.batch and before.records > batch.records:
                    self._batches[query] = replace(batch, records=before.records)
        return self._batches


def running_batches(spark: Any) -> dict[str, BatchSoFar]:
    """The running batch of each streaming query that has one, by query id (`StreamingQuery.id`); a batch appears
    once Spark keeps figures for it."""
    store = spark._jsparkSession.sharedState().statusStore()
    count = store.executionsCount()
    executions = store.executionsList(max(0, count - _RECENT), _RECENT).iterator()
    found: dict[str, BatchSoFar] = {}
    while executions.hasNext():
        execution = executions.next()
        description = str(execution.description() or "")
        query = re.search(r"^id = (\S+)$", description, re.M)
        batch = re.search(r"^batch = (\d+)$", description, re.M)
        if execution.completionTime().isDefined() or query is None or batch is None:
            continue
        records = _scanned(store, execution.executionId())
        seconds = max(time.time() - execution.submissionTime() / 1000.0, 0.0)
        earlier = found.get(query.group(1))
        if earlier is None or records > earlier.records:  # the sink's execution re-runs the batch's scans
            found[query.group(1)] = BatchSoFar(int(batch.group(1)), records, seconds)
    return found


def _scanned(store: Any, execution_id: int) -> int:
    """Rows the execution's scans have produced so far (their sum: a join reads several sources)."""
    metrics = store.executionMetrics(execution_id)
    nodes = store.planGraph(execution_id).allNodes().iterator()
    total = 0
    while nodes.hasNext():
        node = nodes.next()
        if node.name() not in _SCAN_NODES:
            continue
        for_node = node.metrics().iterator()
        while for_node.hasNext():
            metric = for_node.next()
            value = metrics.get(metric.accumulatorId()) if metric.name() == _ROWS_METRIC else None
            if value is not None and value.isDefined():
                digits = re.match(r"[\d,]+", str(value.get()))
                total += int(digits.group(0).replace(",", "")) if digits else 0
    return total
