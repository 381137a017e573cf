"""Flink's Top-N, `SELECT ... FROM (SELECT ..., ROW_NUMBER() OVER (PARTITION BY k ORDER BY c DESC) AS rn FROM s)
WHERE rn <= N`, over an append-only stream.

Flink keeps the N first rows of each partition key in state (AppendOnlyTopNFunction) and, as rows arrive, updates
the ranks they change: with the rank selected, an upsert of each changed (key, rank); without it, a delete of the
row that leaves the top N and an insert of the row that enters. Spark has no such operator: the transpiler cuts the
ranked subquery out as a view, as for deduplication, and the engine defines the view with a stateful operator
(`connector.runtime.operators.top_n`) whose rows carry `__deleted`, which the upsert sinks write as deletes.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from sqlglot import exp

from connector.planning.operators.over import groups_rows
from connector.planning.operators.windowed_rows import ViewQuery, no_views, window_aggregate, windowed_rows
from connector.sql.rewrite.nodes import TranspileError


@dataclass
class TopN:
    """The N first rows per key in `order` (column, descending), then in arrival order (newest first with
    `newest_first`), numbered in column `rank` when selected."""

    limit: int
    order: list[tuple[str, bool]]
    rank: str
    rank_selected: bool
    newest_first: bool = False  # ORDER BY a processing-time attribute DESC: the last rows to arrive
    # Written as a changelog format (debezium-json, ...): each record's changes, a replaced row's delete included,
    # as Flink's rank operators emit them; otherwise a micro-batch's net change of the final table.
    changelog: bool = False
    kinds: bool = False  # those changes carry their kinds (UPDATE_BEFORE, UPDATE_AFTER), which a print sink shows
    # Over a GROUP BY (the ranked subquery's FROM): its select, whose changes (with retractions) are ranked.
    aggregated: exp.Select | None = field(default=None, repr=False, compare=False)


def top_n(outer: exp.Select, inner: exp.Select, ranked: exp.Alias, proctimes: Collection[str] = ()) -> TopN:
    """The Top-N of `outer` (`WHERE rank <= N`, `< N + 1` or `= 1`, nothing else) over `inner`, which selects the
    ordering columns; ordered by a processing-time attribute (one of `proctimes`), rows rank by arrival. Raises
    TranspileError for a ranking this cannot run."""
    rank, window = ranked.alias, ranked.this
    aggregated = _aggregated_input(inner)
    if aggregated is None and any(groups_rows(s) for s in inner.find_all(exp.Select)):
        raise TranspileError(
            "Top-N over an aggregate is supported with the GROUP BY as the ranked subquery's FROM (SELECT ..., "
            "ROW_NUMBER() OVER (...) AS rn FROM (SELECT ... GROUP BY ...)): its changes are then retracted from "
            "the ranking as Flink does; not an aggregate elsewhere in it.",
            window,
        )
    plain = all(isinstance(p.unalias(), exp.Column | exp.Star) for p in inner.selects if p is not ranked)
    if aggregated is not None and (not plain or inner.args.get("where") is not None):
        raise TranspileError(
            "A Top-N over a GROUP BY ranks the GROUP BY's rows as they are: select its columns (or *) beside the "
            "rank, with no expressions over them and no WHERE.",
            window,
        )
    where = outer.args.get("where")
    condition = where.this if where is not None else None
    limit = rank_limit(condition, rank)
    if limit is None:
        raise TranspileError(
            "Top-N is supported with its rank bounded alone (WHERE rn <= N): another filter on the ranked rows "
            "would drop the updates of the ranks it filters.",
            window,
        )
    outputs = {s.alias_or_name.lower() for s in inner.selects if s is not ranked} | (
        {"*"} if any(isinstance(s, exp.Star) for s in inner.selects) else set()
    )
    order = window.args.get("order")
    orderings = order.expressions if isinstance(order, exp.Order) else []
    columns = [o.this for o in orderings]
    if not orderings or not all(isinstance(c, exp.Column) for c in columns):
        raise TranspileError("Top-N is supported ordered by columns (ORDER BY c [DESC], ...).", window)
    if len(columns) == 1 and columns[0].name.lower() in {p.lower() for p in proctimes}:
        named = {c.name.lower() for s in outer.selects for c in s.find_all(exp.Column)}
        selected = rank.lower() in named or any(isinstance(s, exp.Star) for s in outer.selects)
        return TopN(limit, [], rank, selected, newest_first=bool(orderings[0].args.get("desc")), aggregated=aggregated)
    names = []
    for index, column in enumerate(columns):
        if "*" in outputs or column.name.lower() in outputs:
            names.append(column.name)
            continue
        if any(isinstance(s, exp.Star) for s in outer.selects):
            raise TranspileError("Top-N with SELECT * needs ORDER BY columns the ranked subquery selects.", window)
        names.append(f"__topn_order_{index}")  # selected for the operator to order by; the outer query does not
        inner.select(exp.alias_(column.copy(), names[-1]), copy=False)
    named = {c.name.lower() for s in outer.selects for c in s.find_all(exp.Column)}
    rank_selected = rank.lower() in named or any(isinstance(s, exp.Star) for s in outer.selects)
    order_by = [(name, bool(o.args.get("desc"))) for name, o in zip(names, orderings, strict=True)]
    return TopN(limit, order_by, rank, rank_selected, aggregated=aggregated)


def _aggregated_input(inner: exp.Select) -> exp.Select | None:
    """The GROUP BY that is the ranked subquery's FROM, when it is the only aggregate in it and reads none."""
    from_ = inner.args.get("from_")
    source = from_.this if from_ is not None else None
    if groups_rows(inner) or inner.args.get("joins") or not isinstance(source, exp.Subquery):
        return None
    aggregate = source.this
    if not isinstance(aggregate, exp.Select) or not groups_rows(aggregate):
        return None
    nested = [s for s in aggregate.find_all(exp.Select) if s is not aggregate and groups_rows(s)]
    return None if nested else aggregate


