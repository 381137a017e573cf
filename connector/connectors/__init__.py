"""Connectors, one package each, found through the registry in this package."""

# The OFFSET of the end-of-input row a bounded source ends with (Kafka scans, datagen); no record has a negative
# offset. See `connector.connectors.kafka.source`. Here, not in `reading`, so that the Kafka source's Python
# processes, which need only this, do not import the Spark-side decoding (sqlglot, the format registry).
END_OF_INPUT_OFFSET = -1
