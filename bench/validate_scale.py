"""Whether `kafka-sql validate` scales linearly with the size of a pipeline file, up to a generated 50 MB file.

Generates plain pipeline files of each size (source and sink tables with WITH options, views, INSERT ... SELECTs
with expressions; about 100 bytes a statement, so 50 MB is about 500k statements) and runs `kafka-sql validate`
(or `--verbs render,explain` too) on each in a subprocess, reading its wall and CPU time and peak memory (the
child's maximum resident set, from wait4). Prints them and, per MB of file, seconds and MB with their ratio to the
smallest size: linear scaling keeps the ratios near 1. Goal for 50 MB: under 60 s and 1.5 GB. Nothing is asserted.

    .venv/bin/python bench/validate_scale.py [--sizes 2,10,50] [--verbs validate] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

MB = 1_000_000
GOAL_SECONDS, GOAL_PEAK_MB = 60.0, 1500.0


def unit(i: int) -> str:
    """Five statements over their own tables, so the file is valid at any size."""
    return (
        f"CREATE TABLE src_{i} (id BIGINT, amount DOUBLE, name STRING) "
        "WITH ('connector' = 'datagen', 'number-of-rows' = '10');\n"
        f"CREATE TABLE out_{i} (id BIGINT, total DOUBLE, label STRING) WITH ('connector' = 'blackhole');\n"
        f"CREATE VIEW big_{i} AS SELECT id, amount * 2 AS doubled, name FROM src_{i} WHERE amount > 10;\n"
        f"INSERT INTO out_{i} SELECT id, doubled + 1, UPPER(name) FROM big_{i} WHERE id % 2 = 0;\n"
        f"INSERT INTO out_{i} SELECT id, COALESCE(amount, 0) * 1.5, CONCAT(name, '-x') FROM src_{i};\n"
    )


def write_pipeline(path: Path, size: int) -> int:
    """Writes units until the file holds `size` bytes; returns its number of statements."""
    written = units = 0
    with path.open("w", encoding="utf-8") as handle:
        while written < size:
            text = unit(units)
            handle.write(text)
            written += len(text)
            units += 1
    return units * 5


@dataclass(frozen=True)
class Measure:
    seconds: float
    cpu_seconds: float  # less disturbed than wall time by other work on a shared machine
    peak_mb: float
    code: int


def measure(verb: str, path: Path) -> Measure:
    """One `kafka-sql VERB path` in its own process: wall and CPU time, peak RSS, exit code."""
    cli = Path(sys.executable).with_name("kafka-sql")
    start = time.perf_counter()
    child = subprocess.Popen([str(cli), verb, str(path)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    return Measure(seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, child.returncode)


def run(sizes: list[float], verbs: list[str], keep: Path | None) -> int:
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        folder = keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        for verb in verbs:
            print(f"kafka-sql {verb}")
            print(f"{'file MB':>8} {'statements':>11} {'seconds':>9} {'CPU s':>7} {'s/MB':>7} {'ratio':>6} "
                  f"{'peak MB':>9} {'MB/MB':>7} {'ratio':>6}")
            base: tuple[float, float] | None = None
            for size in sizes:
                path = folder / f"pipeline_{size:g}mb.sql"
                statements = write_pipeline(path, int(size * MB))
                actual = path.stat().st_size / MB
                result = measure(verb, path)
                failed += result.code != 0
                per_mb = (result.seconds / actual, result.peak_mb / actual)
                base = base or per_mb
                print(
                    f"{actual:8.1f} {statements:11d} {result.seconds:9.1f} {result.cpu_seconds:7.1f} "
                    f"{per_mb[0]:7.2f} {per_mb[0] / base[0]:6.2f} {result.peak_mb:9.0f} {per_mb[1]:7.1f} "
                    f"{per_mb[1] / base[1]:6.2f}" + ("" if result.code == 0 else f"  exit code {result.code}"),
                    flush=True,
                )
            print(f"goal at 50 MB: under {GOAL_SECONDS:.0f} s and {GOAL_PEAK_MB:.0f} MB peak\n")
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2,10,50", help="file sizes in MB, comma-separated (default 2,10,50)")
    parser.add_argument("--verbs", default="validate", help="kafka-sql verbs to time: validate, render, explain")
    parser.add_argument("--keep", type=Path, default=None, help="write the generated files here and keep them")
    args = parser.parse_args()
    return run([float(s) for s in args.sizes.split(",")], args.verbs.split(","), args.keep)


if __name__ == "__main__":
    sys.exit(main())
