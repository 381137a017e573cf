"""Flink's built-in functions whose Spark namesakes differ or are missing, by family."""
