"""Flink queries transpiled to Spark SQL compute the results Flink's documentation shows.

The window examples and their result tables are Flink's own: the Bid table of
docs/content/docs/dev/table/sql/queries/window-tvf.md (TUMBLE, HOP, CUMULATE, offset), the Bid table with
supplier_id of .../window-agg.md (SESSION with and without PARTITION BY), and the SESSION section of
window-tvf.md (Flink 1.20+). Result tables are kept verbatim and compared row for row; timestamps are shown
as Flink shows TIMESTAMP(3) in those docs (trailing zero seconds dropped).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.streaming import StreamingQuery
from support.queries import spark_sql

BID = [
    ("2020-04-15 08:05:00", "4.00", "C", "supplier1"),
    ("2020-04-15 08:07:00", "2.00", "A", "supplier1"),
    ("2020-04-15 08:09:00", "5.00", "D", "supplier2"),
    ("2020-04-15 08:11:00", "3.00", "B", "supplier2"),
    ("2020-04-15 08:13:00", "1.00", "E", "supplier1"),
    ("2020-04-15 08:17:00", "6.00", "F", "supplier2"),
]
# window-tvf.md, SESSION section: a different Bid table.
ITEM_BID = [
    ("2020-04-15 08:07:00", "4.00", "A"),
    ("2020-04-15 08:06:00", "2.00", "A"),
    ("2020-04-15 08:09:00", "5.00", "B"),
    ("2020-04-15 08:08:00", "3.00", "A"),
    ("2020-04-15 08:17:00", "1.00", "B"),
]


def shown(value: object) -> object:
    """A value as Flink's docs print it: TIMESTAMP(3) without trailing zero seconds, DECIMAL as text."""
    if isinstance(value, dt.datetime):
        if value.second == 0 and value.microsecond == 0:
            return value.strftime("%Y-%m-%d %H:%M")
        return value.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
    if isinstance(value, Decimal):
        return str(value)
    return value


def as_wall_clock(df: DataFrame) -> DataFrame:
    """TIMESTAMP (LTZ) columns as the session's wall-clock time (the session time zone is UTC)."""
    return df.select(
        *[
            F.col(f.name).cast("timestamp_ntz") if isinstance(f.dataType, T.TimestampType) else F.col(f.name)
            for f in df.schema.fields
        ]
    )


def table(df: DataFrame) -> tuple[list[str], list[tuple[object, ...]]]:
    rows = as_wall_clock(df).collect()
    return df.columns, sorted(tuple(shown(v) for v in row) for row in rows)


