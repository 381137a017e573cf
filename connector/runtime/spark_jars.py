"""Spark modules pip's pyspark lacks, resolved from Maven Central with `mvn`: Spark's own Kafka connector
(`spark-sql-kafka-0-10`) for the benchmarks, and the modules formats need (`package_jars`, e.g. spark-avro).

A comparison with Spark's own Kafka source and sink (bench/race.py) resolves the connector once into
`${KAFKA_SQL_HOME:-~/.cache/kafka-sql}/spark-sql-kafka-<version>/` and passes the jars with `spark.jars`.

Versions: the installed pyspark is 4.3.0, but the Maven Central reachable here serves neither
spark-sql-kafka-0-10 4.3.0 nor spark-token-provider-kafka-0-10 after 4.0.0 (checked with `mvn
dependency:get` for 4.0.0 to 4.3.0). The newest connector it serves, 4.2.0, runs on pyspark 4.3.0 (its
source and sink are used by the bench), with the token provider (only needed for delegation tokens) of
4.0.0. Jars pyspark already ships (Spark, Scala, slf4j, compression codecs) are left out of the tree, so
the session never sees two copies of a class. `spark.jars` must be set before the SparkSession starts,
so `kafka-sql run` resolves the modules of a pipeline's formats before starting it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from connector.dev import broker
from connector.dev.maven import Artifact, resolve_jars

CONNECTOR_VERSION = "4.2.0"
TOKEN_PROVIDER_VERSION = "4.0.0"
# In pyspark's own jars directory (in the same or a newer version).
_PROVIDED = (
    ("org.apache.spark", "spark-tags_2.13"),
    ("org.scala-lang", "scala-library"),
    ("org.scala-lang.modules", "scala-parallel-collections_2.13"),
    ("org.slf4j", "slf4j-api"),
    ("com.google.code.findbugs", "jsr305"),
    ("org.xerial.snappy", "snappy-java"),
    ("org.lz4", "lz4-java"),
    ("at.yawk.lz4", "lz4-java"),
    ("org.apache.hadoop", "hadoop-client-api"),
    ("org.apache.hadoop", "hadoop-client-runtime"),
    ("com.github.luben", "zstd-jni"),
)
_TOKEN_PROVIDER = ("org.apache.spark", "spark-token-provider-kafka-0-10_2.13")
ARTIFACTS = (
    Artifact(
        "org.apache.spark",
        "spark-sql-kafka-0-10_2.13",
        CONNECTOR_VERSION,
        exclusions=(*_PROVIDED, _TOKEN_PROVIDER),
    ),
    Artifact(*_TOKEN_PROVIDER, TOKEN_PROVIDER_VERSION, exclusions=(*_PROVIDED, ("org.apache.kafka", "kafka-clients"))),
)


def spark_kafka_jars(on_progress: Callable[[str], None] | None = None) -> list[Path]:
    """The jars of Spark's Kafka source and sink, downloaded by the first call and cached."""
    dest = broker.cache_dir().parent / f"spark-sql-kafka-{CONNECTOR_VERSION}"
    return resolve_jars(ARTIFACTS, dest, on_progress)


def package_jars(coordinates: Sequence[str], on_progress: Callable[[str], None] | None = None) -> list[Path]:
    """The jars of Spark modules ('group:artifact:version', e.g. the formats' `spark_packages`) without what
    pyspark ships, each resolved once into `${KAFKA_SQL_HOME:-~/.cache/kafka-sql}/spark-packages/`."""
    jars: list[Path] = []
    for coordinate in sorted(set(coordinates)):
        group, artifact, version = coordinate.split(":")
        dest = broker.cache_dir().parent / "spark-packages" / f"{group}.{artifact}-{version}"
        jars += resolve_jars([Artifact(group, artifact, version, exclusions=_PROVIDED)], dest, on_progress)
    return jars


def every_package() -> tuple[str, ...]:
    """The Spark modules of every registered connector and format: what a session made before its pipelines are
    known (the pytest plugin's) loads."""
    from connector.connectors import registry as connectors
    from connector.formats import registry as formats

    needed = {p for f in formats.formats() if f.codec is not None for p in f.codec.spark_packages}
    needed.update(p for factory in connectors.factories().values() for p in factory.spark_packages)
    return tuple(sorted(needed))
