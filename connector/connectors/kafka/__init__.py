"""The `kafka` connector: options, the `flink-kafka` source and `flink-kafka-sink` writer, offsets and commits."""
