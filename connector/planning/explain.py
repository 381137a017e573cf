"""`kafka-sql explain`: the catalog and the plan of each INSERT, as JSON-able data and as text.

Everything shown goes through secret masking: option values of secret keys never appear.
"""

from __future__ import annotations

from typing import Any

from connector.catalog.model import ColumnKind, Function, Pipeline, Table
from connector.catalog.types import flink_sql
from connector.planning.plan import QueryPlan, build
from connector.quality import expectations
from connector.quality.options import QualityOptions
from connector.secrets import mask_options, mask_sql


def _column(col: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"name": col.name, "kind": col.kind.value}
    if col.kind is ColumnKind.COMPUTED and col.expression is not None:
        out["expression"] = col.expression.sql(dialect="flink")
    else:
        out["type"] = col.type_sql + ("" if col.nullable else " NOT NULL")
    if col.kind is ColumnKind.METADATA:
        out["metadata"] = col.metadata_key
        out["virtual"] = col.virtual
    return out


def _table(table: Table) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": table.name,
        "connector": table.connector,
        "columns": [_column(c) for c in table.columns],
        "options": mask_options(table.options),
    }
    if table.watermark is not None:
        out["watermark"] = f"{table.watermark.column} AS {table.watermark.expression.sql(dialect='flink')}"
    if table.primary_key:
        out["primary_key"] = table.primary_key
    return out


def _gate(pipeline: Pipeline, query: QueryPlan) -> dict[str, Any] | None:
    """The data-quality gate of a query's sink: its rules with scope and action, where rejected rows and
    results go."""
    sink = query.sink
    if not expectations.has_quality(sink):
        return None
    rules = expectations.rules_of(sink, pipeline.file)
    return {
        "expectations": [
            {
                "name": r.name,
                "check": mask_sql(r.describe()),
                "scope": "row" if r.row_level else "batch",
                "action": r.action.value,
            }
            for r in rules
        ],
        "quarantine_table": sink.options.get(QualityOptions.QUARANTINE_TABLE.key),
        "quarantine_malformed": expectations.quarantines_malformed(sink),
        "results": sink.options.get(QualityOptions.RESULTS_PATH.key) or f"<root>/{query.checkpoint}/quality",
    }


def explain(pipeline: Pipeline, default_name: str) -> dict[str, Any]:
    """The explain document of a validated pipeline."""
    plan = build(pipeline, default_name)
    queries = []
    for q in plan.queries:
        doc = {**q.to_json(), "spark_sql": mask_sql(q.spark_sql)}
        cut_out = ("deduplications", "over_aggregations", "changelog_aggregations")
        for view in [v for key in cut_out for v in doc.get(key, [])]:
            view["spark_sql"] = mask_sql(view["spark_sql"])
        gate = _gate(pipeline, q)
        if gate is not None:
            doc["quality_gate"] = gate
        queries.append(doc)
    return {
        "pipeline": plan.name,
        "settings": mask_options({k: s.value for k, s in pipeline.settings.items()}),
        "spark_conf": plan.spark_conf,
        "tables": [_table(t) for t in pipeline.tables.values()],
        "functions": [_function(f) for f in pipeline.functions.values()],
        "views": [{"name": name, "spark_sql": mask_sql(sql)} for name, sql in plan.views],
        "queries": queries,
        "warnings": [str(w) for w in plan.warnings],
    }


def _function(function: Function) -> dict[str, Any]:
    """A Python function as `explain` shows it: its SQL name, Python name, parameters and result type."""
    parameters = [f"{name} {annotated or 'ANY'}" for name, annotated in function.parameters]
    return {
        "name": function.name,
        "python": function.identifier,
        "kind": "table" if function.table else "scalar",
        "parameters": parameters + (["*args"] if function.variadic else []),
        "result_type": flink_sql(function.result_type),
    }


def _gate_lines(gate: dict[str, Any]) -> list[str]:
    lines = ["  quality gate: each micro-batch is checked before the sink writes it and its offsets commit"]
    for e in gate["expectations"]:
        named = "" if e["check"].startswith(e["name"].split("(")[0]) else f"{e['name']}: "  # suite rules: named by type
        lines.append(f"    expectation {named}{e['check']} ({e['scope']}-level, on violation: {e['action']})")
    if gate["quarantine_table"]:
        malformed = "; malformed source records too" if gate["quarantine_malformed"] else ""
        lines.append(f"    quarantine: {gate['quarantine_table']}{malformed}")
    lines.append(f"    results: {gate['results']}")
    return lines


