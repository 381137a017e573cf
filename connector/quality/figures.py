"""What the data-quality gate counts and decides in one micro-batch: the names of its observed figures, the
verdict, the per-rule and per-batch figures, and the report of a batch that stops the query."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from connector.quality.provenance import PROVENANCE
from connector.quality.rules import INLINE_TYPE, Action, Outcome, Rule, json_value

if TYPE_CHECKING:
    from pyspark.sql import Row

# Figures of the gate's observation besides "rows" and the rules' own (held under their names).
QUARANTINED, DROPPED = "__quarantined", "__dropped"  # rows row-level rules quarantine / drop (not quarantine)
MALFORMED_ROWS = "__malformed_rows"  # the skipped malformed source records of the batch (Rows)
_REPORT_ROWS = 5


def dropped_by(rule: Rule) -> str:
    """Name of the figure counting the rows `rule` drops that no quarantining rule takes instead."""
    return f"__dropped {rule.name}"


@dataclass(frozen=True)
class Verdict:
    """What the gate does with one batch: `stop` lists the failed rules whose action is `fail`; a failed
    batch-level rule quarantines or drops the whole batch; row totals count overlapping rules once."""

    rows: int
    batch_failed: list[bool]  # per rule: a batch-level rule that failed
    stop: list[int]
    quarantine_all: bool
    drop_all: bool
    quarantined: int
    dropped: int

    @property
    def written(self) -> int:
        return self.rows - self.quarantined - self.dropped


@dataclass
class RuleFigures:
    """What one rule found and did in one batch."""

    name: str
    type: str
    action: str
    scope: str  # "row" or "batch"
    success: bool
    checked: int
    failed: int  # rows violating it (row-level, uniqueness), or every row when a batch-level rule fails
    dropped: int
    quarantined: int
    observed_value: Any = None
    sample: list[dict[str, Any]] = field(default_factory=list)

    @property
    def passed(self) -> int:
        return self.checked - self.failed


@dataclass
class BatchFigures:
    """One batch through the gate: row totals (after overlaps between rules) and per-rule figures."""

    batch_id: int
    status: str  # passed | warned (violations kept) | filtered (rows dropped or quarantined) | failed
    rows: int
    written: int
    dropped: int
    quarantined: int
    rules: list[RuleFigures]
    duration_ms: int = 0
    malformed: int = 0  # malformed source records quarantined (not among `rows`)


@dataclass
class Totals:
    """Figures summed over the batches of a run, for the progress display."""

    batches: int = 0
    rows: int = 0
    written: int = 0
    dropped: int = 0
    quarantined: int = 0
    failed: int = 0
    malformed: int = 0

    def add(self, figures: BatchFigures) -> None:
        self.batches += 1
        self.rows += figures.rows
        self.written += figures.written
        self.dropped += figures.dropped
        self.quarantined += figures.quarantined
        self.malformed += figures.malformed
        self.failed += figures.status == "failed"



def decide(rules: Sequence[Rule], values: Mapping[str, Any], outcomes: Sequence[Outcome]) -> Verdict:
    """What the gate does with the batch, from its figures and every rule's outcome."""
    rows = int(values["rows"])
    batch_failed = [not o.success and not r.row_level for r, o in zip(rules, outcomes, strict=True)]
    stop = [
        i
        for i, (rule, outcome) in enumerate(zip(rules, outcomes, strict=True))
        if rule.action is Action.FAIL and not outcome.success
    ]

    def batch_level(action: Action) -> bool:
        return any(failed and r.action is action for r, failed in zip(rules, batch_failed, strict=True))

    quarantine_all, drop_all = batch_level(Action.QUARANTINE), batch_level(Action.DROP)
    quarantined = rows if quarantine_all else int(values.get(QUARANTINED) or 0)
    dropped = 0 if quarantine_all else (rows - quarantined if drop_all else int(values.get(DROPPED) or 0))
    return Verdict(rows, batch_failed, stop, quarantine_all, drop_all, quarantined, dropped)