def flink_table(text: str) -> tuple[list[str], list[tuple[object, ...]]]:
    """A result table as printed by Flink's SQL client."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip().startswith("|")]
    header, *rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]
    return header, sorted(tuple(row) for row in rows)


def run(spark: SparkSession, flink_sql: str) -> tuple[list[str], list[tuple[object, ...]]]:
    return table(spark.sql(spark_sql(flink_sql)))


@pytest.fixture(scope="module")
def bids(spark: SparkSession) -> None:
    """Bid, SupplierBid and ItemBid as Flink declares them: bidtime TIMESTAMP(3), price DECIMAL(10, 2)."""
    schema = "bidtime TIMESTAMP_NTZ, price DECIMAL(10, 2), item STRING"
    rows = [(dt.datetime.fromisoformat(t), Decimal(p), i, s) for t, p, i, s in BID]
    spark.createDataFrame(rows, schema + ", supplier_id STRING").createOrReplaceTempView("SupplierBid")
    spark.createDataFrame([r[:3] for r in rows], schema).createOrReplaceTempView("Bid")
    items = [(dt.datetime.fromisoformat(t), Decimal(p), i) for t, p, i in ITEM_BID]
    spark.createDataFrame(items, schema).createOrReplaceTempView("ItemBid")


# -- window TVFs ---------------------------------------------------------------------------------------------

TUMBLE_ROWS = """
+------------------+-------+------+------------------+------------------+-------------------------+
|          bidtime | price | item |     window_start |       window_end |             window_time |
+------------------+-------+------+------------------+------------------+-------------------------+
| 2020-04-15 08:05 |  4.00 | C    | 2020-04-15 08:00 | 2020-04-15 08:10 | 2020-04-15 08:09:59.999 |
| 2020-04-15 08:07 |  2.00 | A    | 2020-04-15 08:00 | 2020-04-15 08:10 | 2020-04-15 08:09:59.999 |
| 2020-04-15 08:09 |  5.00 | D    | 2020-04-15 08:00 | 2020-04-15 08:10 | 2020-04-15 08:09:59.999 |
| 2020-04-15 08:11 |  3.00 | B    | 2020-04-15 08:10 | 2020-04-15 08:20 | 2020-04-15 08:19:59.999 |
| 2020-04-15 08:13 |  1.00 | E    | 2020-04-15 08:10 | 2020-04-15 08:20 | 2020-04-15 08:19:59.999 |
| 2020-04-15 08:17 |  6.00 | F    | 2020-04-15 08:10 | 2020-04-15 08:20 | 2020-04-15 08:19:59.999 |
+------------------+-------+------+------------------+------------------+-------------------------+
"""
TUMBLE_AGG = """
+------------------+------------------+-------------+
|     window_start |       window_end | total_price |
+------------------+------------------+-------------+
| 2020-04-15 08:00 | 2020-04-15 08:10 |       11.00 |
| 2020-04-15 08:10 | 2020-04-15 08:20 |       10.00 |
+------------------+------------------+-------------+
"""
HOP_ROWS = """
+------------------+-------+------+------------------+------------------+-------------------------+
|          bidtime | price | item |     window_start |       window_end |             window_time |
+------------------+-------+------+------------------+------------------+-------------------------+
| 2020-04-15 08:05 |  4.00 | C    | 2020-04-15 08:00 | 2020-04-15 08:10 | 2020-04-15 08:09:59.999 |
| 2020-04-15 08:05 |  4.00 | C    | 2020-04-15 08:05 | 2020-04-15 08:15 | 2020-04-15 08:14:59.999 |
| 2020-04-15 08:07 |  2.00 | A    | 2020-04-15 08:00 | 2020-04-15 08:10 | 2020-04-15 08:09:59.999 |
| 2020-04-15 08:07 |  2.00 | A    | 2020-04-15 08:05 | 2020-04-15 08:15 | 2020-04-15 08:14:59.999 |
| 2020-04-15 08:09 |  5.00 | D    | 2020-04-15 08:00 | 2020-04-15 08:10 | 2020-04-15 08:09:59.999 |
| 2020-04-15 08:09 |  5.00 | D    | 2020-04-15 08:05 | 2020-04-15 08:15 | 2020-04-15 08:14:59.999 |
| 2020-04-15 08:11 |  3.00 | B    | 2020-04-15 08:05 | 2020-04-15 08:15 | 2020-04-15 08:14:59.999 |
| 2020-04-15 08:11 |  3.00 | B    | 2020-04-15 08:10 | 2020-04-15 08:20 | 2020-04-15 08:19:59.999 |
| 2020-04-15 08:13 |  1.00 | E    | 2020-04-15 08:05 | 2020-04-15 08:15 | 2020-04-15 08:14:59.999 |
| 2020-04-15 08:13 |  1.00 | E    | 2020-04-15 08:10 | 2020-04-15 08:20 | 2020-04-15 08:19:59.999 |
| 2020-04-15 08:17 |  6.00 | F    | 2020-04-15 08:10 | 2020-04-15 08:20 | 2020-04-15 08:19:59.999 |
| 2020-04-15 08:17 |  6.00 | F    | 2020-04-15 08:15 | 2020-04-15 08:25 | 2020-04-15 08:24:59.999 |
+------------------+-------+------+------------------+------------------+-------------------------+
"""
HOP_AGG = """
+------------------+------------------+-------------+
|     window_start |       window_end | total_price |
+------------------+------------------+-------------+
| 2020-04-15 08:00 | 2020-04-15 08:10 |       11.00 |
| 2020-04-15 08:05 | 2020-04-15 08:15 |       15.00 |
| 2020-04-15 08:10 | 2020-04-15 08:20 |       10.00 |
| 2020-04-15 08:15 | 2020-04-15 08:25 |        6.00 |
+------------------+------------------+-------------+
"""
CUMULATE_ROWS = """
+------------------+-------+------+------------------+------------------+-------------------------+
|          bidtime | price | item |     window_start |       window_end |             window_time |
+------------------+-------+------+------------------+------------------+-------------------------+
| 2020-04-15 08:05 |  4.00 | C    | 2020-04-15 08:00 | 2020-04-15 08:06 | 2020-04-15 08:05:59.999 |
| 2020-04-15 08:05 |  4.00 | C    | 2020-04-15 08:00 | 2020-04-15 08:08 | 2020-04-15 08:07:59.999 |
| 2020-04-15 08:05 |  4.00 | C    | 2020-04-15 08:00 | 2020-04-15 08:10 | 2020-04-15 08:09:59.999 |
| 2020-04-15 08:07 |  2.00 | A    | 2020-04-15 08:00 | 2020-04-15 08:08 | 2020-04-15 08:07:59.999 |
| 2020-04-15 08:07 |  2.00 | A    | 2020-04-15 08:00 | 2020-04-15 08:10 | 2020-04-15 08:09:59.999 |
| 2020-04-15 08:09 |  5.00 | D    | 2020-04-15 08:00 | 2020-04-15 08:10 | 2020-04-15 08:09:59.999 |
| 2020-04-15 08:11 |  3.00 | B    | 2020-04-15 08:10 | 2020-04-15 08:12 | 2020-04-15 08:11:59.999 |
| 2020-04-15 08:11 |  3.00 | B    | 2020-04-15 08:10 | 2020-04-15 08:14 | 2020-04-15 08:13:59.999 |
| 2020-04-15 08:11 |  3.00 | B    | 2020-04-15 08:10 | 2020-04-15 08:16 | 2020-04-15 08:15:59.999 |
| 2020-04-15 08:11 |  3.00 | B    | 2020-04-15 08:10 | 2020-04-15 08:18 | 2020-04-15 08:17:59.999 |
| 2020-04-15 08:11 |  3.00 | B    | 2020-04-15 08:10 | 2020-04-15 08:20 | 2020-04-15 08:19:59.999 |
| 2020-04-15 08:13 |  1.00 | E    | 2020-04-15 08:10 | 2020-04-15 08:14 | 2020-04-15 08:13:59.999 |
| 2020-04-15 08:13 |  1.00 | E    | 2020-04-15 08:10 | 2020-04-15 08:16 | 2020-04-15 08:15:59.999 |
| 2020-04-15 08:13 |  1.00 | E    | 2020-04-15 08:10 | 2020-04-15 08:18 | 2020-04-15 08:17:59.999 |
| 2020-04-15 08:13 |  1.00 | E    | 2020-04-15 08:10 | 2020-04-15 08:20 | 2020-04-15 08:19:59.999 |
| 2020-04-15 08:17 |  6.00 | F    | 2020-04-15 08:10 | 2020-04-15 08:18 | 2020-04-15 08:17:59.999 |
| 2020-04-15 08:17 |  6.00 | F    | 2020-04-15 08:10 | 2020-04-15 08:20 | 2020-04-15 08:19:59.999 |
+------------------+-------+------+------------------+------------------+-------------------------+
"""
CUMULATE_AGG = """
+------------------+------------------+-------------+
|     window_start |       window_end | total_price |
+------------------+------------------+-------------+
| 2020-04-15 08:00 | 2020-04-15 08:06 |        4.00 |
| 2020-04-15 08:00 | 2020-04-15 08:08 |        6.00 |
| 2020-04-15 08:00 | 2020-04-15 08:10 |       11.00 |
| 2020-04-15 08:10 | 2020-04-15 08:12 |        3.00 |
| 2020-04-15 08:10 | 2020-04-15 08:14 |        4.00 |
| 2020-04-15 08:10 | 2020-04-15 08:16 |        4.00 |
| 2020-04-15 08:10 | 2020-04-15 08:18 |       10.00 |
| 2020-04-15 08:10 | 2020-04-15 08:20 |       10.00 |
+------------------+------------------+-------------+
"""
OFFSET_ROWS = """
+------------------+-------+------+------------------+------------------+-------------------------+
|          bidtime | price | item |     window_start |       window_end |             window_time |
+------------------+-------+------+------------------+------------------+-------------------------+
| 2020-04-15 08:05 |  4.00 | C    | 2020-04-15 08:01 | 2020-04-15 08:11 | 2020-04-15 08:10:59.999 |
| 2020-04-15 08:07 |  2.00 | A    | 2020-04-15 08:01 | 2020-04-15 08:11 | 2020-04-15 08:10:59.999 |
| 2020-04-15 08:09 |  5.00 | D    | 2020-04-15 08:01 | 2020-04-15 08:11 | 2020-04-15 08:10:59.999 |
| 2020-04-15 08:11 |  3.00 | B    | 2020-04-15 08:11 | 2020-04-15 08:21 | 2020-04-15 08:20:59.999 |
| 2020-04-15 08:13 |  1.00 | E    | 2020-04-15 08:11 | 2020-04-15 08:21 | 2020-04-15 08:20:59.999 |
| 2020-04-15 08:17 |  6.00 | F    | 2020-04-15 08:11 | 2020-04-15 08:21 | 2020-04-15 08:20:59.999 |
+------------------+-------+------+------------------+------------------+-------------------------+
"""
OFFSET_AGG = """
+------------------+------------------+-------------+
|     window_start |       window_end | total_price |
+------------------+------------------+-------------+
| 2020-04-15 08:01 | 2020-04-15 08:11 |       11.00 |
| 2020-04-15 08:11 | 2020-04-15 08:21 |       10.00 |
+------------------+------------------+-------------+
"""
SESSION_BY_SUPPLIER = """
+------------------+------------------+-------------+-------------+
|     window_start |       window_end | supplier_id | total_price |
+------------------+------------------+-------------+-------------+
| 2020-04-15 08:05 | 2020-04-15 08:09 | supplier1   |        6.00 |
| 2020-04-15 08:09 | 2020-04-15 08:13 | supplier2   |        8.00 |
| 2020-04-15 08:13 | 2020-04-15 08:15 | supplier1   |        1.00 |
| 2020-04-15 08:17 | 2020-04-15 08:19 | supplier2   |        6.00 |
+------------------+------------------+-------------+-------------+
"""
SESSION_ALL_SUPPLIERS = """
+------------------+------------------+-------------+
|     window_start |       window_end | total_price |
+------------------+------------------+-------------+
| 2020-04-15 08:05 | 2020-04-15 08:15 |       15.00 |
| 2020-04-15 08:17 | 2020-04-15 08:19 |        6.00 |
+------------------+------------------+-------------+
"""
SESSION_BY_ITEM = """
+------------------+------------------+------+-------------+
|     window_start |       window_end | item | total_price |
+------------------+------------------+------+-------------+
| 2020-04-15 08:06 | 2020-04-15 08:13 | A    |        9.00 |
| 2020-04-15 08:09 | 2020-04-15 08:14 | B    |        5.00 |
| 2020-04-15 08:17 | 2020-04-15 08:22 | B    |        1.00 |
+------------------+------------------+------+-------------+
"""
SESSION_ALL_ITEMS = """
+------------------+------------------+-------------+
|     window_start |       window_end | total_price |
+------------------+------------------+-------------+
| 2020-04-15 08:06 | 2020-04-15 08:14 |       14.00 |
| 2020-04-15 08:17 | 2020-04-15 08:22 |        1.00 |
+------------------+------------------+-------------+
"""

AGGREGATE = (
    "SELECT window_start, window_end, SUM(price) AS total_price FROM TABLE({}) GROUP BY window_start, window_end"
)

WINDOW_CASES = [
    ("SELECT * FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))", TUMBLE_ROWS),
    (
        "SELECT * FROM TABLE(TUMBLE(DATA => TABLE Bid, TIMECOL => DESCRIPTOR(bidtime), SIZE => INTERVAL '10' MINUTES))",
        TUMBLE_ROWS,
    ),
    (AGGREGATE.format("TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES)"), TUMBLE_AGG),
    (
        "SELECT * FROM TABLE(HOP(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES, INTERVAL '10' MINUTES))",
        HOP_ROWS,
    ),
    (
        "SELECT * FROM TABLE(HOP(DATA => TABLE Bid, TIMECOL => DESCRIPTOR(bidtime), SLIDE => INTERVAL '5' MINUTES,"
        " SIZE => INTERVAL '10' MINUTES))",
        HOP_ROWS,
    ),
    (AGGREGATE.format("HOP(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES, INTERVAL '10' MINUTES)"), HOP_AGG),
    (
        "SELECT * FROM TABLE(CUMULATE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '2' MINUTES, INTERVAL '10' MINUTES))",
        CUMULATE_ROWS,
    ),
    (
        AGGREGATE.format("CUMULATE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '2' MINUTES, INTERVAL '10' MINUTES)"),
        CUMULATE_AGG,
    ),
    (
        "SELECT * FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES, INTERVAL '1' MINUTES))",
        OFFSET_ROWS,
    ),
    (
        AGGREGATE.format("TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES, INTERVAL '1' MINUTES)"),
        OFFSET_AGG,
    ),
    (
        "SELECT window_start, window_end, supplier_id, SUM(price) AS total_price FROM TABLE(SESSION(TABLE SupplierBid"
        " PARTITION BY supplier_id, DESCRIPTOR(bidtime), INTERVAL '2' MINUTES))"
        " GROUP BY window_start, window_end, supplier_id",
        SESSION_BY_SUPPLIER,
    ),
    (AGGREGATE.format("SESSION(TABLE SupplierBid, DESCRIPTOR(bidtime), INTERVAL '2' MINUTES)"), SESSION_ALL_SUPPLIERS),
    (
        "SELECT window_start, window_end, item, SUM(price) AS total_price FROM TABLE(SESSION(TABLE ItemBid"
        " PARTITION BY item, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES)) GROUP BY item, window_start, window_end",
        SESSION_BY_ITEM,
    ),
    (AGGREGATE.format("SESSION(TABLE ItemBid, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES)"), SESSION_ALL_ITEMS),
]


@pytest.mark.usefixtures("bids")
@pytest.mark.parametrize(("flink_sql", "expected"), WINDOW_CASES)
def test_window_tvfs_compute_flinks_documented_results(spark: SparkSession, flink_sql: str, expected: str) -> None:
    assert run(spark, flink_sql) == flink_table(expected)


@pytest.mark.usefixtures("bids")
def test_window_tvf_keeps_window_time_to_the_microsecond(spark: SparkSession) -> None:
    """Spark's window_time is window_end - 1 us (Flink: - 1 ms); they agree at TIMESTAMP(3) precision."""
    flink_sql = (
        "SELECT DISTINCT window_end, window_time"
        " FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))"
    )

    rows = spark.sql(spark_sql(flink_sql, streaming=False)).collect()

    assert {row.window_end - row.window_time for row in rows} == {dt.timedelta(microseconds=1)}


