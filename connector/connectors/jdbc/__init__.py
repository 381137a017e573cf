"""The `jdbc` connector (sink): rows written to a database table over JDBC, upserted by PRIMARY KEY."""