def ranks_windows(inner: exp.Select, window: exp.Window, view: ViewQuery = no_views) -> bool:
    """Whether ranking `window` in `inner` is Flink's window Top-N (or window deduplication): PARTITION BY
    window_start and window_end of rows a window TVF (TUMBLE, HOP, CUMULATE) assigns, or of a window aggregate
    over them, read directly or through subqueries and views (`view`). Its rows are final when the window closes:
    it appends (`connector.planning.operators.window_ranking`)."""
    partition = {p.name.lower() for p in window.args.get("partition_by") or [] if isinstance(p, exp.Column)}
    if not {"window_start", "window_end"} <= partition or groups_rows(inner) or inner.args.get("joins"):
        return False
    from_ = inner.args.get("from_")
    source = from_.this if from_ is not None else None
    tvf = windowed_rows(source, view) if source is not None else None
    aggregate = window_aggregate(source, view) if tvf is None and source is not None else None
    if aggregate is not None:
        aggregate_from = aggregate.args["from_"]
        tvf = windowed_rows(aggregate_from.this, view)
    return tvf is not None and str(tvf.args.get("kind")).upper() != "SESSION"


def is_top_n(outer: exp.Select, proctimes: Collection[str] = (), view: ViewQuery = no_views) -> bool:
    """Whether `outer` selects the rows of a ranked subquery with the rank bounded, which updates its results: a
    Top-N, or a deduplication other than the first row by processing time (a column of `proctimes`); not a window
    Top-N (`ranks_windows`), which appends."""
    from_ = outer.args.get("from_")
    subquery = from_.this if from_ is not None else None
    if not isinstance(subquery, exp.Subquery) or not isinstance(subquery.this, exp.Select):
        return False
    where = outer.args.get("where")
    for projection in subquery.this.selects:
        if isinstance(projection, exp.Alias) and isinstance(projection.this, exp.Window):
            limit = rank_limit(where.this if where is not None else None, projection.alias)
            if not isinstance(projection.this.this, exp.RowNumber) or limit is None:
                return False
            if ranks_windows(subquery.this, projection.this, view):
                return False
            order = projection.this.args.get("order")
            orderings = order.expressions if isinstance(order, exp.Order) else []
            first_arrival = (
                len(orderings) == 1
                and isinstance(orderings[0].this, exp.Column)
                and orderings[0].this.name.lower() in {p.lower() for p in proctimes}
                and not orderings[0].args.get("desc")
            )
            return limit > 1 or not first_arrival
    return False


def top_n_key(
    outer: exp.Select, proctimes: Collection[str] = (), star_columns: Sequence[str] = ()
) -> set[int] | None:
    """The upsert key of a Top-N (`is_top_n`) as positions of `outer`'s columns: those selecting the PARTITION BY
    columns and the rank (not needed for a Top-1: one row per key), when all of them are selected; an empty set
    when the rank or a key is not (Flink then has no upsert key); None for a query that is no Top-N. A `SELECT *`
    of the ranked rows passes every column on, named as in `star_columns` (its expansion, Nexmark q19)."""
    if not is_top_n(outer, proctimes):
        return None
    inner = outer.args["from_"].this.this
    ranked = next(p for p in inner.selects if isinstance(p, exp.Alias) and isinstance(p.this, exp.Window))
    wanted = {p.name.lower() for p in ranked.this.args.get("partition_by") or [] if isinstance(p, exp.Column)}
    where = outer.args.get("where")
    if rank_limit(where.this if where is not None else None, ranked.alias) != 1:
        wanted.add(ranked.alias.lower())
    if any(isinstance(s, exp.Star) for s in outer.selects):
        named = {i: name.lower() for i, name in enumerate(star_columns) if name.lower() in wanted}
        return set(named) if set(named.values()) == wanted else set()
    found = {
        i: s.unalias().name.lower()
        for i, s in enumerate(outer.selects)
        if isinstance(s.unalias(), exp.Column) and s.unalias().name.lower() in wanted
    }
    return set(found) if set(found.values()) == wanted else set()


def rank_limit(condition: exp.Expr | None, rank: str) -> int | None:
    """N of `rank <= N` (`< N + 1`, `= 1`), a Top-N's bound on its rank; None for another condition."""
    if not isinstance(condition, exp.LTE | exp.LT | exp.EQ):
        return None
    column, bound = condition.this, condition.expression
    if not (isinstance(column, exp.Column) and column.name.lower() == rank.lower()):
        return None
    if not (isinstance(bound, exp.Literal) and bound.is_int):
        return None
    limit = int(bound.name) - (1 if isinstance(condition, exp.LT) else 0)
    if isinstance(condition, exp.EQ) and limit != 1:
        return None  # rn = 3 is not a Top-N
    return limit if limit >= 1 else None
