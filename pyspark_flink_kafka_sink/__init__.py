"""Static registration of the `flink-kafka-sink` writer (`connector.connectors.kafka.sink`).

Spark registers the `DefaultSource` of every top-level `pyspark_*` module it finds (see
`pyspark_flink_kafka`), so `df.write.format("flink-kafka-sink")` works in any session once kafka-sql is
installed.
"""

from connector.connectors.kafka.sink import KafkaSink as DefaultSource

__all__ = ["DefaultSource"]
