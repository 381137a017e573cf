"""The `filesystem` connector: files under a directory, partitioned Hive-style, through Spark's file source and sink."""
