"""Python functions of a pipeline (`CREATE FUNCTION ... LANGUAGE PYTHON`) registered in the Spark session as
Arrow-optimized Python UDFs, their modules shipped to the executors.

A function is pickled by reference (its module and name), so each executor must be able to import its module:
the module's file, or its top-level package as a zip, is added with `SparkContext.addPyFile` (Spark's
--py-files), unless it is installed in the interpreter's site-packages, which the executors share locally.
"""

from __future__ import annotations

import functools
import inspect
import reprlib
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType
from pyspark.sql.udtf import UserDefinedTableFunction

from connector.catalog import python_udfs
from connector.catalog.model import Function
from connector.catalog.spark_types import spark_type
from connector.errors import KafkaSqlError

_shipped: set[str] = set()  # (SparkContext, top-level module) pairs already added


def register_functions(spark: SparkSession, functions: Sequence[Function]) -> None:
    """Register each function under its SQL name for the session's queries: scalar functions as Python UDFs (and
    their variant naming the failing row's source record, `located_name`), table functions as Python UDTFs (what
    `LATERAL f(x)` calls)."""
    for declared in functions:
        raw = python_udfs.resolve(declared.identifier, [Path(declared.directory)])
        _ship(spark, raw)
        function = naming_failures(raw, declared.name)
        if declared.table:
            columns = spark_type(declared.result_type)
            assert isinstance(columns, StructType)  # a table function's result type is its ROW of columns
            located = naming_failures(raw, declared.name, located=True)
            for name, outer in ((declared.name, False), (python_udfs.outer_name(declared.name), True)):
                udtf = UserDefinedTableFunction(table_function(function, len(columns.fields), outer), columns)
                spark.udtf.register(name, udtf)
                udtf = UserDefinedTableFunction(table_function(located, len(columns.fields), outer), columns)
                spark.udtf.register(located_name(name), udtf)
        else:
            result_type = spark_type(declared.result_type)
            spark.udf.register(declared.name, F.udf(function, result_type, useArrow=True))
            located = naming_failures(raw, declared.name, located=True)
            spark.udf.register(located_name(declared.name), F.udf(located, result_type, useArrow=True))


def located_variants(functions: Sequence[Function]) -> dict[str, str]:
    """The SQL name of each function `register_functions` registers -> the name of its variant taking the row's
    position (`located_name`)."""
    names = [n for f in functions for n in (f.name, *([python_udfs.outer_name(f.name)] if f.table else []))]
    return {name: located_name(name) for name in names}


def located_name(name: str) -> str:
    """The SQL name of the variant of function `name` that takes the row's source topic, partition and offset
    as three more arguments, for its error to name them (`connector.quality.provenance.with_located_calls`)."""
    return f"__{name}_at_row"


class PythonFunctionError(KafkaSqlError):
    """A pipeline's Python function raised; the message names it, the arguments of the failing call and, where
    known, the source record of the row."""


def naming_failures(function: Callable[..., Any], name: str, located: bool = False) -> Callable[..., Any]:
    """`function`, raising PythonFunctionError (function name, its arguments, the error) instead of a bare error
    whose Spark traceback names neither; a generator's error is raised while it yields. `located`: the function
    takes the row's topic, partition and offset as three more arguments, which the error names."""

    def failed(arguments: tuple[Any, ...], err: Exception, where: str = "") -> PythonFunctionError:
        shown = ", ".join(reprlib.repr(a) for a in arguments)
        return PythonFunctionError(
            f"Python function '{name}' failed on ({shown}){where}: {type(err).__name__}: {err}"
        )

    if located and inspect.isgeneratorfunction(function):

        @functools.wraps(function)
        def rows_at(*arguments: Any) -> Iterator[Any]:
            *own, topic, partition, offset = arguments
            try:
                yield from function(*own)
            except Exception as err:
                raise failed(tuple(own), err, _position(topic, partition, offset)) from err

        return rows_at

    if located:

        @functools.wraps(function)
        def call_at(*arguments: Any) -> Any:
            *own, topic, partition, offset = arguments
            try:
                return function(*own)
            except Exception as err:
                raise failed(tuple(own), err, _position(topic, partition, offset)) from err

        return call_at

    if inspect.isgeneratorfunction(function):

        @functools.wraps(function)
        def rows(*arguments: Any) -> Iterator[Any]:
            try:
                yield from function(*arguments)
            except Exception as err:
                raise failed(arguments, err) from err

        return rows

    @functools.wraps(function)
    def call(*arguments: Any) -> Any:
        try:
            return function(*arguments)
        except Exception as err:
            raise failed(arguments, err) from err

    return call


def _position(topic: str | None, partition: int | None, offset: int | None) -> str:
    """Where a row comes from, as errors name it: a Kafka record, a file, or nothing (generated rows)."""
    if topic is None:
        return ""
    if partition is None:
        return f" for a row of file {topic}"
    return f" for the record at topic '{topic}', partition {partition}, offset {offset}"


def table_function(function: Callable[..., Iterable[Any]], width: int, outer: bool) -> type:
    """A Spark UDTF class calling the generator `function` (pickled by reference) for each row: a yielded value
    that is not a tuple is the one column of its row, as PyFlink's table functions yield. `outer`: a row for which
    the function yields nothing gets one row of `width` NULLs (Flink's LEFT JOIN LATERAL TABLE ... ON TRUE)."""

    class TableFunction:
        def eval(self, *arguments: Any) -> Iterator[tuple[Any, ...]]:
            empty = True
            for row in function(*arguments):
                empty = False
                yield row if isinstance(row, tuple) else (row,)
            if empty and outer:
                yield (None,) * width

    TableFunction.__name__ = TableFunction.__qualname__ = f"TableFunction_{function.__name__}"
    return TableFunction


def _ship(spark: SparkSession, function: Any) -> None:
    top = str(function.__module__).split(".")[0]
    module = sys.modules.get(top)
    source = getattr(module, "__file__", None)
    key = f"{id(spark.sparkContext)}:{top}"
    if source is None or key in _shipped or "site-packages" in source:
        return
    path = Path(source)
    if path.name == "__init__.py":  # a package: its whole folder, zipped
        target = Path(tempfile.mkdtemp(prefix="kafka-sql-udf-")) / top
        path = Path(shutil.make_archive(str(target), "zip", root_dir=path.parent.parent, base_dir=top))
    spark.sparkContext.addPyFile(str(path))
    _shipped.add(key)