@pytest.mark.usefixtures("bids")
def test_window_tvf_over_a_filtered_subquery_and_an_aliased_relation(spark: SparkSession) -> None:
    flink_sql = """
        SELECT w.window_start, w.window_end, COUNT(*) AS bids
        FROM TABLE(TUMBLE((SELECT * FROM Bid WHERE price > 2), DESCRIPTOR(bidtime), INTERVAL '10' MINUTES)) AS w
        GROUP BY w.window_start, w.window_end
    """

    assert run(spark, flink_sql) == (
        ["window_start", "window_end", "bids"],
        [("2020-04-15 08:00", "2020-04-15 08:10", 2), ("2020-04-15 08:10", "2020-04-15 08:20", 2)],
    )


@pytest.mark.usefixtures("bids")
@pytest.mark.parametrize(
    ("flink_sql", "expected"),
    [
        (
            "SELECT TUMBLE_START(bidtime, INTERVAL '10' MINUTE) AS window_start,"
            " TUMBLE_END(bidtime, INTERVAL '10' MINUTE) AS window_end,"
            " TUMBLE_ROWTIME(bidtime, INTERVAL '10' MINUTE) AS window_time, SUM(price) AS total_price"
            " FROM Bid GROUP BY TUMBLE(bidtime, INTERVAL '10' MINUTE)",
            [
                ("2020-04-15 08:00", "2020-04-15 08:10", "2020-04-15 08:09:59.999", "11.00"),
                ("2020-04-15 08:10", "2020-04-15 08:20", "2020-04-15 08:19:59.999", "10.00"),
            ],
        ),
        (
            "SELECT HOP_START(bidtime, INTERVAL '5' MINUTE, INTERVAL '10' MINUTE) AS window_start,"
            " HOP_END(bidtime, INTERVAL '5' MINUTE, INTERVAL '10' MINUTE) AS window_end, SUM(price) AS total_price"
            " FROM Bid GROUP BY HOP(bidtime, INTERVAL '5' MINUTE, INTERVAL '10' MINUTE)",
            flink_table(HOP_AGG)[1],
        ),
        (
            "SELECT SESSION_START(bidtime, INTERVAL '2' MINUTE) AS window_start,"
            " SESSION_END(bidtime, INTERVAL '2' MINUTE) AS window_end, supplier_id, SUM(price) AS total_price"
            " FROM SupplierBid GROUP BY SESSION(bidtime, INTERVAL '2' MINUTE), supplier_id",
            flink_table(SESSION_BY_SUPPLIER)[1],
        ),
    ],
)
def test_legacy_group_windows(spark: SparkSession, flink_sql: str, expected: list[tuple[object, ...]]) -> None:
    assert run(spark, flink_sql)[1] == sorted(expected)


