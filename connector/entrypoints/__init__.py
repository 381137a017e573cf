"""The ways in: the `kafka-sql` CLI, the session extension (`spark.sql`) and the pytest plugin."""
