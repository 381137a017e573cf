"""`kafka-sql dq-report DIR`: the data-quality gate's per-batch results as one static HTML page.

Reads every results record (`batch-<id>.json`, written by `connector.quality.results`) under DIR, a results
directory or a whole checkpoint root, and renders per gated table: totals, then one row per batch (status,
rows checked / passed / dropped / quarantined, offsets, lag) with its expectations (verdict, observed value,
rows failed, dropped, quarantined, sample rows with their source position) and, for a failed batch, the report
that stopped the query. The page is self-contained (inline CSS, no scripts) and escapes all data.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any

_CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px; color: #1d2330; background: #fff; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 18px; margin: 28px 0 8px; }
p.meta { color: #5b6475; margin: 0 0 16px; }
table { border-collapse: collapse; margin: 6px 0 14px; }
th, td { border: 1px solid #d5dae3; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f0f3f8; font-weight: 600; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.passed { background: #e3f5e6; } .warned { background: #fff4d6; } .filtered { background: #e6eefc; }
.failed { background: #fbe1e1; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 9px; font-weight: 600; font-size: 12px; }
.ok { color: #17692b; } .bad { color: #a4161a; }
details { margin: 2px 0 10px 0; } summary { cursor: pointer; color: #2b4c9b; }
pre { background: #f7f7f9; border: 1px solid #e3e6ec; padding: 8px; white-space: pre-wrap; }
code { font-size: 12px; }
.cards { display: flex; gap: 12px; margin: 8px 0 16px; }
.card { border: 1px solid #d5dae3; border-radius: 6px; padding: 8px 14px; min-width: 110px; }
.card b { display: block; font-size: 20px; }
"""

_ROW_FIGURES = ("checked", "passed", "dropped", "quarantined")


@dataclass
class TableReport:
    """The records of one gated table of one query, in batch order."""

    query: str
    table: str
    records: list[dict[str, Any]] = field(default_factory=list)

    def total(self, key: str) -> int:
        return sum(int(r.get("rows", {}).get(key) or 0) for r in self.records)


def load_records(directory: Path) -> list[TableReport]:
    """Every results record under `directory`, grouped by query and table."""
    groups: dict[tuple[str, str], TableReport] = {}
    for path in sorted(directory.rglob("batch-*.json")):
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if not isinstance(record, dict) or "validation_result" not in record:
            continue
        key = (str(record.get("query")), str(record.get("table")))
        groups.setdefault(key, TableReport(*key)).records.append(record)
    for report in groups.values():
        report.records.sort(key=lambda r: int(r.get("batch_id", 0)))
    return [groups[k] for k in sorted(groups)]


def render(reports: Sequence[TableReport], source: str) -> str:
    """The HTML page for `reports` (read from `source`)."""
    batches = sum(len(r.records) for r in reports)
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<title>kafka-sql data-quality report</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>Data-quality report</h1>",
        f"<p class='meta'>{batches} micro-batch(es) of {len(reports)} gated table(s), from "
        f"<code>{escape(source)}</code></p>",
    ]
    for report in reports:
        parts.append(_table_section(report))
    parts.append("</body></html>")
    return "\n".join(parts)


