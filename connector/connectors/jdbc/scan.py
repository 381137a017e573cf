"""The `flink-jdbc-scan` Python data source: a jdbc table read once, as Flink's JDBC source reads it (bounded).

The first micro-batch holds the whole table; the offset then says it was read (`{"scanned": 1}`), so a restart from
the checkpoint does not read it again, and the query ends under Trigger.AvailableNow. With Flink's
'scan.partition.*' options the read is split into 'scan.partition.num' ranges of the partition column between the
lower and upper bound, each read by its own Spark task (Flink's JdbcNumericBetweenParametersProvider: the first
ranges are one longer when the span does not divide evenly); 'scan.fetch-size' rows are fetched per round trip
(a server-side cursor). Executors connect with psycopg, PostgreSQL's Python driver: Python workers have no JDBC.
"""

from __future__ import annotations

import datetime
import decimal
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadLimit, SupportsTriggerAvailableNow
from pyspark.sql.types import (
    ByteType,
    DataType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
    StructType,
)

from connector.errors import KafkaSqlError

NAME = "flink-jdbc-scan"


class JdbcScanError(KafkaSqlError, RuntimeError):
    """The database refused the read; the message names the table, the url and the database's reason."""


@dataclass(frozen=True)
class ScanSettings:
    """What the source reads; passed as one JSON option (`settings`), the password as its own (`password`)."""

    url: str  # jdbc:postgresql://host:port/database[?params]
    table: str
    columns: tuple[str, ...]
    user: str | None = None
    partition_column: str | None = None
    partition_num: int | None = None
    lower_bound: int | None = None
    upper_bound: int | None = None
    fetch_size: int = 0

    def to_json(self) -> str:
        return json.dumps(self.__dict__)

    @classmethod
    def from_json(cls, text: str) -> ScanSettings:
        values = json.loads(text)
        values["columns"] = tuple(values["columns"])
        return cls(**values)

    def ranges(self) -> list[tuple[int, int] | None]:
        """The partition column's ranges, one per task (Flink's split); [None]: one task reads the whole table."""
        if self.partition_column is None or self.partition_num is None:
            return [None]
        assert self.lower_bound is not None and self.upper_bound is not None  # validated with the column
        span = self.upper_bound - self.lower_bound + 1
        count = max(1, min(self.partition_num, span))
        size, longer = divmod(span, count)
        out: list[tuple[int, int] | None] = []
        start = self.lower_bound
        for i in range(count):
            end = start + size + (1 if i < longer else 0) - 1
            out.append((start, end))
            start = end + 1
        return out


@dataclass(frozen=True)
class ScanPartition(InputPartition):
    bounds: tuple[int, int] | None


class JdbcScan(DataSource):
    """`spark.readStream.format("flink-jdbc-scan").option("settings", ScanSettings(...).to_json())`."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def streamReader(self, schema: StructType) -> JdbcScanReader:
        return JdbcScanReader(ScanSettings.from_json(self.options["settings"]), schema, self.options.get("password"))


class JdbcScanReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """One micro-batch with the whole table, split by the partition ranges; nothing after it."""

    def __init__(self, settings: ScanSettings, schema: StructType, password: str | None) -> None:
        self.settings, self.schema, self.password = settings, schema, password

    def initialOffset(self) -> dict:
        return {"scanned": 0}

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        return {"scanned": 1}

    def prepareForTriggerAvailableNow(self) -> None:
        """The table is all there is: nothing to fix in advance."""

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        if start.get("scanned") or not end.get("scanned"):
            return []
        return [ScanPartition(bounds) for bounds in self.settings.ranges()]

    def commit(self, end: dict) -> None:
        """Nothing to acknowledge: the database keeps no read position."""

    def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
        import psycopg

        assert isinstance(partition, ScanPartition)
        settings = self.settings
        converters = [_converter(field.dataType) for field in self.schema.fields]
        query = f"SELECT {', '.join(settings.columns)} FROM {settings.table}"
        parameters: tuple[int, ...] = ()
        if partition.bounds is not None:
            query += f" WHERE {settings.partition_column} BETWEEN %s AND %s"
            parameters = partition.bounds
        conninfo = settings.url.removeprefix("jdbc:")
        try:
            with (
                psycopg.connect(conninfo, user=settings.user, password=self.password) as connection,
                connection.cursor(name="kafka_sql_scan") as cursor,  # server-side: 'scan.fetch-size' rows per trip
            ):
                if settings.fetch_size > 0:
                    cursor.itersize = settings.fetch_size
                cursor.execute(query, parameters)
                for row in cursor:
                    yield tuple(convert(value) for convert, value in zip(converters, row, strict=True))
        except psycopg.Error as err:
            reason = " ".join(str(err).split())
            raise JdbcScanError(f"reading table {settings.table} at {settings.url} failed: {reason}") from None


def _converter(spark_type: DataType) -> Callable[[Any], Any]:
    """From psycopg's Python value to what Spark takes for the declared column type (a NUMERIC read into DOUBLE,
    an INTEGER into BIGINT, a TIME into the STRING that holds Flink's TIME here)."""
    if isinstance(spark_type, DoubleType | FloatType):
        return lambda v: None if v is None else float(v)
    if isinstance(spark_type, ByteType | ShortType | IntegerType | LongType):
        return lambda v: None if v is None else int(v)
    if isinstance(spark_type, DecimalType):
        return lambda v: None if v is None else decimal.Decimal(v)
    if isinstance(spark_type, StringType):
        return _text
    return lambda v: v


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, datetime.time):
        return value.isoformat(timespec="seconds")  # JDBC reads TIME as java.sql.Time: whole seconds (Flink's too)
    return str(value)
