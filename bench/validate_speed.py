"""How long `kafka-sql validate` takes on a large pipeline file: the edit-validate loop should feel instant.

Generates a 200-statement templated pipeline (SETs, Kafka source tables written out and from the bundled macros,
print and Kafka sink tables, views, plain and windowed INSERTs, a statement set) and runs `kafka-sql validate` on
it in-process several times, after one warm-up run, printing the median wall time. Target: under 1 s.

    .venv/bin/python bench/validate_speed.py [--runs N] [--keep FILE]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import statistics
import sys
import tempfile
import time
from pathlib import Path

from connector.entrypoints.cli import main

SOURCES = 50
SINKS = 40
VIEWS = 30
INSERTS = 77  # with the 2 SETs and the statement set (of 2 more INSERTs): 200 statements


def source(i: int) -> str:
    if i % 2:
        return (
            f"{{{{ kafka.kafka_source('orders_{i}', 'orders-{i}', "
            "{'id': 'BIGINT', 'customer': 'STRING', 'amount': 'DOUBLE', 'ts': 'TIMESTAMP(3)'}, "
            f"group_id='etl-{i}', watermark=\"ts AS ts - INTERVAL '5' SECOND\", metadata=true) }}}};\n"
        )
    return (
        f"CREATE TABLE orders_{i} (\n"
        "  id BIGINT,\n  customer STRING,\n  amount DOUBLE,\n  ts TIMESTAMP(3),\n"
        "  event_time TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL,\n"
        "  kafka_partition INT METADATA FROM 'partition' VIRTUAL,\n"
        "  kafka_offset BIGINT METADATA FROM 'offset' VIRTUAL,\n"
        "  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND\n"
        ") WITH (\n"
        "  'connector' = 'kafka',\n"
        f"  'topic' = 'orders-{i}',\n"
        "  'properties.bootstrap.servers' = '{{ var(\"brokers\") }}',\n"
        "  'scan.startup.mode' = 'earliest-offset',\n"
        "  'format' = 'json'\n"
        ");\n"
    )


def sink(i: int) -> str:
    if i % 4 == 0:
        return (
            f"{{{{ kafka.kafka_sink('totals_{i}', 'totals-{i}', "
            "{'customer': 'STRING', 'orders': 'BIGINT', 'revenue': 'DOUBLE', 'window_start': 'TIMESTAMP(3)'}) }};\n"
        )
    return (
        f"CREATE TABLE totals_{i} (customer STRING, orders BIGINT, revenue DOUBLE, window_start TIMESTAMP(3)) "
        f"WITH ('connector' = 'print', 'print-identifier' = 'totals-{i}');\n"
    )


def view(i: int) -> str:
    return (
        f"CREATE TEMPORARY VIEW big_orders_{i} AS\n"
        f"SELECT id, customer, amount, ts FROM orders_{i % SOURCES} WHERE amount > {{{{ var('threshold') }}}};\n"
    )


def insert(i: int) -> str:
    target = f"totals_{i % SINKS}"
    if i % 2:
        return (
            f"INSERT INTO {target}\n"
            "SELECT customer, COUNT(*) AS orders, SUM(amount) AS revenue, window_start\n"
            f"FROM TABLE(TUMBLE(TABLE orders_{i % SOURCES}, DESCRIPTOR(ts), INTERVAL '1' MINUTE))\n"
            "GROUP BY window_start, window_end, customer;\n"
        )
    return (
        f"INSERT INTO {target}\n"
        f"SELECT customer, CAST(id AS BIGINT) AS orders, amount * 1.1 AS revenue, ts FROM big_orders_{i % VIEWS}\n"
        "WHERE customer IS NOT NULL;\n"
    )


def pipeline() -> str:
    parts = [
        "{% import 'kafka.sql' as kafka %}\n",
        "SET 'pipeline.name' = 'validate-speed';\nSET 'execution.checkpointing.interval' = '10 s';\n",
        *(source(i) for i in range(SOURCES)),
        *(sink(i) for i in range(SINKS)),
        *(view(i) for i in range(VIEWS)),
        *(insert(i) for i in range(INSERTS)),
        "EXECUTE STATEMENT SET\nBEGIN\n",
        *(insert(i).replace("\n", "\n  ") for i in (1, 2)),
        "END;\n",
    ]
    return "".join(parts)


def validate(path: Path) -> tuple[float, int, str]:
    """One in-process `kafka-sql validate`: seconds, exit code, stderr."""
    err = io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["validate", str(path), "--var", "brokers=localhost:9092", "--var", "threshold=100"])
    return time.perf_counter() - start, code, err.getvalue()


def run(runs: int, keep: Path | None) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        path = keep or Path(tmp) / "large_pipeline.sql"
        path.write_text(pipeline(), encoding="utf-8")
        _, code, err = validate(path)  # warm-up: imports, caches
        if code != 0:
            raise SystemExit(f"the generated pipeline does not validate:\n{err}")
        times = [validate(path)[0] for _ in range(runs)]
    median = statistics.median(times)
    statements = SOURCES + SINKS + VIEWS + INSERTS + 2 + 1
    print(
        f"kafka-sql validate, {statements} statements ({SOURCES + SINKS} tables, {VIEWS} views, "
        f"{INSERTS + 2} INSERTs, templated): median {median:.3f} s over {runs} runs "
        f"(min {min(times):.3f} s, max {max(times):.3f} s); target < 1 s"
    )
    return median


def main_() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--keep", type=Path, default=None, help="write the generated pipeline here and keep it")
    args = parser.parse_args()
    return 0 if run(args.runs, args.keep) < 1.0 else 1


if __name__ == "__main__":
    sys.exit(main_())
