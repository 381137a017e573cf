"""What the lakehouse sinks cost: the same records appended to a Delta and an Iceberg table (committed by the driver
through delta-rs / pyiceberg) and aggregated into them by PRIMARY KEY, against the blackhole sink and Spark's own
parquet file sink.

    .venv/bin/python bench/table_sinks.py [--records 200000] [--keys 1000] [--batch 50000]

Starts a broker, writes --records JSON records (bench/stateful.py's: id, customer, amount, ts) to a 4-partition
topic, then times `kafka-sql run` of each pipeline as a user starts it (whole process, bounded runs, a fresh
checkpoint and table each), with 'scan.max-records-per-batch' = --batch so that each run commits several
micro-batches. Prints wall seconds, records/s, the ratio to the blackhole run and peak memory (RSS of the
`kafka-sql` Python process, where the table sinks collect each micro-batch, and of Spark's JVM). Nothing is asserted.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from procs import descendants, high_water_mark, role, snapshot
from stateful import PARTITIONS, produce
from workspace import broker_workspace

from connector.dev import broker

SOURCE = """
CREATE TABLE src (id BIGINT, customer STRING, amount DOUBLE, ts BIGINT) WITH (
  'connector' = 'kafka', 'topic' = 'bench-stateful-src', 'properties.bootstrap.servers' = '{bootstrap}',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', 'format' = 'json',
  'scan.max-records-per-batch' = '{batch}');
"""
ICEBERG = "'connector' = 'iceberg', 'catalog-name' = 'bench', 'catalog-type' = 'hadoop', 'warehouse' = '{work}/iceberg'"
PIPELINES = {
    "blackhole (baseline)": "CREATE TABLE output (id BIGINT, customer STRING, amount DOUBLE) "
    "WITH ('connector' = 'blackhole');\nINSERT INTO output SELECT id, customer, amount FROM src",
    "parquet files (Spark)": "CREATE TABLE output (id BIGINT, customer STRING, amount DOUBLE) WITH ('connector' = "
    "'filesystem', 'path' = '{work}/files', 'format' = 'parquet');\n"
    "INSERT INTO output SELECT id, customer, amount FROM src",
    "delta append": "CREATE TABLE output (id BIGINT, customer STRING, amount DOUBLE) WITH ('connector' = 'delta', "
    "'table-path' = '{work}/delta-append');\nINSERT INTO output SELECT id, customer, amount FROM src",
    "iceberg append": "CREATE TABLE output (id BIGINT, customer STRING, amount DOUBLE) WITH (" + ICEBERG + ", "
    "'catalog-table' = 'appended');\nINSERT INTO output SELECT id, customer, amount FROM src",
    "delta GROUP BY (merge)": "CREATE TABLE output (customer STRING, n BIGINT, total DOUBLE, PRIMARY KEY (customer) "
    "NOT ENFORCED) WITH ('connector' = 'delta', 'table-path' = '{work}/delta-totals');\n"
    "INSERT INTO output SELECT customer, COUNT(*), SUM(amount) FROM src GROUP BY customer",
    "iceberg GROUP BY (upsert)": "CREATE TABLE output (customer STRING, n BIGINT, total DOUBLE, PRIMARY KEY (customer) "
    "NOT ENFORCED) WITH (" + ICEBERG + ", 'catalog-table' = 'totals');\n"
    "INSERT INTO output SELECT customer, COUNT(*), SUM(amount) FROM src GROUP BY customer",
}


def timed(command: list[str]) -> tuple[float, dict[str, int], int, str]:
    """Wall seconds, peak RSS (VmHWM) of the driver's Python process and of Spark's JVM, exit code, stderr."""
    started = time.monotonic()
    with tempfile.TemporaryFile("w+") as err:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err, text=True)
        peaks = {"driver": 0, "jvm": 0}
        while process.poll() is None:
            procs = snapshot()
            for pid in descendants(process.pid, procs):
                kind = "driver" if pid == process.pid else role(procs[pid], procs) if pid in procs else ""
                if kind in peaks:
                    peaks[kind] = max(peaks[kind], high_water_mark(pid))
            time.sleep(0.2)
        wall = time.monotonic() - started
        err.seek(0)
        return wall, peaks, process.returncode, err.read()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--keys", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=50_000)
    args = parser.parse_args()
    with broker_workspace("bench-table-sinks-") as (work, info):
        results: dict[str, tuple[float, float, float]] = {}
        for topic in ("bench-stateful-src", "bench-stateful-latest"):
            broker.create_topic(info.bootstrap, topic, partitions=PARTITIONS)
        produce(info.bootstrap, args.records, args.keys)
        for number, (name, pipeline) in enumerate(PIPELINES.items()):
            sql = work / f"sink_{number}.sql"
            source = SOURCE.format(bootstrap=info.bootstrap, batch=args.batch)
            sql.write_text(source + pipeline.format(work=work) + ";\n")
            command = [str(Path(sys.executable).with_name("kafka-sql")), "run", str(sql), "--checkpoint-dir",
                       str(work / f"cp-{number}")]  # fmt: skip
            wall, peaks, code, err = timed(command)
            if code != 0:
                raise RuntimeError(f"{name} failed:\n{err[-3000:]}")
            results[name] = (wall, peaks["driver"] / 2**20, peaks["jvm"] / 2**20)
            print(f"{name}: {wall:.1f} s", flush=True)
    base = results["blackhole (baseline)"]
    print(f"\n{args.records:,} records ({args.keys:,} keys), {PARTITIONS} partitions, micro-batches of {args.batch:,}, "
          "kafka-sql run (local[*])")
    print(f"{'sink':<28}{'wall s':>9}{'records/s':>12}{'vs blackhole':>14}{'driver MiB':>12}{'JVM MiB':>10}")
    for name, (wall, driver, jvm) in results.items():
        print(f"{name:<28}{wall:>9.1f}{args.records / wall:>12,.0f}{wall / base[0]:>13.2f}x{driver:>12,.0f}"
              f"{jvm:>10,.0f}")
    print(f"peak RSS (VmHWM) of the driver's Python process and Spark's JVM; blackhole's: {base[1]:,.0f} / "
          f"{base[2]:,.0f} MiB")


if __name__ == "__main__":
    main()