# -- streaming -----------------------------------------------------------------------------------------------


class BidFiles:
    """A directory of JSON files read as a stream with Flink's Bid watermark (bidtime - 1 second)."""

    def __init__(self, spark: SparkSession, directory: Path, view: str) -> None:
        self.directory = directory
        self.count = 0
        stream = (
            spark.readStream.schema("bidtime TIMESTAMP, price DECIMAL(10, 2), item STRING, supplier_id STRING")
            .option("maxFilesPerTrigger", 1)
            .json(str(directory))
            .withWatermark("bidtime", "1 second")
        )
        stream.createOrReplaceTempView(view)

    def write(self, rows: list[tuple[str, str, str, str]]) -> None:
        self.count += 1
        temporary = self.directory / f".{self.count}.tmp"
        lines = [json.dumps({"bidtime": t, "price": p, "item": i, "supplier_id": s}) for t, p, i, s in rows]
        temporary.write_text("\n".join(lines) + "\n")
        os.replace(temporary, self.directory / f"{self.count:03d}.json")


@pytest.fixture
def bid_stream(spark: SparkSession, tmp_path: Path) -> BidFiles:
    return BidFiles(spark, tmp_path, "BidStream")


@pytest.fixture
def streaming_queries() -> Iterator[list[StreamingQuery]]:
    queries: list[StreamingQuery] = []
    yield queries
    for query in queries:
        query.stop()


