"""Helpers that more than one test module uses (not tests themselves): import them as `support.<module>`.

- `commands`: kafka-sql's commands as the tests run them (`run` in this process on the test session, `run_subprocess`
  as a user starts it, `explain_json`).
- `topics`: reading topics and consumer groups' committed offsets, producing JSON records.
- `pipelines`: pipeline files several test modules run, with their input records and expected output.
- `crashes`: killing every process of a `kafka-sql run` with SIGKILL at chosen moments, and restarting it.
- `formats`: tables declared in Flink SQL, and Kafka records decoded and encoded by their formats in Spark.
- `queries`: Flink SQL parsed with the project's dialect, and transpiled to Spark SQL.
- `stores`: Java key and trust stores, made as users make them.
"""
