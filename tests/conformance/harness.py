"""The conformance cases and what both engines share when running them: fresh topics, the input, the output.

A case is `cases/<name>.sql` (Flink SQL; `{{ var("brokers") }}` and one `{{ var("<topic>") }}` per topic) with its
input `cases/<name>.input.jsonl`: one record per line, `{"topic": "src", "value": ..., "key": ..., "partition": 0,
"timestamp": <epoch ms>}`, a value or key being a JSON object (written compactly), a string (its UTF-8 bytes) or
null (`"value_hex"` / `"key_hex"`: bytes that are no text); a line `{"topic": "dst", "partitions": 4}` sizes a
topic instead. Every topic variable gets a fresh topic (one partition, or as many as its records or that line need);
the sink topics are read back after the run:

* an append sink (`kafka`): its records as [partition, key, value] text, sorted (both engines may interleave
  partitions differently; SQL fixes no order);
* an upsert sink (`upsert-kafka`): the final table, value per key, deleted keys left out (Flink and Spark send
  different intermediate updates; the table they leave is what a reader sees);
* a sink in `avro-confluent` or `debezium-avro-confluent` (values written with `{"value_avro": {"schema": ...,
  "record": ...}}` input lines through the `registry_url` variable's registry): its values decoded with their writer
  schemas, as JSON text;
* a sink in `protobuf`: its messages decoded with the case's `cases/<name>.proto` (input lines write them with
  `{"value_protobuf": {"class": <Java class name>, "message": <the message as JSON>}}`), as JSON text; the
  `proto_descriptor` variable is that file's descriptor set, for kafka-sql's 'protobuf.descriptor-file' (the
  option is left out of the SQL Flink runs, which loads the classes protoc generates instead);
* a `jdbc` sink: the rows of its PostgreSQL table, as psql prints them, ordered by the first column. Variables
  `db_<name>` are fresh table names, `jdbc_url` / `jdbc_password` the test server's; lines `-- postgres: <DDL>`
  create the tables first (Flink's JDBC sink, like kafka-sql's, needs them to exist).

`cases/<name>.flink.json` holds what real Apache Flink wrote for the case (`make conformance-expected`). A case
whose SQL has a line `-- refused: <words>` is one kafka-sql cannot run with Flink's result: its `validate` must
refuse it, saying those words.
"""

from __future__ import annotations

import functools
import json
import re
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nexmark_cases as nexmark
from confluent_kafka import Consumer, Producer, TopicPartition

from connector.catalog.loader import load_text
from connector.dev import broker, postgres
from connector.dev.postgres import PostgresInfo
from connector.dev.schema_registry_server import RegistryInfo
from connector.sql.template.templating import render_string

CASES = Path(__file__).resolve().parent / "cases"
# PostgreSQL tables of the case, the database's url and password, the schema registry's url
_SERVICE_VARIABLES = ("db_", "jdbc_", "registry_", "proto_")
_VAR = re.compile(r"""var\(\s*["']([A-Za-z_][A-Za-z0-9_]*)["']""")


