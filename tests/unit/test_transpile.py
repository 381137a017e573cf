"""Flink queries transpiled to Spark SQL as text, without Spark: the caller's tree left as it was, durations and
watermark delays, what the transpiler refuses and where it points, deduplications and Top-N as ranked views, outer
window joins. (Transpiled queries run in Spark in tests/integration/test_transpiled_results.py.)"""

from __future__ import annotations

import re

import pytest
from sqlglot import exp
from support.queries import expression, parse, spark_sql

from connector.planning.transpile import to_spark_query, to_spark_sql, transpile
from connector.sql.dialect.flink import Flink
from connector.sql.rewrite.intervals import spark_duration, watermark_delay
from connector.sql.rewrite.nodes import TranspileError


def test_the_callers_tree_is_left_unchanged() -> None:
    query = parse(
        "SELECT SPLIT_INDEX(s, '.', 0), arr[1] FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTE))"
    )
    before = query.sql(dialect=Flink)

    transpile(query)

    assert query.sql(dialect=Flink) == before


# -- durations and watermarks ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flink_interval", "duration"),
    [
        ("INTERVAL '10' MINUTES", "10 minutes"),
        ("INTERVAL '1' MINUTE", "1 minute"),
        ("INTERVAL '90' SECOND", "90 seconds"),
        ("INTERVAL '0.001' SECOND", "1 millisecond"),
        ("INTERVAL '2' DAYS", "2 days"),
        ("INTERVAL '1:30' HOUR TO MINUTE", "90 minutes"),
        ("INTERVAL '1 12:00:00' DAY TO SECOND", "36 hours"),
    ],
)
def test_spark_duration(flink_interval: str, duration: str) -> None:
    assert spark_duration(expression(flink_interval)) == duration


@pytest.mark.parametrize(
    ("strategy", "delay"),
    [
        ("ts", "0 seconds"),
        ("ts - INTERVAL '5' SECOND", "5 seconds"),
        ("ts - INTERVAL '0.001' SECOND", "1 millisecond"),
        ("`ts` - INTERVAL '1' MINUTES", "1 minute"),
    ],
)
def test_watermark_delay(strategy: str, delay: str) -> None:
    assert watermark_delay(expression(strategy), "ts") == delay


def test_watermark_strategies_spark_cannot_express_are_rejected() -> None:
    with pytest.raises(TranspileError, match="year-month interval"):
        watermark_delay(expression("ts - INTERVAL '1' MONTH"), "ts")
    with pytest.raises(TranspileError, match="Watermark strategy"):
        watermark_delay(expression("other_ts"), "ts")