def start_append(spark: SparkSession, spark_query: str, name: str, queries: list[StreamingQuery]) -> StreamingQuery:
    query = spark.sql(spark_query).writeStream.outputMode("append").format("memory").queryName(name).start()
    queries.append(query)
    return query


CLOSING_BID = ("2020-04-15 09:00:00", "0.00", "Z", "supplier9")  # moves the watermark past every window


@pytest.mark.slow
def test_streaming_cumulate_emits_each_window_when_the_watermark_passes_its_end(
    spark: SparkSession, bid_stream: BidFiles, streaming_queries: list[StreamingQuery]
) -> None:
    flink_sql = AGGREGATE.format(
        "CUMULATE(TABLE BidStream, DESCRIPTOR(bidtime), INTERVAL '2' MINUTES, INTERVAL '10' MINUTES)"
    )
    query = start_append(
        spark, spark_sql(flink_sql, watermarks={"BidStream": "bidtime"}), "cumulate_out", streaming_queries
    )

    bid_stream.write(BID[:2])
    query.processAllAvailable()
    bid_stream.write(BID[2:3])  # watermark 08:08:59: [08:00, 08:06) and [08:00, 08:08) are complete
    query.processAllAvailable()
    early = table(spark.table("cumulate_out"))[1]
    bid_stream.write(BID[3:])
    bid_stream.write([CLOSING_BID])
    query.processAllAvailable()

    assert early == [("2020-04-15 08:00", "2020-04-15 08:06", "4.00"), ("2020-04-15 08:00", "2020-04-15 08:08", "6.00")]
    assert table(spark.table("cumulate_out")) == flink_table(CUMULATE_AGG)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("window", "expected"),
    [
        ("TUMBLE(TABLE BidStream, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES)", TUMBLE_AGG),
        ("HOP(TABLE BidStream, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES, INTERVAL '10' MINUTES)", HOP_AGG),
        ("SESSION(TABLE BidStream, DESCRIPTOR(bidtime), INTERVAL '2' MINUTES)", SESSION_ALL_SUPPLIERS),
    ],
)
def test_streaming_window_aggregations_in_append_mode(
    spark: SparkSession,
    bid_stream: BidFiles,
    streaming_queries: list[StreamingQuery],
    window: str,
    expected: str,
) -> None:
    query = start_append(spark, spark_sql(AGGREGATE.format(window)), "window_out", streaming_queries)

    bid_stream.write(BID)
    bid_stream.write([CLOSING_BID])
    query.processAllAvailable()

    assert table(spark.table("window_out")) == flink_table(expected)


