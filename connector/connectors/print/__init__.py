"""The `print` connector: every row on standard output in Flink's PrintSink format."""
