"""`make bench`: the project's benchmarks, one after the other, each with its default settings.

    .venv/bin/python bench/run_all.py

Runs bench/race.py (Kafka source and pipeline against Spark's built-in Kafka connector), bench/race_flink.py (one
SQL file on real Apache Flink and on kafka-sql; needs Flink's environment, which `make bench` creates),
bench/formats.py (the same pipeline over JSON, avro and avro-confluent records), bench/stateful.py (Top-N,
deduplication, an aggregate over upsert-kafka, a temporal join, OVER aggregations and changelog GROUP BYs against a
projection), bench/table_sinks.py (Delta and Iceberg sinks, appended and upserted, against blackhole and Spark's
parquet sink), bench/kafka_delivery.py (a Kafka sink exactly-once against at-least-once),
bench/quality_gate.py (batch time with and without a 10-expectation data-quality gate),
bench/validate_speed.py (how long `kafka-sql validate` takes on a large file) and bench/validate_scale.py
(whether validate's time and memory grow linearly, up to a 50 MB file). Exits non-zero if any of them failed.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCHMARKS = (
    "race.py", "race_flink.py", "formats.py", "stateful.py", "table_sinks.py", "kafka_delivery.py", "quality_gate.py",
    "validate_speed.py", "validate_scale.py",
)  # fmt: skip


def main() -> int:
    failed = []
    for name in BENCHMARKS:
        script = Path(__file__).with_name(name)
        print(f"==> {script.name}", flush=True)
        if subprocess.run([sys.executable, str(script)], check=False).returncode != 0:
            failed.append(name)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