def _table_section(report: TableReport) -> str:
    failed = sum(1 for r in report.records if r.get("status") == "failed")
    cards = [
        ("batches", len(report.records)),
        ("rows checked", report.total("checked")),
        ("passed", report.total("passed")),
        ("dropped", report.total("dropped")),
        ("quarantined", report.total("quarantined")),
        ("failed batches", failed),
    ]
    malformed = report.total("malformed_quarantined")
    if malformed:
        cards.insert(5, ("malformed records quarantined", malformed))
    quarantine = next((r.get("quarantine_table") for r in report.records if r.get("quarantine_table")), None)
    lines = [
        f"<h2>Table <code>{escape(report.table)}</code> &middot; query <code>{escape(report.query)}</code></h2>",
        "<div class='cards'>"
        + "".join(f"<div class='card'><b>{value}</b>{escape(label)}</div>" for label, value in cards)
        + "</div>",
    ]
    if quarantine:
        lines.append(f"<p class='meta'>Quarantine table: <code>{escape(str(quarantine))}</code></p>")
    lines.append(
        "<table><tr><th>batch</th><th>status</th><th>checked</th><th>passed</th><th>dropped</th>"
        "<th>quarantined</th><th>offsets (end)</th><th>lag</th><th>time</th><th>ms</th></tr>"
    )
    for record in report.records:
        rows = record.get("rows", {})
        status = str(record.get("status", ""))
        lines.append(
            f"<tr class='{escape(status)}'><td class='n'>{record.get('batch_id')}</td>"
            f"<td><span class='badge'>{escape(status)}</span></td>"
            + "".join(f"<td class='n'>{int(rows.get(k) or 0)}</td>" for k in _ROW_FIGURES)
            + f"<td><code>{escape(_offsets(record.get('offsets', {}).get('end')))}</code></td>"
            f"<td class='n'>{_lag(record.get('lag'))}</td>"
            f"<td>{escape(str(record.get('timestamp', '')))}</td>"
            f"<td class='n'>{record.get('duration_ms', '')}</td></tr>"
        )
    lines.append("</table>")
    for record in report.records:
        lines.append(_batch_details(record))
    return "\n".join(lines)


def _batch_details(record: Mapping[str, Any]) -> str:
    status = str(record.get("status", ""))
    opened = " open" if status == "failed" else ""
    lines = [f"<details{opened}><summary>batch {record.get('batch_id')}: {escape(status)}</summary>"]
    if record.get("failure"):
        lines.append(f"<pre>{escape(str(record['failure']))}</pre>")
    lines.append(
        "<table><tr><th>expectation</th><th>type</th><th>scope</th><th>action</th><th>verdict</th>"
        "<th>observed</th><th>failed</th><th>dropped</th><th>quarantined</th><th>sample rows</th></tr>"
    )
    for rule in record.get("expectations", []):
        success = bool(rule.get("success"))
        verdict = "<span class='ok'>met</span>" if success else "<span class='bad'>not met</span>"
        lines.append(
            f"<tr><td><code>{escape(str(rule.get('name')))}</code></td><td>{escape(str(rule.get('type')))}</td>"
            f"<td>{escape(str(rule.get('scope')))}</td><td>{escape(str(rule.get('action')))}</td><td>{verdict}</td>"
            f"<td>{escape(json.dumps(rule.get('observed_value'), default=str))}</td>"
            + "".join(f"<td class='n'>{int(rule.get(k) or 0)}</td>" for k in ("failed", "dropped", "quarantined"))
            + f"<td>{_samples(rule.get('sample') or [])}</td></tr>"
        )
    lines.append("</table></details>")
    return "\n".join(lines)


def _samples(samples: Iterable[Mapping[str, Any]]) -> str:
    items = []
    for sample in samples:
        values = ", ".join(f"{k}={json.dumps(v, default=str)}" for k, v in sample.items() if k != "provenance")
        items.append(f"<code>{escape(values)}</code> <i>({escape(str(sample.get('provenance', '')))})</i>")
    return "<br>".join(items)


def _offsets(offsets: Any) -> str:
    if not offsets:
        return "-"
    parts = []
    for source in offsets:
        if isinstance(source, dict):
            for topic, partitions in source.items():
                if isinstance(partitions, dict):
                    partitions = ", ".join(f"{p}:{o}" for p, o in partitions.items())
                parts.append(f"{topic} [{partitions}]")
        else:
            parts.append(str(source))
    return "; ".join(parts)


def _lag(lag: Any) -> str:
    if not isinstance(lag, dict):
        return "-"
    return str(sum(int(v) for partitions in lag.values() for v in partitions.values()))


def write_report(directory: Path, output: Path | None = None) -> tuple[Path, int]:
    """Render the records under `directory` to `output` (default DIR/quality-report.html); returns the path
    and the number of batches. FileNotFoundError when DIR holds no results record."""
    reports = load_records(directory)
    if not reports:
        raise FileNotFoundError(f"no data-quality results (batch-*.json) under {directory}")
    target = output or directory / "quality-report.html"
    target.write_text(render(reports, str(directory)))
    return target, sum(len(r.records) for r in reports)
