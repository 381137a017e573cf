"""The `upsert-kafka` connector: a Kafka topic as a changelog keyed by the PRIMARY KEY; it reads and writes
with the `kafka` connector's Spark side."""
