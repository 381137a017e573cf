"""Flink SQL queries rewritten as Spark SQL for Structured Streaming.

The SELECT of every INSERT and view is a sqlglot tree in the `flink` dialect. `transpile` rewrites a copy of it
into a tree that, generated in sqlglot's `spark` dialect, computes the same rows in Spark. What needs more
than renaming:

* Window TVFs and legacy group windows become Spark time windows (see `connector.planning.operators.windows`).
* `LATERAL TABLE(f(x)) AS T(a, b)` (a Python table function) -> `LATERAL f(x) AS T(a, b)` (a Python UDTF);
  `LEFT JOIN LATERAL TABLE(...) ON TRUE` -> an inner lateral join of f's NULL-padding variant.
* `CROSS JOIN UNNEST(arr) AS t(x)` -> `LATERAL VIEW explode(arr) t AS x`; with two or more column names
  the array is taken to hold rows -> `inline(arr)` (a MAP cannot be told apart without types: unnest
  `MAP_ENTRIES(m)` instead); `LEFT JOIN UNNEST(...) ON TRUE` -> `LATERAL VIEW OUTER`.
* Deduplication (`ROW_NUMBER() OVER (PARTITION BY k ORDER BY proctime) = 1` in a subquery) is cut out into a
  view the engine defines with `dropDuplicates` (see `connector.planning.operators.deduplication` and `to_spark_query`);
  OVER aggregations likewise into a view a stateful operator defines (see `connector.planning.operators.over`).
* Built-ins whose Spark namesake differs and CASTs to Flink types (see `connector.sql.rewrite.functions.builtins`),
  plural interval units (see `connector.sql.rewrite.intervals`), 1-based array subscripts, and catalog-qualified
  table names (Spark sees the temporary view registered under the bare table name).

The rewrites run in the order `_Rewriter.query` lists them (`streaming_passes`, then `spark_passes`, then each
expression), as sqlglot's optimizer runs its RULES.

Anything Spark cannot compute the same way raises `TranspileError(message, node)`; `node` is the offending
node of the caller's tree (it keeps its position), so the validator can point at the line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field

from sqlglot import exp
from sqlglot.errors import ErrorLevel, UnsupportedError

from connector.catalog import python_udfs
from connector.catalog.model import UPDATE_AFTER_COLUMN, UPDATE_BEFORE_COLUMN
from connector.planning.operators.changelog_aggregation import ChangelogAggregation
from connector.planning.operators.changelog_aggregation import extract as extract_aggregation
from connector.planning.operators.deduplication import Deduplication, extract, extract_distinct
from connector.planning.operators.over import OverAggregation
from connector.planning.operators.over import extract as extract_over
from connector.planning.operators.temporal import TemporalJoin
from connector.planning.operators.temporal import extract as extract_temporal
from connector.planning.operators.window_joins import is_window_join, rewrite_window_joins
from connector.planning.operators.window_ranking import rewrite_window_ranking
from connector.planning.operators.windowed_rows import expose_aggregated_windows, expose_windows
from connector.planning.operators.windows import rewrite_group_windows, rewrite_window_tvfs
from connector.sql.dialect.flink import Flink
from connector.sql.rewrite.functions.builtins import no_paren_call, spark_cast, spark_function
from connector.sql.rewrite.intervals import spark_interval
from connector.sql.rewrite.nodes import TranspileError, call_name, flink_sql, fn


@dataclass
class SparkQuery:
    """A Flink query as Spark SQL, with the deduplicated views the SQL reads (defined before it runs)."""

    sql: str
    deduplications: list[Deduplication] = field(default_factory=list)
    temporal_joins: list[TemporalJoin] = field(default_factory=list)
    over_aggregations: list[OverAggregation] = field(default_factory=list)
    changelog_aggregations: list[ChangelogAggregation] = field(default_factory=list)


def to_spark_query(
    query: exp.Query,
    *,
    watermarks: Mapping[str, str] | None = None,
    proctimes: Mapping[str, str] | None = None,
    streaming: bool = True,
    owned: bool = False,
    lookups: Collection[str] = (),
    changelog: bool = False,
    retracting: bool = False,
    kinds: bool = False,
) -> SparkQuery:
    """Spark SQL computing what the Flink `query` computes (see `transpile`); `proctimes` maps a table or view
    name to its processing-time attribute, which deduplication orders by. `owned`: the caller made `query` for
    this call and will not use it again, so it is rewritten in place rather than copied first. `lookups` names the
    relations that lookup joins read (`FOR SYSTEM_TIME AS OF`, see `connector.planning.operators.lookups`): static
    relations of
    stream-static joins. `changelog`: the query's updates are written as a changelog (debezium-json, ...), so its
    GROUP BY is cut out into an operator that emits Flink's retractions (see
    `connector.planning.operators.changelog_aggregation`)
    and its Top-N emits each record's changes;
    `retracting`: the query's GROUP BY aggregates a changelog, whose old rows that operator retracts (for MIN or MAX
    into a keyed sink, or anything written as a changelog); `kinds`: that operator's rows carry their change kinds
    (UPDATE_BEFORE, UPDATE_AFTER), which a print sink shows.
    """
    rewriter = _Rewriter(_lower(watermarks), streaming, _lower(proctimes), {name.lower() for name in lookups})
    rewriter.changes = (changelog, kinds)
    if (changelog or retracting) and isinstance(query, exp.Select):
        query = query if owned else query.copy()
        owned = True
        rewriter.changelog_aggregation(query, retracting, keyed=not changelog, kinds=kinds)
    sql = spark_sql(rewriter.query(query, owned=owned))  # the rewritten tree is ours
    return SparkQuery(
        sql, rewriter.deduplications, rewriter.temporal_joins, rewriter.over_aggregations, rewriter.aggregations
    )


def spark_sql(tree: exp.Expr) -> str:
    """Spark SQL text of a rewritten tree, which is ours to change. An argument sqlglot's Spark generator would drop
    (with a log line only) is an error: the query would compute something else than it says."""
    try:
        return tree.sql(dialect="spark", copy=False, unsupported_level=ErrorLevel.RAISE)
    except UnsupportedError as error:
        raise TranspileError(f"This cannot run on Spark as written: {error}") from None


def to_spark_sql(query: exp.Query, *, watermarks: Mapping[str, str] | None = None, streaming: bool = True) -> str:
    """Spark SQL text computing what the Flink `query` computes (see `transpile`)."""
    return spark_sql(transpile(query, watermarks=watermarks, streaming=streaming))


def transpile(query: exp.Query, *, watermarks: Mapping[str, str] | None = None, streaming: bool = True) -> exp.Query:
    """The Spark-dialect tree for a Flink query; `query` itself is not modified.

    `watermarks` maps a table or view name to its watermarked (rowtime) column, as registered for Spark;
    windows over a named relation must then use that column, as Flink requires a time attribute.
    `streaming` rejects what Spark Structured Streaming cannot run (OVER windows outside an OVER aggregation,
    Top-N or deduplication, DISTINCT aggregates other than COUNT) and rewrites COUNT(DISTINCT x), which Spark
    streams only as size(collect_set(x)).
    """
    rewriter = _Rewriter(_lower(watermarks), streaming, {})
    return rewriter.query(query)


def _lower(names: Mapping[str, str] | None) -> dict[str, str]:
    return {k.lower(): v.lower() for k, v in (names or {}).items()}


_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _bottom_up(tree: exp.Expr, fun: Callable[[exp.Expr], exp.Expr]) -> exp.Expr:
    """Apply `fun` to every node, children before parents, so a replacement is built from rewritten parts."""
    root = tree
    for node in reversed(list(tree.walk(bfs=False))):
        new = fun(node)
        if new is node:
            continue
        if node is root:
            root = new
        else:
            node.replace(new)
    return root


def _counted_set(node: exp.Expr) -> exp.Expr | None:
    """The collect_set of `size(collect_set(x))`, COUNT(DISTINCT x) as it streams (`_Rewriter.count_distinct`)."""
    if call_name(node) == "SIZE" and isinstance(node, exp.Anonymous) and len(node.expressions) == 1:
        inner = node.expressions[0]
        if call_name(inner) == "COLLECT_SET":
            return inner
    return None


_Pass = Callable[[exp.Select], object]  # what a pass returns is not used


@dataclass
class _Operators:
    """The stateful operators found in one query, transpiled once the walks over it are done."""

    deduplications: list[Deduplication] = field(default_factory=list)
    overs: list[OverAggregation] = field(default_factory=list)


class _Rewriter:
    """One transpilation: the watermarked columns by relation and whether the query streams."""

    def __init__(
        self, watermarks: dict[str, str], streaming: bool, proctimes: dict[str, str], lookups: set[str] | None = None
    ) -> None:
        self.watermarks = watermarks
        self.lookups = lookups or set()
        self.streaming = streaming
        self.proctimes = proctimes
        self.deduplications: list[Deduplication] = []
        self.temporal_joins: list[TemporalJoin] = []
        self.over_aggregations: list[OverAggregation] = []
        self.aggregations: list[ChangelogAggregation] = []
        # (changelog, kinds): a Top-N of inserts emits each record's changes, with their kinds (see `TopN`)
        self.changes = (False, False)
        self.flink = Flink()

    def ranked_aggregation(self, deduplication: Deduplication, select: exp.Select) -> None:
        """A Top-N over the GROUP BY `select`: one operator aggregates and ranks (Spark runs one per query)."""
        aggregation = extract_aggregation(select, len(self.aggregations) + 1)
        assert aggregation is not None  # `select` aggregates (`connector.planning.operators.top_n`)
        named = {name.lower() for _, name in aggregation.outputs}
        ranked = [name for name, _ in deduplication.top.order] if deduplication.top is not None else []
        if not aggregation.plain or not {k.lower() for k in [*deduplication.keys, *ranked]} <= named:
            raise TranspileError(
                "A Top-N over a GROUP BY needs the GROUP BY to select its keys and aggregates as they are (no "
                "expressions over them, no HAVING), with the PARTITION BY and ORDER BY columns among them.",
                select,
            )
        grouped = {n.lower() for c, n in aggregation.outputs if c.startswith("__agg_k")}
        if not {k.lower() for k in deduplication.keys} <= grouped:
            raise TranspileError("A Top-N over a GROUP BY must be PARTITIONED BY keys of the GROUP BY.", select)
        aggregation.sql = spark_sql(self.query(aggregation.select, owned=True))
        deduplication.aggregation = aggregation

    def record_changes(self, deduplication: Deduplication, outer: exp.Select) -> None:
        """A Top-N of inserts written as a changelog or printed: each record's changes, with their kinds selected by
        `outer` when printed."""
        changelog, kinds = self.changes
        top = deduplication.top
        if not changelog or top is None or top.aggregated is not None:
            return
        top.changelog, top.kinds = True, kinds
        if kinds and not any(isinstance(s, exp.Star) for s in outer.selects):
            outer.select(exp.column(UPDATE_BEFORE_COLUMN), exp.column(UPDATE_AFTER_COLUMN), copy=False)

    def changelog_aggregation(
        self, select: exp.Select, retracting: bool = False, keyed: bool = False, kinds: bool = False
    ) -> None:
        """Cut the GROUP BY of `select` out into a changelog aggregation's view (when it aggregates)."""
        aggregation = extract_aggregation(select, len(self.aggregations) + 1, retracting, keyed, kinds)
        if aggregation is not None:
            self.aggregations.append(aggregation)
            aggregation.sql = spark_sql(self.query(aggregation.select, owned=True))

    def query(self, query: exp.Query, owned: bool = False) -> exp.Query:
        """`query` rewritten for Spark: each pass of `streaming_passes` (a streaming query's) walks every SELECT
        from the top, then the stateful operators found are transpiled as queries of their own, then each pass of
        `spark_passes` walks every SELECT from the innermost, and last every expression is rewritten bottom-up."""
        tree = query if owned else query.copy()
        found = _Operators()
        for walk in self.streaming_passes(found) if self.streaming else ():
            for select in list(tree.find_all(exp.Select)):
                for rewrite in walk:
                    rewrite(select)
        self.reject_unsupported(tree)
        for over in found.overs:
            over.sql = spark_sql(self.query(over.select))
        self.over_aggregations.extend(found.overs)
        for deduplication in found.deduplications:
            deduplication.sql = spark_sql(self.query(deduplication.select))
        self.deduplications.extend(found.deduplications)
        for select in reversed(list(tree.find_all(exp.Select))):
            for rewrite in self.spark_passes():
                rewrite(select)
        result = _bottom_up(tree, self.expression)
        assert isinstance(result, exp.Query)
        return result

    def streaming_passes(self, found: _Operators) -> tuple[tuple[_Pass, ...], ...]:
        """The rewrites of a streaming query's SELECTs, in order; each tuple is one walk over them. Window Top-N
        and window joins read the window TVFs as written, which exposing the windows changes; the stateful
        operators are cut out of what remains."""
        return (
            (rewrite_window_ranking, rewrite_window_joins),
            (expose_windows, expose_aggregated_windows),
            (lambda select: self.stateful_operators(select, found),),
        )

    def spark_passes(self) -> tuple[_Pass, ...]:
        """The rewrites of every SELECT into what Spark runs, in order, inner SELECTs first."""
        return (
            lambda select: rewrite_window_tvfs(select, self.watermarks),
            lambda select: rewrite_group_windows(select, self.watermarks),
            self.unnest,
            self.comma_joins,
            self.table_functions,
        )

    def stateful_operators(self, select: exp.Select, found: _Operators) -> None:
        """Cut the stateful operators of `select` out into views of their own: an event-time temporal join, a
        deduplication or Top-N, an OVER aggregation."""
        if any(select.root() is over.select for over in found.overs):
            return  # cut out into an OVER aggregation's view: transpiled on its own
        temporal = extract_temporal(select, self.watermarks, len(self.temporal_joins) + 1)
        if temporal is not None:
            self.temporal_joins.append(temporal)
        number = len(self.deduplications) + len(found.deduplications) + 1
        deduplication = extract(select, self.proctimes, number) or extract_distinct(select, number)
        if deduplication is not None:
            found.deduplications.append(deduplication)
            self.record_changes(deduplication, select)
            if deduplication.top is not None and deduplication.top.aggregated is not None:
                self.ranked_aggregation(deduplication, deduplication.top.aggregated)
        number = len(self.over_aggregations) + len(found.overs) + 1
        over = extract_over(select, self.watermarks, self.proctimes, number)
        if over is not None:
            found.overs.append(over)

    # -- constructs Spark cannot run ---------------------------------------------------------------------

    def reject_unsupported(self, query: exp.Query) -> None:
        for node in query.walk():
            if isinstance(node, exp.Anonymous) and call_name(node) == "CURRENT_WATERMARK":
                raise TranspileError(
                    "CURRENT_WATERMARK() has no Spark equivalent: Spark exposes no per-row watermark; late rows "
                    "are dropped by the windowed aggregation itself.",
                    node,
                )
            if isinstance(node, exp.Anonymous) and call_name(node) in (
                "TUMBLE_PROCTIME",
                "HOP_PROCTIME",
                "SESSION_PROCTIME",
            ):
                raise TranspileError(
                    f"{call_name(node)}() (a processing-time attribute of a group window) has no Spark equivalent; "
                    "use current_timestamp() in a later query instead.",
                    node,
                )
            looked_up = isinstance(node, exp.Table) and node.name.lower() in self.lookups
            if isinstance(node, exp.Table) and node.args.get("version") is not None and not looked_up:
                raise TranspileError(
                    "FOR SYSTEM_TIME AS OF (temporal / lookup join) has no Spark Structured Streaming "
                    "equivalent; join with a static table instead (a stream-static join reads its latest "
                    "version every micro-batch).",
                    node,
                )
            if (
                self.streaming
                and isinstance(node, exp.Join)
                and node.side in ("LEFT", "RIGHT", "FULL")
                and not isinstance(node.this, (exp.Unnest, exp.Lateral))
            ):
                self.reject_regular_outer_join(node)
            if isinstance(node, exp.MatchRecognize):
                raise TranspileError("MATCH_RECOGNIZE is not supported by Spark SQL.", node)
            if self.streaming and isinstance(node, exp.Window):
                raise TranspileError(
                    f"{flink_sql(node.this)} OVER a window is not supported here: COUNT, SUM, AVG, MIN and MAX are "
                    "(an OVER aggregation in a SELECT list), and ROW_NUMBER in a Top-N or deduplication "
                    "(SELECT ... FROM (SELECT ..., ROW_NUMBER() OVER (...) AS rn FROM t) WHERE rn <= N).",
                    node,
                )
            if (
                self.streaming
                and isinstance(node, exp.Distinct)
                and isinstance(node.parent, exp.AggFunc)
                and not isinstance(node.parent, exp.Count)
            ):
                raise TranspileError(
                    f"{node.parent.sql_name()}(DISTINCT ...) is not supported by Spark Structured Streaming; "
                    "only COUNT(DISTINCT ...) is rewritten (to size(collect_set(...))).",
                    node.parent,
                )

    # -- joins -------------------------------------------------------------------------------------------

    def reject_regular_outer_join(self, join: exp.Join) -> None:
        """Flink's regular outer join of two streams emits a NULL-padded row, then retracts it when a match
        arrives. Spark streams outer joins only as interval joins, whose condition bounds the time columns
        (watermarked) of both sides, so that a NULL-padded row is final when the watermark passes."""
        if isinstance(join.this, exp.Table) and join.this.name.lower() in self.lookups:
            return  # a lookup join: a stream-static join, which Spark streams as a LEFT join too
        if join.args.get("on") is not None and is_window_join(join.args["on"]):
            return  # the windows' equality ends each row's wait (`connector.planning.operators.window_joins`)
        select = join.find_ancestor(exp.Select)
        relations = [select.args["from_"].this, *(j.this for j in select.args.get("joins") or [])] if select else []
        rowtimes = {
            r.alias_or_name.lower(): self.watermarks.get(r.name.lower())
            for r in relations
            if isinstance(r, exp.Table)
        }
        on = join.args.get("on")
        bounded = {
            c.table.lower()
            for c in (on.find_all(exp.Column) if on is not None else [])
            if c.table and rowtimes.get(c.table.lower()) == c.name.lower()
        }
        if len(bounded) < 2:
            raise TranspileError(
                f"A regular {join.side} JOIN of two streams is not supported: Flink emits the NULL-padded row and "
                "retracts it when a match arrives, which Spark Structured Streaming cannot do. Spark streams "
                "outer joins as interval joins: give both tables a WATERMARK and bound their time columns in the "
                "ON clause, e.g. AND b.ts BETWEEN a.ts AND a.ts + INTERVAL '1' HOUR.",
                join,
            )


    def comma_joins(self, select: exp.Select) -> None:
        """`FROM a, b WHERE a.id = b.id ...` (a cross join, as Flink's docs write interval joins) becomes
        `FROM a JOIN b ON TRUE WHERE ...`: the same rows, but an inner join, into which Spark's optimizer moves
        the WHERE conditions; Spark's stream-stream join refuses the cross join type."""
        for join in select.args.get("joins") or []:
            comma = join.args.get("kind") == "CROSS" and join.args.get("on") is None and not join.args.get("using")
            if comma and not isinstance(join.this, (exp.Unnest, exp.Lateral)):
                join.set("kind", None)
                join.set("on", exp.true())

    # -- table functions ---------------------------------------------------------------------------------

    def table_functions(self, select: exp.Select) -> None:
        """`LATERAL TABLE(f(x))` -> Spark's `LATERAL f(x)` (a Python UDTF). Spark streams no outer lateral join, so
        `LEFT JOIN LATERAL TABLE(f(x)) ON TRUE` calls the variant of f that yields a row of NULLs where f yields
        none, in an inner lateral join: Flink's rows."""
        for join in select.args.get("joins") or []:
            lateral = join.this
            if not (isinstance(lateral, exp.Lateral) and isinstance(lateral.this, exp.TableFromRows)):
                continue
            call = lateral.this.this
            lateral.set("this", call)
            if str(join.args.get("side") or "").upper() == "LEFT":
                on = join.args.get("on")
                if not (isinstance(on, exp.Boolean) and on.this is True):
                    raise TranspileError("LEFT JOIN LATERAL TABLE(...) supports only ON TRUE, as in Flink.", on or join)
                call.set("this", python_udfs.outer_name(call.name))
                join.set("side", None)
                join.set("on", None)
                join.set("kind", "CROSS")

    # -- UNNEST ------------------------------------------------------------------------------------------

    def unnest(self, select: exp.Select) -> None:
        kept: list[exp.Join] = []
        for join in select.args.get("joins") or []:
            if isinstance(join.this, exp.Unnest):
                select.append("laterals", self.lateral_view(join, join.this))
            elif select.args.get("laterals"):
                raise TranspileError(
                    "A join after CROSS JOIN UNNEST is not supported in Spark (LATERAL VIEW comes after all "
                    "joins): move the UNNEST last.",
                    join,
                )
            else:
                kept.append(join)
        select.set("joins", kept or None)

    def lateral_view(self, join: exp.Join, unnest: exp.Unnest) -> exp.Lateral:
        on = join.args.get("on")
        outer = str(join.args.get("side") or "").upper() == "LEFT"
        if on is not None and not (isinstance(on, exp.Boolean) and on.this is True):
            raise TranspileError("JOIN UNNEST(...) supports only ON TRUE.", on)
        if len(unnest.expressions) != 1:
            raise TranspileError(
                "UNNEST of several arrays at once is not supported; unnest one array per join.", unnest
            )
        array = unnest.expressions[0]
        alias = unnest.args.get("alias")
        columns = list(alias.columns) if alias else []
        ordinality = unnest.args.get("offset")
        if ordinality:
            if isinstance(ordinality, exp.Identifier) and len(columns) == 1:
                columns.append(ordinality)
            if len(columns) != 2:
                raise TranspileError(
                    "UNNEST ... WITH ORDINALITY is supported for arrays of scalars: AS t(value, ord).", unnest
                )
            element, index = exp.to_identifier("__e"), exp.to_identifier("__i")
            numbered = exp.Lambda(
                this=fn(
                    "struct",
                    exp.column(element),
                    exp.Add(this=exp.column(index), expression=exp.Literal.number(1)),
                ),
                expressions=[element, index],
            )
            generator: exp.Expr = fn("inline", fn("transform", array, numbered))
        elif len(columns) >= 2:
            generator = fn("inline", array)
        else:
            generator = exp.Explode(this=array)
        table_alias = exp.TableAlias(
            this=(alias.this if alias and alias.this else exp.to_identifier("__unnest")), columns=columns
        )
        return exp.Lateral(this=generator, view=True, outer=outer, alias=table_alias)

    # -- expressions -------------------------------------------------------------------------------------

    def expression(self, node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Identifier) and not node.quoted and not _PLAIN_NAME.fullmatch(node.name):
            node.set("quoted", True)  # Flink's unquoted names may hold '$' (EXPR$0), Spark's may not
            return node
        if isinstance(node, exp.Table):
            return self.table(node)
        if isinstance(node, (exp.Cast, exp.TryCast)) and isinstance(node.args.get("to"), exp.DataType):
            return spark_cast(node)
        if isinstance(node, exp.Interval):
            return spark_interval(node)
        if isinstance(node, exp.Bracket):
            return self.subscript(node)
        if isinstance(node, exp.Column) and (call := no_paren_call(node)) is not None:
            return call
        if isinstance(node, exp.Count) and isinstance(node.this, exp.Distinct) and self.streaming:
            return self.count_distinct(node.this)
        if isinstance(node, exp.Filter) and _counted_set(node.this) is not None:
            # COUNT(DISTINCT x) FILTER (WHERE c): the filter belongs to the aggregate, collect_set, not to size
            counted = _counted_set(node.this)
            assert counted is not None
            return fn("size", exp.Filter(this=counted, expression=node.expression))
        return spark_function(node)

    def table(self, node: exp.Table) -> exp.Table:
        node.set("catalog", None)
        node.set("db", None)
        node.set("hints", None)
        node.set("version", None)  # only a lookup join's is left (`reject_unsupported`): Spark reads it per batch
        return node

    def subscript(self, node: exp.Bracket) -> exp.Expr:
        """Flink `a[i]` is 1-based on arrays and a key lookup on maps, NULL when absent: try_element_at."""
        if len(node.expressions) != 1:
            raise TranspileError("Subscripts take exactly one index.", node)
        (index,) = exp.apply_index_offset(node.this, node.expressions, self.flink.INDEX_OFFSET, self.flink)
        return fn("try_element_at", node.this, index)

    def count_distinct(self, distinct: exp.Distinct) -> exp.Expr:
        values = distinct.expressions
        if len(values) == 1:
            element: exp.Expr = values[0]
        else:
            present = exp.and_(*[exp.Not(this=exp.Is(this=v.copy(), expression=exp.Null())) for v in values])
            element = exp.Case(ifs=[exp.If(this=present, true=fn("struct", *values))])
        return fn("size", fn("collect_set", element))
