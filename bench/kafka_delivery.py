"""What exactly-once costs a Kafka sink: the same pipeline into a Kafka topic with 'sink.delivery-guarantee'
'at-least-once' (the default, the baseline) and 'exactly-once' (a Kafka transaction per write task and
micro-batch), alternating, each run a whole `kafka-sql run` process as a user starts it.

    .venv/bin/python bench/kafka_delivery.py [--records 100000] [--batch 5000] [--repeats 2]

Starts a broker, writes --records JSON records (bench/stateful.py's) to a 4-partition topic and runs, bounded,
`INSERT INTO dst SELECT id, UPPER(customer), amount * 1.2, ts FROM src` with 'scan.max-records-per-batch' =
--batch, so that each run commits many micro-batches (exactly-once pays per micro-batch and write task, not per
record), into a fresh 4-partition topic each run. Prints the median wall seconds of each guarantee, per
micro-batch, and the ratio to at-least-once. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from pathlib import Path

from stateful import PARTITIONS, produce
from table_sinks import timed
from workspace import broker_workspace

from connector.dev import broker

PIPELINE = """
CREATE TABLE src (id BIGINT, customer STRING, amount DOUBLE, ts BIGINT) WITH (
  'connector' = 'kafka', 'topic' = 'bench-stateful-src', 'properties.bootstrap.servers' = '{bootstrap}',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', 'format' = 'json',
  'scan.max-records-per-batch' = '{batch}');
CREATE TABLE dst (id BIGINT, customer STRING, amount DOUBLE, ts BIGINT) WITH (
  'connector' = 'kafka', 'topic' = '{sink}', 'properties.bootstrap.servers' = '{bootstrap}', 'format' = 'json',
  'sink.delivery-guarantee' = '{guarantee}', 'sink.transactional-id-prefix' = '{sink}');
INSERT INTO dst SELECT id, UPPER(customer), amount * 1.2, ts FROM src;
"""
GUARANTEES = ("at-least-once", "exactly-once")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=5_000)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    with broker_workspace("bench-kafka-delivery-") as (work, info):
        walls: dict[str, list[float]] = {guarantee: [] for guarantee in GUARANTEES}
        for topic in ("bench-stateful-src", "bench-stateful-latest"):
            broker.create_topic(info.bootstrap, topic, partitions=PARTITIONS)
        produce(info.bootstrap, args.records, keys=1000)
        for repeat in range(args.repeats):
            for guarantee in GUARANTEES:
                run = f"{guarantee}-{repeat}"
                sink = f"bench-delivery-{run}"
                broker.create_topic(info.bootstrap, sink, partitions=PARTITIONS)
                sql = work / f"{run}.sql"
                sql.write_text(PIPELINE.format(bootstrap=info.bootstrap, batch=args.batch, sink=sink,
                                               guarantee=guarantee))  # fmt: skip
                command = [str(Path(sys.executable).with_name("kafka-sql")), "run", str(sql), "--checkpoint-dir",
                           str(work / f"cp-{run}")]  # fmt: skip
                wall, _, code, err = timed(command)
                if code != 0:
                    raise RuntimeError(f"{run} failed:\n{err[-3000:]}")
                walls[guarantee].append(wall)
                print(f"{run}: {wall:.1f} s", flush=True)
    batches = math.ceil(args.records / args.batch)
    base = statistics.median(walls["at-least-once"])
    print(f"\n{args.records:,} records, {PARTITIONS} partitions, about {batches} micro-batches of {args.batch:,}, "
          f"kafka-sql run (local[*]); medians of {args.repeats}")
    print(f"{'sink.delivery-guarantee':<26}{'wall s':>9}{'s per batch':>13}{'vs at-least-once':>18}")
    for guarantee, runs in walls.items():
        wall = statistics.median(runs)
        print(f"{guarantee:<26}{wall:>9.1f}{wall / batches:>13.2f}{wall / base:>17.2f}x")


if __name__ == "__main__":
    main()
