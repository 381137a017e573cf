"""Running on Spark: the engine that starts a plan's queries, the `run` loop, the Spark session and Python launcher."""
