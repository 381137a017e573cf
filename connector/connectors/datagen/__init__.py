"""The `datagen` connector: generated rows (random values or sequences) on Spark's rate source."""