# -- errors --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flink_sql", "message", "construct"),
    [
        ("SELECT CURRENT_WATERMARK(ts) FROM t", "CURRENT_WATERMARK", "CURRENT_WATERMARK(ts)"),
        (
            "SELECT * FROM orders AS o JOIN rates FOR SYSTEM_TIME AS OF o.proc AS r ON o.c = r.c",
            "FOR SYSTEM_TIME AS OF",
            "rates FOR SYSTEM_TIME AS OF o.proc AS r",
        ),
        (
            "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY id ORDER BY ts) AS rn FROM t) WHERE rn = 2",
            "Top-N is supported with its rank bounded alone",
            "ROW_NUMBER() OVER (PARTITION BY id ORDER BY ts)",
        ),
        ("SELECT SUM(DISTINCT x) FROM t", "SUM(DISTINCT", "SUM(DISTINCT x)"),
        ("SELECT CAST(s AS TIME) FROM t", "CAST to TIME", "CAST(s AS TIME)"),
        (
            "SELECT TUMBLE_START(ts, INTERVAL '1' MINUTE) FROM t",
            "matching GROUP BY TUMBLE",
            "TUMBLE_START(ts, INTERVAL '1' MINUTE)",
        ),
        (
            "SELECT TUMBLE_END(ts, INTERVAL '5' MINUTE) FROM t GROUP BY TUMBLE(ts, INTERVAL '1' MINUTE)",
            "must repeat the arguments",
            "TUMBLE_END(ts, INTERVAL '5' MINUTE)",
        ),
        (
            "SELECT TUMBLE_PROCTIME(ts, INTERVAL '1' MINUTE) FROM t GROUP BY TUMBLE(ts, INTERVAL '1' MINUTE)",
            "processing-time",
            "TUMBLE_PROCTIME(ts, INTERVAL '1' MINUTE)",
        ),
        (
            "SELECT * FROM TABLE(SESSION(TABLE t, DESCRIPTOR(ts), INTERVAL '5' MINUTES))",
            "SESSION windows can only be aggregated",
            None,
        ),
        (
            "SELECT item, COUNT(*) FROM TABLE(SESSION(TABLE t, DESCRIPTOR(ts), INTERVAL '5' MINUTES))"
            " GROUP BY window_start, window_end, item",
            "exactly its PARTITION BY keys",
            "GROUP BY window_start, window_end, item",
        ),
        (
            "SELECT * FROM TABLE(CUMULATE(TABLE t, DESCRIPTOR(ts), INTERVAL '3' MINUTES, INTERVAL '10' MINUTES))",
            "divides the window size",
            None,
        ),
        (
            "SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MONTH))",
            "year-month interval",
            "INTERVAL '1' MONTH",
        ),
        (
            "SELECT * FROM t CROSS JOIN UNNEST(arr) AS u(x) JOIN d ON d.x = u.x",
            "move the UNNEST last",
            "JOIN d ON d.x = u.x",
        ),
        (
            """SELECT JSON_VALUE(j, '$.a' ERROR ON ERROR) FROM t""",
            "ERROR ON",
            "JSON_VALUE(j, '$.a' ERROR ON ERROR)",
        ),
        ("SELECT TO_TIMESTAMP_LTZ(n, 9) FROM t", "precision", "TO_TIMESTAMP_LTZ(n, 9)"),
    ],
)
def test_unsupported_constructs_are_reported_at_their_node(flink_sql: str, message: str, construct: str | None) -> None:
    query = parse(flink_sql)

    with pytest.raises(TranspileError, match=re.escape(message)) as caught:
        transpile(query)

    node = caught.value.node
    assert node is not None
    assert node.meta.get("line") is not None or any(n.meta.get("line") for n in node.walk())
    if construct is not None:
        assert node.sql(dialect=Flink) == construct


def test_window_time_column_must_be_the_watermarked_attribute() -> None:
    query = parse("SELECT * FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(proc), INTERVAL '1' MINUTE))")

    with pytest.raises(TranspileError, match="watermarked time attribute of 'Bid' \\(`bidtime`\\)") as caught:
        transpile(query, watermarks={"bid": "bidtime"})

    assert caught.value.node is not None
    assert caught.value.node.sql(dialect=Flink) == "proc"


def test_batch_mode_keeps_over_windows_and_distinct_aggregates() -> None:
    flink_sql = "SELECT SUM(DISTINCT x), ROW_NUMBER() OVER (ORDER BY x) FROM t"

    assert spark_sql(flink_sql, streaming=False) == "SELECT SUM(DISTINCT x), ROW_NUMBER() OVER (ORDER BY x) FROM t"


DEDUP = (
    "SELECT id, v FROM (SELECT id, v, ROW_NUMBER() OVER (PARTITION BY id ORDER BY pt {order}) AS rn FROM src) {where}"
)


def test_deduplication_becomes_a_deduplicated_view() -> None:
    query = to_spark_query(parse(DEDUP.format(order="ASC", where="WHERE rn = 1")), proctimes={"src": "pt"})

    assert query.sql == "SELECT id, v FROM __dedup_1"
    [deduplication] = query.deduplications
    assert (deduplication.view, deduplication.sql, deduplication.keys) == ("__dedup_1", "SELECT id, v FROM src", ["id"])


def test_a_top_n_becomes_a_ranked_view_ordered_by_columns_the_outer_query_need_not_select() -> None:
    query = to_spark_query(parse(DEDUP.format(order="DESC", where="WHERE rn <= 3")), proctimes={})

    assert query.sql == "SELECT id, v, __deleted FROM __dedup_1"
    [ranked] = query.deduplications
    assert ranked.sql == "SELECT id, v, pt AS __topn_order_0 FROM src" and ranked.keys == ["id"]
    assert ranked.top is not None
    assert (ranked.top.limit, ranked.top.order, ranked.top.rank_selected) == (3, [("__topn_order_0", True)], False)


