"""Race of the record formats: the same records as JSON, as `avro` (binary and JSON-encoded), as `avro-confluent`
and as `protobuf`, run through the same pipeline by `kafka-sql run`, to see what decoding costs.

    .venv/bin/python bench/formats.py [--records 1000000] [--repeats 1] [--formats json avro-json ...]

Starts a broker and a schema registry (`connector.dev`), writes --records records (bench/race.py's, about 210
bytes as JSON) to a fresh 4-partition topic per format: JSON text; Avro binary of the table's schema as Flink
derives it (fastavro), and the same in Avro's JSON encoding ('avro.encoding' = 'json', converted per record in
Python workers); the Confluent wire format through the registry (confluent-kafka's Avro serializer); protobuf
messages of a proto3 message with the same fields (protoc from Maven Central, Google's protobuf package). Then
each runs, as a user starts it, `INSERT INTO dst SELECT id, UPPER(customer), amount * 1.2, ts FROM src WHERE
amount >= THRESHOLD` into a JSON topic (the same sink for all), timed as bench/race_flink.py times an engine:
whole process, first output record, steady-state rate between the first and the last output record. Reported
with each format's ratio to JSON (issue #16's goal: avro-confluent within 1.5x of JSON's records/s; protobuf is
decoded per record in Python workers, Spark's protobuf module not being served for Spark 4).
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import fastavro
from confluent_kafka import Producer

from connector.catalog.loader import load_text
from connector.dev import broker
from connector.dev import schema_registry_server as registry
from connector.formats.avro_schema import table_schema

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from race import PARTITIONS, record  # noqa: E402
from race_flink import Run, median, race_once  # noqa: E402
from race_spark import THRESHOLD  # noqa: E402
from workspace import broker_workspace  # noqa: E402

COLUMNS = "id BIGINT, customer STRING, amount DOUBLE, ts BIGINT"
PIPELINE = """
CREATE TABLE src ({columns}) WITH (
  'connector' = 'kafka', 'topic' = '{source}', 'properties.bootstrap.servers' = '{bootstrap}',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', 'format' = '{fmt}'{extra}
);
CREATE TABLE dst ({columns}) WITH (
  'connector' = 'kafka', 'topic' = '{sink}', 'properties.bootstrap.servers' = '{bootstrap}', 'format' = 'json'
);
INSERT INTO dst SELECT id, UPPER(customer), amount * 1.2, ts FROM src WHERE amount >= {threshold};
"""
FORMATS = ("json", "avro", "avro-json", "avro-confluent", "protobuf")
FORMAT_OF = {"avro-json": "avro"}  # a lane's 'format' option, where it is not the lane's name
PROTO = """
syntax = "proto3";
package bench;
option java_multiple_files = true;
message Order { int64 id = 1; string customer = 2; double amount = 3; int64 ts = 4; }
"""


def _descriptor(work: Path) -> Path:
    from connector.dev import protoc

    (work / "order.proto").write_text(PROTO)
    return protoc.compile_protos([work / "order.proto"], work / "order.desc")


def _avro_schema() -> dict[str, Any]:
    table = load_text(f"CREATE TABLE t ({COLUMNS}) WITH ('connector' = 'blackhole');", "t.sql").pipeline.table("t")
    assert table is not None
    return table_schema([(c.name, c.data_type, c.nullable) for c in table.columns if c.data_type is not None])


def _encoder(fmt: str, topic: str, registry_url: str, descriptor: Path) -> Callable[[dict[str, Any]], bytes]:
    if fmt == "protobuf":
        from connector.formats.protobuf_messages import messages

        order = messages(descriptor.read_bytes()).message_class("bench.Order")
        return lambda value: bytes(order(**value).SerializeToString())
    schema = fastavro.parse_schema(_avro_schema())
    if fmt == "avro":

        def plain(value: dict[str, Any]) -> bytes:
            out = io.BytesIO()
            fastavro.schemaless_writer(out, schema, value)
            return out.getvalue()

        return plain
    if fmt == "avro-json":

        def as_json(value: dict[str, Any]) -> bytes:
            out = io.StringIO()
            fastavro.json_writer(out, schema, [value])
            return out.getvalue().encode()

        return as_json
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    serializer = AvroSerializer(SchemaRegistryClient({"url": registry_url}), json.dumps(_avro_schema()))
    context = SerializationContext(topic, MessageField.VALUE)
    return lambda value: serializer(value, context) or b""


def produce(bootstrap: str, topic: str, count: int, fmt: str, registry_url: str, descriptor: Path) -> int:
    """Write `count` records in `fmt`; returns how many the pipeline's filter keeps."""
    encode = None if fmt == "json" else _encoder(fmt, topic, registry_url, descriptor)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 50, "batch.size": 1_000_000})
    kept = 0
    for i in range(count):
        key, value, selected = record(i)
        kept += selected
        if encode is not None:
            fields = json.loads(value)
            value = encode({k: fields[k] for k in ("id", "customer", "amount", "ts")})
        while True:
            try:
                producer.produce(topic, value, key, partition=i % PARTITIONS)
                break
            except BufferError:  # the local queue is full: let deliveries complete
                producer.poll(0.1)
    if producer.flush(300):
        raise RuntimeError(f"records were not all delivered to {topic}")
    return kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--formats", nargs="+", choices=FORMATS, default=list(FORMATS), help="json is the baseline")
    args = parser.parse_args()
    with broker_workspace("race-formats-") as (work, info):
        schemas = registry.start(work / "registry")
        results: dict[str, Run] = {}
        descriptor = _descriptor(work)
        extras = {
            "avro-json": ", 'avro.encoding' = 'json'",
            "avro-confluent": f", 'avro-confluent.url' = '{schemas.url}'",
            "protobuf": f", 'protobuf.descriptor-file' = '{descriptor}', 'protobuf.message-class-name' = 'bench.Order'",
        }
        try:
            for fmt in ["json", *(f for f in args.formats if f != "json")]:
                source = f"race-formats-{fmt}"
                broker.create_topic(info.bootstrap, source, partitions=PARTITIONS)
                expected = produce(info.bootstrap, source, args.records, fmt, schemas.url, descriptor)
                runs = []
                for repeat in range(args.repeats):
                    sink = f"race-formats-out-{fmt}-{repeat}"
                    extra = extras.get(fmt, "")
                    sql = work / f"{fmt.replace('-', '_')}_{repeat}.sql"
                    option = FORMAT_OF.get(fmt, fmt)
                    sql.write_text(PIPELINE.format(columns=COLUMNS, source=source, sink=sink, bootstrap=info.bootstrap,
                                                   fmt=option, extra=extra, threshold=THRESHOLD))  # fmt: skip
                    command = [str(Path(sys.executable).with_name("kafka-sql")), "run", str(sql),
                               "--checkpoint-dir", str(work / f"cp-{fmt}-{repeat}")]  # fmt: skip
                    runs.append(race_once(fmt, command, info.bootstrap, sink, expected))
                results[fmt] = median(runs)
                print(f"{fmt}: {results[fmt]}", flush=True)
        finally:
            registry.stop(schemas)
    base = results["json"]
    print(f"\n{args.records:,} records, {PARTITIONS} partitions, kafka-sql run (local[*])")
    print(f"{'format':<16}{'wall s':>9}{'first s':>9}{'records/s':>12}{'rate vs json':>14}")
    for fmt, run in results.items():
        print(f"{fmt:<16}{run.wall:>9.1f}{run.first:>9.1f}{run.rate:>12,.0f}{run.rate / base.rate:>13.2f}x")


if __name__ == "__main__":
    main()
