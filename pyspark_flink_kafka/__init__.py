"""Static registration of the `flink-kafka` source (`connector.connectors.kafka.source`).

Spark imports every top-level `pyspark_*` module on the Python path the first time a session looks up a
Python data source, and registers its `DefaultSource` under `DefaultSource.name()`. So once kafka-sql is
installed, any session, including the pure-JVM `spark-sql` shell, reads Kafka with Flink's option names
without registering anything:

    spark.readStream.format("flink-kafka").option("topic", "orders").option(...).load()
    CREATE TEMPORARY VIEW orders USING `flink-kafka` OPTIONS ('topic' 'orders', ...);
"""

from connector.connectors.kafka.source import KafkaSource as DefaultSource

__all__ = ["DefaultSource"]
