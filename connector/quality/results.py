"""The data-quality gate's per-batch results: one JSON record per batch in the query's results directory.

A record holds the batch id, the batch's offsets (from the checkpoint) and the Kafka lag behind them, rows
checked / passed / dropped / quarantined per rule, and the great-expectations validation result;
`kafka-sql dq-report DIR` (`connector.quality.report`) renders them.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from dataclasses import asdict
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from connector.catalog.model import Table
from connector.quality.figures import BatchFigures
from connector.quality.rules import Outcome, Rule
from connector.runtime.hadoop_fs import HadoopFs

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, Row

log = logging.getLogger(__name__)


class ResultsWriter:
    """Writes the results records of one gated query (`directory`, one file per batch, replaced when the
    batch runs again). `ask_positions` starts reading a batch's offsets and lag as the batch comes in;
    `write` waits for them."""

    def __init__(
        self,
        query_name: str,
        table: Table,
        rules: Sequence[Rule],
        directory: str,
        checkpoint: str,
        quarantine: Table | None,
        kafka_sources: Sequence[Table],
    ) -> None:
        self.query_name = query_name
        self.table = table
        self.rules = rules
        self.directory = directory.rstrip("/")
        self.checkpoint = checkpoint.rstrip("/")
        self.quarantine = quarantine
        self.kafka_sources = list(kafka_sources)
        self._suite_name = f"{table.name}_expectations"
        self._fs: HadoopFs | None = None
        # The current batch's offsets and lag, asked for while Spark runs the batch (`ask_positions`).
        self._positions: Future[tuple[dict[str, Any], dict[str, dict[str, int]] | None]] | None = None

    def path(self, batch_id: int) -> str:
        """Where the record of batch `batch_id` goes."""
        return f"{self.directory}/batch-{batch_id:012d}.json"

    def ask_positions(self, batch: DataFrame, batch_id: int) -> None:
        """Start reading the batch's offsets from the checkpoint (written before the batch runs) and asking
        Kafka for the lag behind them, on the gate's side thread, so that neither waits for the other nor
        adds to the batch's time: the Spark job that reads the batch takes far longer."""
        fs = self._results_fs(batch)
        found: Future[tuple[dict[str, Any], dict[str, dict[str, int]] | None]] = Future()

        def positions() -> None:
            try:
                offsets = self._offsets(fs, batch_id)
                found.set_result((offsets, self._lag(offsets["end"])))
            except BaseException as error:  # raised where the record needs them
                found.set_exception(error)

        threading.Thread(target=positions, name=f"quality-gate-{self.table.name}", daemon=True).start()
        self._positions = found

    def write(
        self,
        cached: DataFrame,
        batch_id: int,
        figures: BatchFigures,
        outcomes: Sequence[Outcome],
        samples: Mapping[int, list[Row]],
        failure: str | None,
    ) -> None:
        """One JSON record per batch (replaced when the batch runs again): figures, offsets, lag and the
        great-expectations validation result."""
        assert self._positions is not None, "asked for when the batch came in"
        offsets, lag = self._positions.result()
        record = {
            "query": self.query_name,
            "table": self.table.name,
            "batch_id": batch_id,
            "status": figures.status,
            "timestamp": datetime.now(UTC).isoformat(timespec="milliseconds"),
            "duration_ms": figures.duration_ms,
            "offsets": offsets,
            "lag": lag,
            "rows": {
                "checked": figures.rows,
                "passed": figures.written,
                "dropped": figures.dropped,
                "quarantined": figures.quarantined,
                "malformed_quarantined": figures.malformed,
            },
            "quarantine_table": self.quarantine.name if self.quarantine is not None else None,
            "expectations": [{**asdict(r), "passed": r.passed} for r in figures.rules],
            "failure": failure,
            "validation_result": self._validation_result(batch_id, outcomes, samples, figures),
        }
        self._results_fs(cached).write_text(self.path(batch_id), json.dumps(record, indent=2, default=str))

    def _results_fs(self, frame: DataFrame) -> HadoopFs:
        if self._fs is None:
            self._fs = HadoopFs(frame.sparkSession, self.directory)
        return self._fs

    def _validation_result(
        self, batch_id: int, outcomes: Sequence[Outcome], samples: Mapping[int, list[Row]], figures: BatchFigures
    ) -> dict[str, Any]:
        """The batch's great-expectations ExpectationSuiteValidationResult, as JSON."""
        from great_expectations.core import ExpectationSuiteValidationResult, ExpectationValidationResult
        from great_expectations.expectations.expectation_configuration import ExpectationConfiguration

        results = []
        for index, (rule, outcome) in enumerate(zip(self.rules, outcomes, strict=True)):
            partial = [row[rule.column] for row in samples.get(index, [])] if rule.column else []
            results.append(
                ExpectationValidationResult(
                    success=outcome.success,
                    expectation_config=ExpectationConfiguration(**rule.configuration()),
                    result=outcome.gx_result(rule, partial),
                    meta={"scope": "row" if rule.row_level else "batch", "action": rule.action.value},
                )
            )
        successful = sum(1 for o in outcomes if o.success)
        suite_result = ExpectationSuiteValidationResult(
            success=successful == len(outcomes),
            results=results,
            suite_name=self._suite_name,
            statistics={
                "evaluated_expectations": len(outcomes),
                "successful_expectations": successful,
                "unsuccessful_expectations": len(outcomes) - successful,
                "success_percent": successful / len(outcomes) * 100 if outcomes else None,
            },
            meta={"query": self.query_name, "table": self.table.name, "batch_id": batch_id, "status": figures.status},
        )
        document: dict[str, Any] = suite_result.to_json_dict()
        return document

    def _offsets(self, fs: HadoopFs, batch_id: int) -> dict[str, Any]:
        """Start and end offsets of the batch, per source, from the checkpoint's offset log."""

        def read(index: int) -> list[Any] | None:
            if index < 0:
                return None
            text = fs.read_text(f"{self.checkpoint}/offsets/{index}")
            if text is None:
                return None
            found = []
            for line in text.splitlines()[2:]:
                try:
                    found.append(json.loads(line) if line.strip() != "-" else None)
                except ValueError:
                    found.append(line)
            return found

        return {"start": read(batch_id - 1), "end": read(batch_id)}

    def _lag(self, end: list[Any] | None) -> dict[str, dict[str, int]] | None:
        """Records behind the batch's end offsets per Kafka partition, asked from the broker as the batch
        starts."""
        if not end or not self.kafka_sources:
            return None
        from confluent_kafka import Consumer, KafkaException, TopicPartition

        from connector.connectors.kafka.client_log import logged
        from connector.connectors.kafka.settings import SourceSettings

        lag: dict[str, dict[str, int]] = {}
        for offsets in end:
            if not isinstance(offsets, dict):
                continue
            table = next((t for t in self.kafka_sources if _reads(t, offsets)), None)
            if table is None:
                continue
            try:
                settings = SourceSettings.from_options(table.options)
                consumer = Consumer(
                    logged({**settings.client_config("quality-gate"), "group.id": "kafka-sql-quality-gate",
                            "enable.auto.commit": False})
                )
            except Exception as error:  # lag is informative: never fail a batch for it
                log.warning("Cannot ask Kafka for the lag of %s: %s", self.query_name, error)
                continue
            try:
                for topic, partitions in offsets.items():
                    for partition, offset in partitions.items():
                        high = consumer.get_watermark_offsets(TopicPartition(topic, int(partition)), timeout=5)[1]
                        lag.setdefault(topic, {})[str(partition)] = max(0, int(high) - int(offset))
            except (KafkaException, TypeError, ValueError) as error:
                log.warning("Cannot ask Kafka for the lag of %s: %s", self.query_name, error)
            finally:
                consumer.close()
        return lag or None


def _reads(table: Table, offsets: Mapping[str, Any]) -> bool:
    listed = table.options.get("topic")
    pattern = table.options.get("topic-pattern")
    for topic in offsets:
        if listed is not None and topic not in listed.split(";"):
            return False
        if pattern is not None and re.fullmatch(pattern, topic) is None:
            return False
    return True