def render_text(doc: dict[str, Any]) -> str:
    """A readable rendering of `explain`'s document."""
    lines = [f"Pipeline '{doc['pipeline']}'"]
    if doc["settings"]:
        lines.append("Settings:")
        lines += [f"  {k} = {v}" for k, v in doc["settings"].items()]
    if doc["spark_conf"]:
        lines.append("Spark configuration:")
        lines += [f"  {k} = {v}" for k, v in doc["spark_conf"].items()]
    lines.append("Tables:")
    for t in doc["tables"]:
        lines.append(f"  {t['name']} ({t['connector']})")
        for c in t["columns"]:
            detail = c.get("type") or f"AS {c['expression']}"
            if c["kind"] == "metadata":
                detail += f" METADATA FROM '{c['metadata']}'" + (" VIRTUAL" if c["virtual"] else "")
            lines.append(f"    {c['name']} {detail}")
        if "watermark" in t:
            lines.append(f"    WATERMARK FOR {t['watermark']}")
        if "primary_key" in t:
            lines.append(f"    PRIMARY KEY ({', '.join(t['primary_key'])})")
        lines += [f"    '{k}' = '{v}'" for k, v in t["options"].items()]
    if doc["functions"]:
        lines.append("Functions:")
    for f in doc["functions"]:
        kind = " (table function)" if f["kind"] == "table" else ""
        lines.append(f"  {f['name']} = {f['python']}({', '.join(f['parameters'])}) -> {f['result_type']}{kind}")
    for v in doc["views"]:
        lines.append(f"View {v['name']}: {v['spark_sql']}")
    for q in doc["queries"]:
        set_note = f", statement set {q['statement_set']}" if q["statement_set"] else ""
        lines.append(f"Query '{q['query']}' (INSERT at {q['insert']}{set_note})")
        sink = q["sink"]
        details = ", ".join(f"{k}: {v}" for k, v in sink.items() if k not in ("table", "connector"))
        lines.append(f"  sink: {sink['table']} ({sink['connector']})" + (f"; {details}" if details else ""))
        if "quality_gate" in q:
            lines += _gate_lines(q["quality_gate"])
        for s in q["sources"]:
            lines.append(f"  source: {s['table']} ({s['connector']}) as view {s['view']}")
            for key in ("subscription", "start", "restore", "stop", "commit", "discovery", "lookup"):
                if key in s:
                    lines.append(f"    {key}: {s[key]}")
        trigger = "available-now" if q["trigger"].get("availableNow") else f"every {q['trigger']['processingTime']}"
        lines.append(f"  output mode: {q['output_mode']}; trigger: {trigger}; checkpoint: <root>/{q['checkpoint']}")
        for d in q.get("deduplications", []):
            keys = ", ".join(d["keys"]) or "the whole stream"
            if "top" in d:
                top = d["top"]
                order = ", ".join(f"{name} {'DESC' if desc else 'ASC'}" for name, desc in top["order"])
                numbered = f", numbered {top['rank']}" if top["rank_selected"] else ""
                numbered += ", each record's changes" if top.get("changelog") else ""
                grouped = d.get("group_by")
                if grouped is not None:
                    calls = ", ".join(f"{c['function']}({c['argument'] or '*'})" for c in grouped["aggregates"])
                    numbered += f", of the groups of GROUP BY {', '.join(grouped['keys'])} with {calls}"
                lines.append(f"  Top-N view {d['view']} ({top['limit']} first rows per {keys} by {order}{numbered}): "
                             f"{d['spark_sql']}")  # fmt: skip
            else:
                lines.append(f"  deduplicated view {d['view']} (first row per {keys}): {d['spark_sql']}")
        for t in q.get("temporal_joins", []):
            keys = ", ".join(f"{t['left_alias']}.{a} = {t['right_alias']}.{b}" for a, b in t["keys"])
            lines.append(
                f"  temporal join view {t['view']}: {t['left']} AS {t['left_alias']} {'LEFT ' if t['outer'] else ''}"
                f"JOIN the versions of {t['right']} AS {t['right_alias']} ON {keys}, as of {t['left_time']} "
                f"(versions by {t['right_time']}; rows wait for the watermark)"
            )
        for a in q.get("changelog_aggregations", []):
            calls = ", ".join(f"{c['function']}({c['argument'] or '*'}) AS {c['output']}" for c in a["aggregates"])
            keys = ", ".join(a["keys"]) or "the whole stream"
            changes = f"{calls} per {keys}, each change with its retraction"
            if a.get("retracting"):
                changes = f"{calls} per {keys}, the changelog's old rows retracted, each group's new row upserted"
            lines.append(f"  changelog GROUP BY view {a['view']} ({changes}): {a['spark_sql']}")
        for o in q.get("over_aggregations", []):
            lines.append(f"  OVER aggregation view {o['view']} ({_over_words(o)}): {o['spark_sql']}")
        lines.append(f"  spark sql: {q['spark_sql']}")
    lines += doc["warnings"]
    return "\n".join(lines)


def _over_words(view: dict[str, Any]) -> str:
    """An OVER aggregation's frame in words: 'SUM(__over_a0), COUNT(*) per __over_k0 over ROWS 2 PRECEDING ...'."""
    frame = view["frame"]
    calls = ", ".join(f"{a['function']}({a['argument'] or '*'}) AS {a['output']}" for a in view["aggregates"])
    keys = ", ".join(view["keys"]) or "the whole stream"
    if frame["preceding"] is None:
        start = "UNBOUNDED"
    else:
        start = str(frame["preceding"]) if frame["rows"] else f"INTERVAL '{frame['preceding']}' MILLISECOND"
    kind = "ROWS" if frame["rows"] else "RANGE"
    when = "in event-time order once the watermark passes each row" if frame["rowtime"] else "as rows arrive"
    return f"{calls} per {keys}, {kind} BETWEEN {start} PRECEDING AND CURRENT ROW, {when}"
