"""The SQL front end: templating, the Flink dialect, parsing, catalog, types, validation, transpiling."""
