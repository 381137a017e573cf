"""Planning: every decision about how a pipeline runs on Spark, made without Spark, and `explain`."""
