"""The `delta` connector (sink): rows committed to a Delta Lake table, appended or merged by PRIMARY KEY."""