@pytest.mark.parametrize(
    ("proctimes", "order", "expected"),
    [({"src": "pt"}, "DESC", ([], True)), ({}, "ASC", ([("__topn_order_0", False)], False))],
    ids=["last-row-by-arrival", "first-row-by-another-column"],
)
def test_a_deduplication_that_updates_its_key_becomes_a_top_1(
    proctimes: dict[str, str], order: str, expected: tuple[list[tuple[str, bool]], bool]
) -> None:
    query = to_spark_query(parse(DEDUP.format(order=order, where="WHERE rn = 1")), proctimes=proctimes)

    [ranked] = query.deduplications
    assert ranked.top is not None and ranked.top.limit == 1 and ranked.keys == ["id"]
    assert (ranked.top.order, ranked.top.newest_first) == expected


@pytest.mark.parametrize(
    ("order", "where", "proctimes", "message"),
    [
        ("ASC", "WHERE rn = 2", {"src": "pt"}, "Top-N is supported with its rank bounded alone"),
        ("ASC", "WHERE rn <= 3 AND v > 1", {"src": "pt"}, "Top-N is supported with its rank bounded alone"),
    ],
    ids=["rank-two", "top-n-filtered"],
)
def test_rankings_spark_cannot_run_are_refused(
    order: str, where: str, proctimes: dict[str, str], message: str
) -> None:
    with pytest.raises(TranspileError, match=re.escape(message)):
        to_spark_query(parse(DEDUP.format(order=order, where=where)), proctimes=proctimes)


def test_an_argument_sparks_generator_would_drop_is_an_error_not_a_log_line() -> None:
    """sqlglot's Spark generator logs and drops what Spark cannot express (TRUNCATE's decimals, before kafka-sql
    rewrote it, became CAST(x AS BIGINT) with a log line); the transpiler refuses such a tree instead."""
    from connector.planning.transpile import spark_sql

    dropped = exp.select(exp.Trunc(this=exp.column("x"), decimals=exp.Literal.number(2))).from_("t")
    with pytest.raises(TranspileError, match=r"cannot run on Spark as written: .*decimals"):
        spark_sql(dropped)
    assert spark_sql(exp.select(exp.Trunc(this=exp.column("x"))).from_("t")) == "SELECT CAST(x AS BIGINT) FROM t"


WINDOWED_ROWS = "(SELECT * FROM TABLE({kind}(TABLE {table}, DESCRIPTOR(ts), {sizes})))"


@pytest.mark.parametrize(
    ("kind", "sizes", "joined"),
    [
        ("TUMBLE", "INTERVAL '1' MINUTE", True),
        ("HOP", "INTERVAL '1' MINUTE, INTERVAL '2' MINUTE", True),
        ("CUMULATE", "INTERVAL '1' MINUTE, INTERVAL '2' MINUTE", False),
    ],
)
def test_an_outer_window_join_compares_the_sides_windows_where_rows_carry_them(
    kind: str, sizes: str, joined: bool
) -> None:
    """TUMBLE and HOP rows carry their window (`__w`), whose equality lets Spark stream the outer join; a CUMULATE
    row's `__w` is its own, so that outer join stays refused as a regular one."""
    left, right = (WINDOWED_ROWS.format(kind=kind, table=t, sizes=sizes) for t in ("a", "b"))
    query = parse(
        f"SELECT L.k, R.v FROM {left} L LEFT JOIN {right} R ON L.k = R.k AND L.window_start = R.window_start "
        "AND L.window_end = R.window_end"
    )
    if not joined:
        with pytest.raises(TranspileError, match="A regular LEFT JOIN of two streams is not supported"):
            to_spark_sql(query, watermarks={"a": "ts", "b": "ts"})
        return
    sql = to_spark_sql(query, watermarks={"a": "ts", "b": "ts"})
    assert sql.endswith("AND L.window_end = R.window_end) AND L.__w = R.__w")
    assert sql.count("SELECT * EXCEPT (__w), __w FROM") == 2


def test_a_ranking_of_session_window_rows_is_refused_with_what_spark_can_do() -> None:
    """Spark merges session windows as rows arrive: their rows can only be aggregated, not ranked."""
    query = parse(
        "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY v) AS rn "
        "FROM TABLE(SESSION(TABLE src PARTITION BY k, DESCRIPTOR(ts), INTERVAL '1' MINUTE))) WHERE rn <= 2"
    )
    with pytest.raises(TranspileError, match=re.escape("SESSION windows can only be aggregated in Spark")):
        to_spark_query(query, watermarks={"src": "ts"}, proctimes={})