@dataclass(frozen=True)
class Case:
    name: str
    sql: str
    inputs: list[dict[str, Any]]
    partitions: dict[str, int]

    @classmethod
    def load(cls, name: str) -> Case:
        if name in nexmark.NAMES:  # built from Nexmark's own queries and generator (`nexmark`)
            return cls(name, nexmark.sql(name), nexmark.inputs(), {})
        path = CASES / f"{name}.input.jsonl"
        lines = path.read_text().splitlines() if path.exists() else []
        entries = [json.loads(line) for line in lines if line.strip()]
        sizes = {e["topic"]: e["partitions"] for e in entries if "partitions" in e}
        records = [e for e in entries if "partitions" not in e]
        return cls(name, (CASES / f"{name}.sql").read_text(), records, sizes)

    @property
    def refused(self) -> str | None:
        """What kafka-sql's refusal of this case says, or None when it must give Flink's output."""
        found = re.search(r"^-- refused: (.+)$", self.sql, re.MULTILINE)
        return found.group(1).strip() if found else None

    @property
    def description(self) -> str:
        """The feature the case covers: its first comment line."""
        return self.sql.splitlines()[0].removeprefix("--").strip()

    @property
    def topics(self) -> list[str]:
        """The topic variables of the SQL, in order of first use."""
        names = _VAR.findall(self.sql)
        return list(dict.fromkeys(n for n in names if n != "brokers" and not n.startswith(_SERVICE_VARIABLES)))

    @property
    def tables(self) -> list[str]:
        """The PostgreSQL table variables of the SQL ('db_*'), in order of first use."""
        return list(dict.fromkeys(n for n in _VAR.findall(self.sql) if n.startswith("db_")))

    @property
    def expected_path(self) -> Path:
        return CASES / f"{self.name}.flink.json"

    @property
    def proto(self) -> Path | None:
        """The case's .proto file, if it has one."""
        path = CASES / f"{self.name}.proto"
        return path if path.exists() else None

    def descriptor_set(self) -> Path:
        """The case's .proto compiled into a descriptor set (protoc from Maven Central), once per process."""
        assert self.proto is not None
        return _descriptor_set(self.proto)

    @property
    def uses_registry(self) -> bool:
        return "registry_url" in _VAR.findall(self.sql)

    def prepare(
        self, bootstrap: str, database: PostgresInfo | None = None, registry: RegistryInfo | None = None
    ) -> dict[str, str]:
        """Fresh topics with the input produced, fresh PostgreSQL tables made by the case's `-- postgres:` lines;
        returns the template variables (topic variable -> topic, table variable -> table, the database's)."""
        run = uuid.uuid4().hex[:8]
        variables = {t: f"conformance_{self.name}_{t}_{run}" for t in self.topics}
        if self.uses_registry:
            assert registry is not None, f"case {self.name} uses a schema registry: pass one"
            variables["registry_url"] = registry.url
        if self.tables:
            assert database is not None, f"case {self.name} writes PostgreSQL tables: pass a database"
            variables.update({t: f"{self.name}_{t}_{run}" for t in self.tables})
            variables.update(jdbc_url=database.jdbc_url, jdbc_password=database.password)
            for line in re.findall(r"^-- postgres: (.+)$", self.sql, re.MULTILINE):
                postgres.query(database, render_string(line, f"{self.name}.sql", variables).text)
        for logical, topic in [(t, variables[t]) for t in self.topics]:
            used = 1 + max((r.get("partition", 0) for r in self.inputs if r["topic"] == logical), default=0)
            partitions = max(used, self.partitions.get(logical, 1))
            broker.create_topic(bootstrap, topic, partitions)
        if self.proto is not None:
            variables["proto_descriptor"] = str(self.descriptor_set())
        # in order without idempotence, whose new producer waits 500 ms for its id (see ORDERED in tests/conftest.py)
        producer = Producer(
            {"bootstrap.servers": bootstrap, "enable.idempotence": False, "max.in.flight.requests.per.connection": 1}
        )
        for record in self.inputs:
            value: bytes | None
            if "value_avro" in record:
                value = _avro_confluent(record, variables, registry)
            elif "value_protobuf" in record:
                value = _protobuf(record["value_protobuf"], self.descriptor_set())
            else:
                value = _payload(record, "value")
            producer.produce(
                variables[record["topic"]],
                value=value,
                key=_payload(record, "key"),
                partition=record.get("partition", 0),
                timestamp=record.get("timestamp", 0),
            )
        producer.flush(30)
        return {"brokers": bootstrap, **variables}

    def render(self, variables: dict[str, str]) -> str:
        return render_string(self.sql, f"{self.name}.sql", variables).text

    def sinks(self, variables: dict[str, str]) -> dict[str, str]:
        """Sink variable -> 'append', 'upsert' (topics) or 'table' (PostgreSQL), from the tables the INSERTs write."""
        pipeline = load_text(self.render(variables), f"{self.name}.sql").pipeline
        by_name = {v: k for k, v in variables.items()}
        kinds: dict[str, str] = {}
        for insert in pipeline.inserts:
            table = pipeline.table(insert.target)
            if table is not None and table.options.get("topic") in by_name:
                kind = "upsert" if table.connector == "upsert-kafka" else "append"
                chosen = (table.options.get("format") or table.options.get("value.format") or "")
                registry = chosen.endswith("avro-confluent")  # avro-confluent, debezium-avro-confluent
                if chosen == "protobuf":
                    message_class = table.options.get("protobuf.message-class-name") or table.options.get(
                        "value.protobuf.message-class-name"
                    )
                    kinds[by_name[table.options["topic"]]] = f"{kind}:protobuf:{message_class}"
                    continue
                kinds[by_name[table.options["topic"]]] = kind + (":avro-confluent" if registry else "")
            elif table is not None and table.options.get("table-name") in by_name:
                kinds[by_name[table.options["table-name"]]] = "table"
        return kinds

    def outputs(
        self, bootstrap: str, variables: dict[str, str], database: PostgresInfo | None = None
    ) -> dict[str, Any]:
        """Every sink's output, as `harness` describes; comparable with `json.dumps(..., sort_keys=True)`."""
        result: dict[str, Any] = {}
        for logical, kind in sorted(self.sinks(variables).items()):
            if kind == "table":
                assert database is not None
                result[logical] = {"table": postgres.query(database, f"SELECT * FROM {variables[logical]} ORDER BY 1")}
                continue
            records = read_topic(bootstrap, variables[logical])
            if kind.endswith(":avro-confluent"):
                assert "registry_url" in variables
                kind, records = kind.split(":")[0], [[p, k, _from_registry(v, variables)] for p, k, v in records]
            elif ":protobuf:" in kind:
                kind, _, message_class = kind.split(":")
                descriptor = Path(variables["proto_descriptor"])
                records = [[p, k, _from_protobuf(v, message_class, descriptor)] for p, k, v in records]
            if kind == "upsert":
                table: dict[str, str | None] = {}
                for _, key, value in records:
                    table[str(key)] = value
                result[logical] = {"upsert": {k: v for k, v in sorted(table.items()) if v is not None}}
            else:
                result[logical] = {"append": sorted(records, key=lambda r: json.dumps(r))}
        return result


