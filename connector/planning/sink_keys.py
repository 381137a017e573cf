"""What Flink 2.3 asks of a sink's PRIMARY KEY when an updating query writes it (FlinkChangelogModeInferenceProgram):
the query's upsert key must lie within the sink's key, or the INSERT says with `ON CONFLICT DO NOTHING | ERROR |
DEDUPLICATE` how rows of different upsert keys that meet on one sink key resolve (kafka-sql refuses those, saying
why). Checked against Flink 2.3: a GROUP BY of `a, b` into a sink keyed by `b` (or by `a`) is refused, into one
keyed by `a, b` or `a, b, c` accepted.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from connector.catalog.model import Insert, Pipeline, Table
from connector.planning.changes import is_updating_aggregate, read_tables

Report = Callable[[str, str], None]
_STRATEGIES = (
    "ON CONFLICT DO DEDUPLICATE (update to the latest record, state intensive, since we need to keep the entire "
    "history), or ON CONFLICT DO ERROR (fail on conflict), or ON CONFLICT DO NOTHING (keep first record)"
)


def upsert_conflicts(pipeline: Pipeline, insert: Insert, target: Table, report: Report) -> None:
    """Flink's refusal of a GROUP BY whose upsert key (its grouping columns, as selected) is not within the sink's
    primary key, and what kafka-sql does with an ON CONFLICT clause."""
    if insert.on_conflict is not None:
        _on_conflict(pipeline, insert, report)
        return
    query = insert.query
    if not target.primary_key or not isinstance(query, exp.Select) or query.args.get("group") is None:
        return

    def view(name: str) -> exp.Expr | None:
        found = pipeline.view(name)
        return found.query if found is not None else None

    if not is_updating_aggregate(query, view):
        return
    positions = upsert_key(query)
    if positions is None:
        return
    sink_names = insert.columns or [c.name for c in target.columns if c.persisted]
    names = [sink_names[i] for i in positions if i < len(sink_names)]
    if names and {n.lower() for n in names} <= {k.lower() for k in target.primary_key}:
        return
    shown = f"[{', '.join(names)}]" if names else ""  # Flink shows a query without an upsert key so
    report(
        "upsert-key",
        f"The query has an upsert key that differs from the primary key of the sink table '{target.name}'. "
        f"Primary key: [{', '.join(target.primary_key)}], upsert key: {shown}. "
        "This can lead to non-deterministic results when multiple records with different upsert keys map to the "
        f"same primary key. Please specify an ON CONFLICT clause to define how conflicts should be handled: "
        f"{_STRATEGIES}.",
    )


def upsert_key(select: exp.Select) -> list[int] | None:
    """The positions of a GROUP BY's grouping expressions among its selected ones: its upsert key (empty when one
    is not selected); None for grouping sets, ROLLUP and CUBE, and `*`, whose keys this does not derive."""
    group = select.args["group"]
    if any(group.args.get(k) for k in ("grouping_sets", "rollup", "cube")) or any(
        isinstance(s, exp.Star) or (isinstance(s, exp.Column) and isinstance(s.this, exp.Star)) for s in select.selects
    ):
        return None
    selected = [s.unalias() for s in select.selects]
    aliases = [s.alias_or_name.lower() for s in select.selects]
    positions: list[int] = []
    for grouped in group.expressions:
        if isinstance(grouped, exp.Literal) and grouped.is_int:  # GROUP BY 1
            index = int(grouped.name) - 1
            found = index if 0 <= index < len(selected) else None
        else:
            found = next((i for i, s in enumerate(selected) if s == grouped), None)
            if found is None and isinstance(grouped, exp.Column) and not grouped.table:
                found = next((i for i, a in enumerate(aliases) if a == grouped.name.lower()), None)
        if found is None:
            return []
        positions.append(found)
    return sorted(set(positions))


def _on_conflict(pipeline: Pipeline, insert: Insert, report: Report) -> None:
    """Flink's own refusal first (DO NOTHING and DO ERROR need watermarks on every source), then kafka-sql's: each
    strategy needs, per sink key, a state of which upsert key holds it (and for DEDUPLICATE, in what order its records
    came), which Spark's upsert sinks lack: a micro-batch emits its updated groups in no order, so even "the latest
    record" of a sink key would not be Flink's."""
    strategy = insert.on_conflict
    if strategy in ("NOTHING", "ERROR"):
        unwatermarked = [t.name for t in read_tables(pipeline, insert.query) if t.watermark is None]
        if unwatermarked:
            report(
                "on-conflict",
                f"ON CONFLICT DO {strategy} requires all source tables to define watermarks, but the following "
                f"source(s) do not: {', '.join(unwatermarked)}. Please add a WATERMARK declaration to these tables.",
            )
            return
    kept = {"NOTHING": "the first record", "ERROR": "one record, failing on a second",
            "DEDUPLICATE": "the latest record, with the history to fall back on"}  # fmt: skip
    report(
        "on-conflict",
        f"ON CONFLICT DO {strategy} is not supported by kafka-sql: Flink keeps, per sink key, "
        f"{kept.get(strategy or '')} among the query's upsert keys; Spark's upsert sinks write each micro-batch's "
        "updated rows in no order. "
        "Make the query's upsert key (its GROUP BY columns, selected) the sink's PRIMARY KEY.",
    )