def batch_figures(
    rules: Sequence[Rule],
    batch_id: int,
    status: str,
    verdict: Verdict,
    values: Mapping[str, Any],
    outcomes: Sequence[Outcome],
    samples: Mapping[int, list[Row]],
    started: float,
) -> BatchFigures:
    """Per rule: rows it rejects, and of those the ones it dropped (quarantine wins over drop: a row a
    quarantining rule also rejects is quarantined) or quarantined."""
    rows = verdict.rows
    per_rule = []
    for index, (rule, outcome) in enumerate(zip(rules, outcomes, strict=True)):
        failed = (outcome.unexpected_count or 0) if rule.row_level else (rows if verdict.batch_failed[index] else 0)
        acted = 0 if status == "failed" else failed
        if rule.action is Action.DROP and acted:
            key = dropped_by(rule) if dropped_by(rule) in values else rule.name
            acted = int(values[key] or 0) if rule.row_level else rows - verdict.quarantined
        per_rule.append(
            RuleFigures(
                name=rule.name,
                type=rule.type,
                action=rule.action.value,
                scope="row" if rule.row_level else "batch",
                success=outcome.success,
                checked=rows,
                failed=failed,
                dropped=acted if rule.action is Action.DROP else 0,
                quarantined=acted if rule.action is Action.QUARANTINE else 0,
                observed_value=_observed(rule, outcome),
                sample=[_row_record(r) for r in samples.get(index, [])[:_REPORT_ROWS]],
            )
        )
    duration = int((time.monotonic() - started) * 1000)
    if status == "failed":
        return BatchFigures(batch_id, status, rows, 0, 0, 0, per_rule, duration)
    malformed = len(values.get(MALFORMED_ROWS) or ())
    return BatchFigures(
        batch_id, status, rows, verdict.written, verdict.dropped, verdict.quarantined, per_rule, duration, malformed
    )


def failure_report(
    query_name: str,
    table_name: str,
    rules: Sequence[Rule],
    figures: BatchFigures,
    stop: Sequence[int],
    outcomes: Sequence[Outcome],
    details: str,
) -> str:
    """The message of the batch that stopped the query: the failed rules, samples of their rows, and where
    the batch's record (`details`) is."""
    lines = [
        f"Data-quality gate stopped query '{query_name}' at batch {figures.batch_id} (table '{table_name}', "
        f"{figures.rows} rows): nothing of the batch was written and its offsets were not committed."
    ]
    for index in stop:
        rule, outcome, rule_figures = rules[index], outcomes[index], figures.rules[index]
        lines.append(f"  expectation '{rule.name}' ({rule.describe()}): {_finding(rule, outcome)}")
        for sample in rule_figures.sample:
            values = ", ".join(f"{k}={v!r}" for k, v in sample.items() if k != "provenance")
            lines.append(f"    {values}  ({sample['provenance']})")
    lines.append(
        f"Fix the expectation or the data and run again: the same records are processed again. Details: {details}"
    )
    return "\n".join(lines)


def _row_record(row: Row) -> dict[str, Any]:
    values = row.asDict()
    values.pop("__rule", None)
    values.pop("__rank", None)
    topic, partition, offset = (values.pop(c, None) for c in PROVENANCE)
    if topic is None:
        where = "no source position"
    elif partition is None:
        where = f"file {topic}"
    else:
        where = f"topic {topic}, partition {partition}, offset {offset}"
    return {**{k: json_value(v) for k, v in values.items()}, "provenance": where}


def _observed(rule: Rule, outcome: Outcome) -> Any:
    if rule.type == INLINE_TYPE or outcome.unexpected_count is not None:
        return outcome.unexpected_count
    return json_value(outcome.observed)


def _finding(rule: Rule, outcome: Outcome) -> str:
    if outcome.unexpected_count is not None:
        text = f"{outcome.unexpected_count} of {outcome.element_count} rows violate it"
        if rule.mostly < 1:
            text += f" (mostly={rule.mostly} allows {int(outcome.element_count * (1 - rule.mostly))})"
        return text
    return f"observed {outcome.observed!r}"