@pytest.mark.slow
def test_streaming_cascaded_windows_keep_window_time_as_the_time_attribute(
    spark: SparkSession, bid_stream: BidFiles, streaming_queries: list[StreamingQuery]
) -> None:
    """window-agg.md "Cascading Window Aggregation": 5-minute partial sums rolled up into 10-minute windows."""
    first = """
        SELECT window_start AS window_5mintumble_start, window_end AS window_5mintumble_end,
               window_time AS rowtime, SUM(price) AS partial_price
        FROM TABLE(TUMBLE(TABLE BidStream, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES))
        GROUP BY supplier_id, window_start, window_end, window_time
    """
    spark.sql(spark_sql(first)).createOrReplaceTempView("window1")
    second = AGGREGATE.replace("SUM(price)", "SUM(partial_price)").format(
        "TUMBLE(TABLE window1, DESCRIPTOR(rowtime), INTERVAL '10' MINUTES)"
    )
    query = start_append(spark, spark_sql(second), "cascade_out", streaming_queries)

    bid_stream.write(BID)
    bid_stream.write([CLOSING_BID])
    query.processAllAvailable()

    assert table(spark.table("cascade_out")) == flink_table(TUMBLE_AGG)


# -- built-in functions --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flink_expression", "expected"),
    [
        ("SPLIT_INDEX('Hello.World', '.', 1)", "World"),
        ("SPLIT_INDEX('a|b|c', '|', 2)", "c"),
        ("SPLIT_INDEX('a,,b', ',', 1)", ""),
        ("SPLIT_INDEX('a,b', ',', 5)", None),
        ("REGEXP_EXTRACT('foothebar', 'foo(.*?)(bar)', 2)", "bar"),
        ("REGEXP_EXTRACT('foothebar', 'foo(.*?)(bar)')", "foothebar"),
        ("REGEXP_EXTRACT('foothebar', 'x(y)', 1)", None),
        ("DATE_FORMAT(TO_TIMESTAMP_LTZ(1586937900123, 3), 'yyyy-MM-dd HH:mm:ss.SSS')", "2020-04-15 08:05:00.123"),
        ("DATE_FORMAT(TO_TIMESTAMP_LTZ(1586937900, 0), 'yyyy-MM-dd HH:mm:ss')", "2020-04-15 08:05:00"),
        ("DATE_FORMAT(TO_TIMESTAMP_LTZ(1586937900123), 'yyyy-MM-dd HH:mm:ss.SSS')", "2020-04-15 08:05:00.123"),
        ("TO_TIMESTAMP('2020-04-15 08:05:00')", dt.datetime(2020, 4, 15, 8, 5)),
        ("TO_TIMESTAMP('15/04/2020 08:05', 'dd/MM/yyyy HH:mm')", dt.datetime(2020, 4, 15, 8, 5)),
        ("TO_TIMESTAMP('not a time')", None),
        ("DATE_FORMAT(TIMESTAMP '2020-04-15 08:05:00.123', 'yyyy-MM-dd HH:mm:ss.SSS')", "2020-04-15 08:05:00.123"),
        ("FROM_UNIXTIME(1586937900)", "2020-04-15 08:05:00"),
        ("FROM_UNIXTIME(1586937900, 'yyyy/MM/dd')", "2020/04/15"),
        ("UNIX_TIMESTAMP('2020-04-15 08:05:00')", 1586937900),
        ("UNIX_TIMESTAMP('2020/04/15', 'yyyy/MM/dd')", 1586908800),
        # Flink's SimpleDateFormat is lenient (month 13 is next January) and reads a prefix; Long.MIN_VALUE if none
        ("UNIX_TIMESTAMP('2024/13/01 10:00:59', 'yyyy/MM/dd HH:mm')", 1735725600),
        ("UNIX_TIMESTAMP('2024-01-15')", -(2**63)),
        ("TO_DATE('2023-02-29')", None),
        ("TO_DATE('2024-1-5 23:00')", dt.date(2024, 1, 5)),
        ("""JSON_VALUE('{"a": {"b": 1}}', '$.a.b')""", "1"),
        ("""JSON_VALUE('{"a": 1}', 'lax $.a' RETURNING INT)""", 1),
        # A missing member is empty in lax mode, an error in strict mode (Flink's default), as real Flink gives.
        ("""JSON_VALUE('{"a": 1}', 'lax $.b' RETURNING INT DEFAULT 7 ON EMPTY)""", 7),
        ("""JSON_VALUE('{"a": 1}', '$.b' RETURNING INT DEFAULT 7 ON EMPTY)""", None),
        ("""JSON_VALUE('{"a": 1}', '$.b' RETURNING INT DEFAULT 7 ON ERROR)""", 7),
        ("""JSON_VALUE('{"a": {"b": 1}}', '$.a')""", None),
        ("""JSON_QUERY('{"a": [1, 2]}', '$.a')""", "[1,2]"),
        ("IF(2 > 1, 'yes', 'no')", "yes"),
        ("IFNULL(CAST(NULL AS STRING), 'fallback')", "fallback"),
        ("ARRAY['a', 'b'][1]", "a"),
        ("ARRAY['a', 'b'][3]", None),
        ("MAP['k', 1]['k']", 1),
        ("MAP['k', 1]['x']", None),
        ("FLOOR(TIMESTAMP '2020-04-15 08:05:30' TO MINUTE)", dt.datetime(2020, 4, 15, 8, 5)),
        ("CEIL(TIMESTAMP '2020-04-15 08:05:30' TO MINUTE)", dt.datetime(2020, 4, 15, 8, 6)),
        ("CEIL(TIMESTAMP '2020-04-15 08:05:00' TO MINUTE)", dt.datetime(2020, 4, 15, 8, 5)),
        ("TIMESTAMP '2020-04-15 08:05:00' + INTERVAL '2' MINUTES", dt.datetime(2020, 4, 15, 8, 7)),
        ("TIMESTAMP '2020-04-15 08:05:00' - INTERVAL '0.001' SECOND", dt.datetime(2020, 4, 15, 8, 4, 59, 999000)),
        ("TIMESTAMP '2020-04-15 08:05:00' + INTERVAL '1:30' HOUR TO MINUTE", dt.datetime(2020, 4, 15, 9, 35)),
        ("TIMESTAMPADD(HOUR, 1, TIMESTAMP '2020-04-15 08:05:00')", dt.datetime(2020, 4, 15, 9, 5)),
        ("TIMESTAMPDIFF(MINUTE, TIMESTAMP '2020-04-15 08:05:00', TIMESTAMP '2020-04-15 09:00:00')", 55),
        ("ROUND(PI, 4)", 3.1416),  # PI without parentheses, as Flink allows
        ("CAST(42 AS STRING)", "42"),
        ("CAST('2020-04-15 08:05:00' AS TIMESTAMP(3))", dt.datetime(2020, 4, 15, 8, 5)),
        ("CAST(CAST('ab' AS BYTES) AS STRING)", "ab"),
        ("CAST('1.5' AS DECIMAL(5, 2))", Decimal("1.50")),
        ("TRY_CAST('x' AS INT)", None),
    ],
)
def test_function_mappings(spark: SparkSession, flink_expression: str, expected: object) -> None:
    (row,) = spark.sql(spark_sql(f"SELECT {flink_expression} AS v")).collect()

    assert row.v == expected


