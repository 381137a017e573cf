"""What the Python stateful operators cost: Top-N, the last row per key, an aggregate over an upsert-kafka source
(its normalization), an event-time temporal join, OVER aggregations, a GROUP BY written as debezium-json (Flink's
retractions) and a Top-N over a GROUP BY, each against a plain projection of the same records.

    .venv/bin/python bench/stateful.py [--records 200000] [--keys 1000]

Starts a broker, writes --records JSON records (bench/race.py's: id, customer, amount, ts) to a 4-partition topic,
and the same records keyed by customer (--keys customers) to an upsert-kafka topic, then times `kafka-sql run` of
each pipeline as a user starts it (whole process, bounded runs, a fresh checkpoint each). Prints wall seconds,
records/s and the ratio to the projection's wall time. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path

from confluent_kafka import Producer
from workspace import broker_workspace

from connector.dev import broker

PARTITIONS = 4
SOURCES = """
CREATE TABLE src (id BIGINT, customer STRING, amount DOUBLE, ts BIGINT, pt AS PROCTIME(),
  et AS TO_TIMESTAMP_LTZ(ts, 3), WATERMARK FOR et AS et - INTERVAL '1' SECOND) WITH (
  'connector' = 'kafka', 'topic' = 'bench-stateful-src', 'properties.bootstrap.servers' = '{bootstrap}',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', 'format' = 'json');
CREATE TABLE latest (customer STRING, amount DOUBLE, ts BIGINT, et AS TO_TIMESTAMP_LTZ(ts, 3),
  PRIMARY KEY (customer) NOT ENFORCED, WATERMARK FOR et AS et - INTERVAL '1' SECOND) WITH (
  'connector' = 'upsert-kafka', 'topic' = 'bench-stateful-latest', 'properties.bootstrap.servers' = '{bootstrap}',
  'scan.bounded.mode' = 'latest-offset', 'key.format' = 'json', 'value.format' = 'json');
CREATE TABLE output (k STRING, n BIGINT, v DOUBLE) WITH ('connector' = 'blackhole');
CREATE TABLE changes (k STRING, n BIGINT, v DOUBLE) WITH ('connector' = 'kafka', 'topic' = 'bench-stateful-changes',
  'properties.bootstrap.servers' = '{bootstrap}', 'format' = 'debezium-json');
"""
QUERIES = {
    "projection": "INSERT INTO output SELECT customer, id, amount FROM src",
    "top-3 per key": "INSERT INTO output SELECT customer, rn, amount FROM (SELECT customer, amount, ROW_NUMBER() OVER "
    "(PARTITION BY customer ORDER BY amount DESC) AS rn FROM src) WHERE rn <= 3",
    "last row per key": "INSERT INTO output SELECT customer, id, amount FROM (SELECT customer, id, amount, "
    "ROW_NUMBER() OVER (PARTITION BY customer ORDER BY pt DESC) AS rn FROM src) WHERE rn = 1",
    "count over upsert-kafka": "INSERT INTO output SELECT CAST(amount > 500 AS STRING), COUNT(*), SUM(amount) "
    "FROM latest GROUP BY CAST(amount > 500 AS STRING)",
    "temporal join": "INSERT INTO output SELECT s.customer, s.id, s.amount * l.amount FROM src AS s JOIN latest FOR "
    "SYSTEM_TIME AS OF s.et AS l ON s.customer = l.customer",
    "running SUM OVER (event time)": "INSERT INTO output SELECT customer, id, SUM(amount) OVER (PARTITION BY customer "
    "ORDER BY et ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM src",
    "SUM OVER 10 rows (event time)": "INSERT INTO output SELECT customer, id, SUM(amount) OVER (PARTITION BY customer "
    "ORDER BY et ROWS BETWEEN 9 PRECEDING AND CURRENT ROW) FROM src",
    "GROUP BY (Spark, blackhole)": "INSERT INTO output SELECT customer, COUNT(*), SUM(amount) FROM src "
    "GROUP BY customer",
    "GROUP BY as debezium-json": "INSERT INTO changes SELECT customer, COUNT(*), SUM(amount) FROM src "
    "GROUP BY customer",
    "top-3 over GROUP BY": "INSERT INTO output SELECT customer, rn, total FROM (SELECT *, ROW_NUMBER() OVER (ORDER BY "
    "total DESC) AS rn FROM (SELECT customer, SUM(amount) AS total FROM src GROUP BY customer)) WHERE rn <= 3",
}


def produce(bootstrap: str, records: int, keys: int) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 50, "batch.size": 1_000_000})
    for i in range(records):
        customer = f"c{i % keys}"
        row = {"id": i, "customer": customer, "amount": (i * 7919) % 1000 / 1.0, "ts": 1_714_000_000_000 + i}
        value = json.dumps(row).encode()
        for topic, key in (("bench-stateful-src", None), ("bench-stateful-latest", json.dumps({"customer": customer}))):
            while True:
                try:
                    producer.produce(topic, value, key, partition=i % PARTITIONS)
                    break
                except BufferError:
                    producer.poll(0.1)
    if producer.flush(300):
        raise RuntimeError("records were not all delivered")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--keys", type=int, default=1000)
    args = parser.parse_args()
    with broker_workspace("bench-stateful-") as (work, info):
        walls: dict[str, float] = {}
        for topic in ("bench-stateful-src", "bench-stateful-latest", "bench-stateful-changes"):
            broker.create_topic(info.bootstrap, topic, partitions=PARTITIONS)
        produce(info.bootstrap, args.records, args.keys)
        for name, query in QUERIES.items():
            sql = work / (re.sub(r"\W+", "_", name).strip("_") + ".sql")
            sql.write_text(SOURCES.format(bootstrap=info.bootstrap) + query + ";\n")
            command = [str(Path(sys.executable).with_name("kafka-sql")), "run", str(sql), "--checkpoint-dir",
                       str(work / f"cp-{sql.stem}")]  # fmt: skip
            started = time.monotonic()
            done = subprocess.run(command, capture_output=True, text=True, timeout=1800)
            walls[name] = time.monotonic() - started
            if done.returncode != 0:
                raise RuntimeError(f"{name} failed:\n{done.stderr[-3000:]}")
            print(f"{name}: {walls[name]:.1f} s", flush=True)
    base = walls["projection"]
    print(f"\n{args.records:,} records ({args.keys:,} keys), {PARTITIONS} partitions, kafka-sql run (local[*])")
    print(f"{'pipeline':<32}{'wall s':>9}{'records/s':>12}{'vs projection':>15}")
    for name, wall in walls.items():
        print(f"{name:<32}{wall:>9.1f}{args.records / wall:>12,.0f}{wall / base:>14.2f}x")


if __name__ == "__main__":
    main()
