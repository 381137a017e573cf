"""Flink expressions rewritten as Spark SQL expressions: functions, CASTs, intervals."""
