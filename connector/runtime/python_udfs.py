"""Python functions of a pipeline (`CREATE FUNCTION ... LANGUAGE PYTHON`) registered in the Spark session as
Arrow-optimized Python UDFs, their modules shipped to the executors.

A function is pickled by reference (its module and name), so each executor must be able to import its module:
the module's file, or its top-level package as a zip, is added with `SparkContext.addPyFile` (Spark's
--py-files), unless it is installed in the interpreter's site-packages, which the executors share locally.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from connector.sql import python_functions
from connector.sql.catalog import Function
from connector.sql.types import spark_type

_shipped: set[str] = set()  # (SparkContext, top-level module) pairs already added


def register_functions(spark: SparkSession, functions: Sequence[Function]) -> None:
    """Register each function under its SQL name for the session's queries."""
    for declared in functions:
        function = python_functions.resolve(declared.identifier, [Path(declared.directory)])
        _ship(spark, function)
        spark.udf.register(declared.name, F.udf(function, spark_type(declared.result_type), useArrow=True))


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