def _avro_confluent(record: dict[str, Any], variables: dict[str, str], registry: RegistryInfo | None) -> bytes:
    """`value_avro` ({"schema": ..., "record": ...}) written as confluent-kafka's Avro serializer writes it,
    registering the schema under the topic's value subject."""
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    assert registry is not None
    value = record["value_avro"]
    serializer = AvroSerializer(SchemaRegistryClient({"url": registry.url}), json.dumps(value["schema"]))
    encoded = serializer(value["record"], SerializationContext(variables[record["topic"]], MessageField.VALUE))
    assert encoded is not None
    return encoded


def _from_registry(text: str | None, variables: dict[str, str]) -> str | None:
    """A sink's Confluent-framed Avro value as JSON text, read with the writer schema its id names."""
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroDeserializer

    if text is None:
        return None
    data = bytes.fromhex(text[4:]) if text.startswith("hex:") else text.encode()
    decoded = AvroDeserializer(SchemaRegistryClient({"url": variables["registry_url"]}))(data, None)
    return json.dumps(decoded, sort_keys=True, default=str)


@functools.cache
def _descriptor_set(proto: Path) -> Path:
    from connector.dev import protoc

    out = Path(tempfile.mkdtemp(prefix="conformance-proto-")) / f"{proto.stem}.desc"
    return protoc.compile_protos([proto], out)


def _protobuf(value: dict[str, Any], descriptor: Path) -> bytes:
    """`{"class": ..., "message": {...}}` written as protobuf, the message given in protobuf's JSON mapping."""
    from google.protobuf import json_format

    from connector.formats.protobuf_messages import messages

    message = json_format.ParseDict(value["message"], messages(descriptor.read_bytes()).message_class(value["class"])())
    return message.SerializeToString()


