"""The `blackhole` connector: swallows every row (Spark's `noop` sink), for tests and benchmarks."""