@pytest.mark.parametrize(
    ("flink_expression", "spark_type"),
    [
        ("PROCTIME()", T.TimestampType()),
        ("NOW()", T.TimestampType()),
        ("CURRENT_TIMESTAMP", T.TimestampType()),
        ("CURRENT_ROW_TIMESTAMP()", T.TimestampType()),
        ("LOCALTIMESTAMP", T.TimestampNTZType()),
        ("CAST('2020-04-15 08:05:00' AS TIMESTAMP_LTZ(3))", T.TimestampType()),
        ("CAST('2020-04-15 08:05:00' AS TIMESTAMP(3) WITH LOCAL TIME ZONE)", T.TimestampType()),
        ("CAST('x' AS BYTES)", T.BinaryType()),
        (
            "ROW(1, 'a')",
            T.StructType(  # Flink's field names (conformance case row_values)
                [T.StructField("EXPR$0", T.IntegerType(), False), T.StructField("EXPR$1", T.StringType(), False)]
            ),
        ),
    ],
)
def test_time_functions_and_casts_have_the_flink_types(
    spark: SparkSession, flink_expression: str, spark_type: T.DataType
) -> None:
    schema = spark.sql(spark_sql(f"SELECT {flink_expression} AS v")).schema

    assert schema["v"].dataType == spark_type