def _from_protobuf(text: str | None, message_class: str, descriptor: Path) -> str | None:
    """A sink's protobuf value as JSON text: the fields it sets (proto names), sorted, maps by key."""
    from google.protobuf import json_format

    from connector.formats.protobuf_messages import messages

    if text is None:
        return None
    data = bytes.fromhex(text[4:]) if text.startswith("hex:") else text.encode()
    message = messages(descriptor.read_bytes()).message_class(message_class).FromString(data)
    return json.dumps(json_format.MessageToDict(message, preserving_proto_field_name=True), sort_keys=True)


def _payload(record: dict[str, Any], field: str) -> bytes | None:
    if f"{field}_hex" in record:
        return bytes.fromhex(record[f"{field}_hex"])
    value = record.get(field)
    if value is None:
        return None
    if isinstance(value, str):
        return value.encode()
    return json.dumps(value, separators=(",", ":")).encode()


def _text(data: bytes | None) -> str | None:
    if data is None:
        return None
    try:
        return data.decode()
    except UnicodeDecodeError:
        return "hex:" + data.hex()


def read_topic(bootstrap: str, topic: str) -> list[list[Any]]:
    """[partition, key, value] of every committed record of `topic`, in offset order per partition."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"conformance-{uuid.uuid4().hex}",
            "enable.auto.commit": False,
            "isolation.level": "read_committed",
        }
    )
    try:
        metadata = consumer.list_topics(topic, timeout=30).topics[topic]
        records: list[list[Any]] = []
        for partition in sorted(metadata.partitions):
            low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=30)
            if high <= low:
                continue
            consumer.assign([TopicPartition(topic, partition, low)])
            seen = 0
            while seen < high - low:
                message = consumer.poll(10)
                if message is None:
                    raise TimeoutError(f"topic {topic} partition {partition}: {seen} of {high - low} records read")
                offset = message.offset()
                if message.error() or offset is None:
                    continue
                seen = offset - low + 1
                records.append([partition, _text(message.key()), _text(message.value())])
        return records
    finally:
        consumer.close()


def case_names() -> list[str]:
    return sorted(p.name[: -len(".sql")] for p in CASES.glob("*.sql"))


def differences(actual: dict[str, Any], expected: dict[str, Any]) -> str:
    """What differs between two sinks' outputs, field by field where records are JSON objects in the same order:
    a failed case then says which column of which record Flink wrote otherwise."""
    lines: list[str] = []
    for sink in sorted(set(actual) | set(expected)):
        for kind in sorted(set(actual.get(sink, {})) | set(expected.get(sink, {}))):
            ours, flinks = actual.get(sink, {}).get(kind, []), expected.get(sink, {}).get(kind, [])
            if len(ours) != len(flinks):
                lines.append(f"{sink}.{kind}: {len(ours)} records, Flink {len(flinks)}")
            for index, (mine, theirs) in enumerate(zip(ours, flinks, strict=False)):
                if mine == theirs:
                    continue
                try:
                    a, b = json.loads(mine[-1]), json.loads(theirs[-1])
                except (TypeError, ValueError):
                    lines.append(f"{sink}.{kind}[{index}]: {mine!r}, Flink {theirs!r}")
                    continue
                if not (isinstance(a, dict) and isinstance(b, dict)) or mine[:-1] != theirs[:-1]:
                    lines.append(f"{sink}.{kind}[{index}]: {mine!r}, Flink {theirs!r}")
                    continue
                for field in [f for f in {**a, **b} if a.get(f) != b.get(f)]:
                    lines.append(f"{sink}.{kind}[{index}].{field}: {a.get(field)!r}, Flink {b.get(field)!r}")
    return "\n".join(lines)


# Flink's errors raised while it parses, validates or plans a statement (before any record is read): kafka-sql's
# `validate` must refuse such a case too, not only fail when it runs.
_PLANNING_ERRORS = ("ValidationException", "SqlValidatorException", "SqlParseException", "SqlParserException")


def refused_while_planning(error: str) -> bool:
    """Whether Flink's recorded error of a case is a refusal of the statement rather than a failure of the job."""
    return any(name in error for name in _PLANNING_ERRORS)
