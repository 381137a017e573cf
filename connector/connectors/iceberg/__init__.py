"""The `iceberg` connector (sink): rows committed to an Apache Iceberg table of a Hadoop-layout catalog."""