def test_localtime_and_current_time_are_times_of_whole_seconds_as_in_flink(spark: SparkSession) -> None:
    # Flink's are TIME(0) (CAST(LOCALTIME AS STRING) is '20:29:46'); Spark's current_time() has microseconds
    (row,) = spark.sql(spark_sql("SELECT CAST(LOCALTIME AS STRING) AS a, CAST(CURRENT_TIME AS STRING) AS b")).collect()

    assert re.fullmatch(r"\d\d:\d\d:\d\d", row.a) and re.fullmatch(r"\d\d:\d\d:\d\d", row.b), row


def test_listagg_joins_with_a_comma_by_default(spark: SparkSession) -> None:
    flink_sql = (
        "SELECT LISTAGG(x) AS a, LISTAGG(x, '|') AS b FROM (VALUES ('x'), ('y'), (CAST(NULL AS STRING))) AS t(x)"
    )

    (row,) = spark.sql(spark_sql(flink_sql)).collect()

    assert sorted(row.a.split(",")) == ["x", "y"]
    assert sorted(row.b.split("|")) == ["x", "y"]


def test_count_distinct_is_streamable_and_ignores_nulls(spark: SparkSession) -> None:
    flink_sql = (
        "SELECT COUNT(DISTINCT x) AS xs, COUNT(DISTINCT x, y) AS pairs"
        " FROM (VALUES (1, 'a'), (1, 'a'), (2, CAST(NULL AS STRING)), (CAST(NULL AS INT), 'b')) AS t(x, y)"
    )

    generated = spark_sql(flink_sql)
    (row,) = spark.sql(generated).collect()

    assert "COLLECT_SET" in generated.upper()
    assert (row.xs, row.pairs) == (2, 1)


@pytest.mark.parametrize(
    ("flink_sql", "expected"),
    [
        (
            "SELECT id, x FROM (VALUES (1, ARRAY['a', 'b']), (2, ARRAY['c'])) AS t(id, arr)"
            " CROSS JOIN UNNEST(arr) AS u(x)",
            [(1, "a"), (1, "b"), (2, "c")],
        ),
        (
            "SELECT id, x FROM (VALUES (1, ARRAY['a', 'b'])) AS t(id, arr), UNNEST(arr) AS u(x)",
            [(1, "a"), (1, "b")],
        ),
        (
            "SELECT id, x, n FROM (VALUES (1, ARRAY['a', 'b'])) AS t(id, arr)"
            " CROSS JOIN UNNEST(arr) WITH ORDINALITY AS u(x, n)",
            [(1, "a", 1), (1, "b", 2)],
        ),
        (
            "SELECT id, k, v FROM (VALUES (1, ARRAY[ROW(1, 'x'), ROW(2, 'y')])) AS t(id, arr)"
            " CROSS JOIN UNNEST(arr) AS u(k, v)",
            [(1, 1, "x"), (1, 2, "y")],
        ),
        (
            "SELECT id, x FROM (VALUES (1, ARRAY['a']), (2, CAST(ARRAY[] AS ARRAY<STRING>))) AS t(id, arr)"
            " LEFT JOIN UNNEST(arr) AS u(x) ON TRUE",
            [(1, "a"), (2, None)],
        ),
    ],
)
def test_unnest(spark: SparkSession, flink_sql: str, expected: list[tuple[object, ...]]) -> None:
    rows = spark.sql(spark_sql(flink_sql)).collect()

    assert sorted(tuple(r) for r in rows) == expected


@pytest.mark.usefixtures("bids")
def test_catalog_qualified_tables_read_the_registered_view(spark: SparkSession) -> None:
    flink_sql = "SELECT COUNT(*) AS n FROM default_catalog.default_database.Bid /*+ OPTIONS('k'='v') */"

    (row,) = spark.sql(spark_sql(flink_sql)).collect()

    assert row.n == len(BID)
