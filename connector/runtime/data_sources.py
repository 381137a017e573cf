"""Registering the project's Python data sources with a SparkSession, once.

pip installs `pyspark_flink_kafka` / `pyspark_flink_kafka_sink`, so Spark already knows `flink-kafka` and
`flink-kafka-sink` when a session starts (static registration). Registering them again works but makes Spark
log a warning at every query ("replaced a ... registered data source"), so they are registered only where the
session does not know them yet (a source checkout run without installing, a Spark Connect session).

Spark finds the static ones with a Python process of its own; the sessions kafka-sql starts find them in the
driver instead (`load_static`), which spares that process at the start of every run.
"""

from __future__ import annotations

import importlib
import logging
import os
import pkgutil
import sys

from pyspark.sql import SparkSession
from pyspark.sql.datasource import DataSource

log = logging.getLogger(__name__)

# The project's own static registrations: an editable install maps them with an import hook, which pkgutil does
# not list (nor does Spark's lookup, unless the working directory is the checkout).
PROJECT_MODULES = ("pyspark_flink_kafka", "pyspark_flink_kafka_sink")
_MANAGER = "org.apache.spark.sql.execution.datasources.DataSourceManager$"
_PYTHON_SOURCE = "org.apache.spark.sql.execution.datasources.v2.python.UserDefinedPythonDataSource"


def register(spark: SparkSession, data_source: type[DataSource]) -> None:
    """Make `data_source` available to `spark` under its name."""
    jsession = getattr(spark, "_jsparkSession", None)  # absent in Spark Connect sessions
    if jsession is not None and jsession.sessionState().dataSourceManager().dataSourceExists(data_source.name()):
        return
    spark.dataSource.register(data_source)


def load_static(spark: SparkSession) -> None:
    """Find the static Python data sources (every top-level `pyspark_*` module's `DefaultSource`) in this
    process, as Spark's own lookup does, and hand them to the JVM before it looks them up.

    Spark's lookup starts a Python process the first time any session of the JVM reads or writes (measured
    1.3-1.5 s of a query's start on 2 cores, the pickled classes then checked with one more Python process
    each); this driver has the same interpreter and path, and pyspark and the project already imported. The
    result is the same static registration (Spark's `DataSourceManager.dataSourceBuilders`, which it fills
    only while empty), so a JVM that already looked them up is left alone."""
    jvm = getattr(spark.sparkContext, "_jvm", None)
    if jvm is None or getattr(spark, "_jsparkSession", None) is None:
        return
    manager = getattr(getattr(jvm, _MANAGER), "MODULE$")
    if not manager.dataSourceBuilders().isEmpty():
        return
    from pyspark.sql.udf import _wrap_function

    found: dict[str, type[DataSource]] = {}
    # Spark's lookup process runs in the driver's working directory, with the same site-packages.
    on_path = {info.name for info in pkgutil.iter_modules([os.getcwd(), *sys.path]) if info.name.startswith("pyspark_")}
    for name in sorted(on_path | set(PROJECT_MODULES)):
        try:
            module = importlib.import_module(name)
        except Exception as error:  # Spark's lookup warns and goes on without any: leave it to Spark
            log.debug("static data source module %s failed to import (%s); Spark looks them up", name, error)
            return
        source = getattr(module, "DefaultSource", None)
        if isinstance(source, type) and issubclass(source, DataSource):
            found[source.name().lower()] = source
    context = spark.sparkContext
    builders = {name: getattr(jvm, _PYTHON_SOURCE)(_wrap_function(context, source)) for name, source in found.items()}
    static = jvm.scala.Some(jvm.org.apache.spark.api.python.PythonUtils.toScalaMap(builders))
    getattr(manager, "dataSourceBuilders_$eq")(static)
