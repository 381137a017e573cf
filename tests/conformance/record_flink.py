"""Record what real Apache Flink writes for each conformance case (`make conformance-expected`).

    python tests/conformance/record_flink.py [case ...]

Starts the project's embedded Kafka broker, then for each case: fresh topics, the input, the case run by
`flink_job.py` under the Flink environment (FLINK_PYTHON, default .flink-venv/bin/python) with Flink's Kafka SQL
connector from Maven Central, and the sinks' output written to `cases/<name>.flink.json`. A case Flink rejects or
fails is recorded with Flink's error, so the suite can require kafka-sql to refuse it too.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from harness import Case, case_names

from connector.dev import broker, postgres
from connector.dev import schema_registry_server as registry
from connector.dev.maven import Artifact, resolve_jars
from connector.dev.postgres import PostgresInfo
from connector.dev.schema_registry_server import RegistryInfo

FLINK_VERSION = "2.3.0"
KAFKA_CONNECTOR = Artifact("org.apache.flink", "flink-sql-connector-kafka", "5.0.0-2.2")
AVRO_FORMAT = Artifact("org.apache.flink", "flink-sql-avro", FLINK_VERSION)  # an uber jar: Avro included
AVRO_CONFLUENT = Artifact("org.apache.flink", "flink-sql-avro-confluent-registry", FLINK_VERSION)  # with its client
JDBC = (
    Artifact("org.apache.flink", "flink-connector-jdbc-core", "4.0.0-2.0"),
    Artifact("org.apache.flink", "flink-connector-jdbc-postgres", "4.0.0-2.0"),
    Artifact("org.postgresql", "postgresql", "42.7.14"),
)
PROTOBUF = Artifact("org.apache.flink", "flink-protobuf", FLINK_VERSION)  # with protobuf-java, which classes need
HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent


def flink_jars() -> str:
    """Flink's Kafka SQL connector and its SQL formats the wheel lacks (avro), as flink_job.py takes them."""
    jars = []
    for artifact in (KAFKA_CONNECTOR, AVRO_FORMAT, AVRO_CONFLUENT, *JDBC):
        dest = broker.cache_dir().parent / f"{artifact.artifact}-{artifact.version}"
        jars += [j for j in resolve_jars([artifact], dest) if j.name.startswith(artifact.artifact)]
    return ";".join(str(jar) for jar in jars)


def protobuf_classes(case: Case, work: Path) -> list[str]:
    """Jars Flink's protobuf format needs for the case: the format, protobuf-java, and the case's .proto compiled
    to Java classes (protoc from Maven Central, javac) as Flink's users build them."""
    from connector.dev import protoc

    dest = broker.cache_dir().parent / f"flink-protobuf-{FLINK_VERSION}"
    runtime = [str(j) for j in resolve_jars([PROTOBUF], dest)]
    assert case.proto is not None
    sources, classes = work / "java", work / "classes"
    protoc.compile_protos([case.proto], work / "unused.desc", java_out=sources)
    java = [str(p) for p in sources.rglob("*.java")]
    classpath = ":".join(j for j in runtime if "protobuf-java" in j)
    subprocess.run(["javac", "-nowarn", "-cp", classpath, "-d", str(classes), *java], check=True)
    jar = work / f"{case.name}-classes.jar"
    subprocess.run(["jar", "cf", str(jar), "-C", str(classes), "."], check=True)
    return [*runtime, str(jar)]


# kafka-sql's own option, which Flink would reject as unknown: Flink loads the compiled classes instead.
_DESCRIPTOR_OPTION = re.compile(r"""\s*'(?:key\.|value\.)?protobuf\.descriptor-file'\s*=\s*'[^']*'\s*,""")


def record(
    case: Case, bootstrap: str, python: str, jars: str, database: PostgresInfo, schemas: RegistryInfo
) -> dict[str, object]:
    variables = case.prepare(bootstrap, database, schemas)
    if case.proto is not None:
        jars = ";".join([jars, *protobuf_classes(case, Path(tempfile.mkdtemp(prefix=f"{case.name}-")))])
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as rendered:
        rendered.write(_DESCRIPTOR_OPTION.sub("", case.render(variables)))
    run = subprocess.run(
        [python, str(HERE / "flink_job.py"), rendered.name, jars],
        capture_output=True,
        text=True,
        timeout=600,
    )
    os.unlink(rendered.name)
    if run.returncode != 0:
        lines = [line for line in run.stderr.splitlines() if "Exception:" in line or "Error:" in line]
        return {"flink": FLINK_VERSION, "error": lines[-1] if lines else run.stderr[-2000:]}
    return {"flink": FLINK_VERSION, "sinks": case.outputs(bootstrap, variables, database)}


def main() -> None:
    python = os.environ.get("FLINK_PYTHON", str(REPO / ".flink-venv" / "bin" / "python"))
    jars = flink_jars()
    data_dir = Path(tempfile.mkdtemp(prefix="conformance-broker-"))
    info = broker.start(data_dir)
    database = postgres.start()
    schemas = registry.start(data_dir / "registry")
    try:
        for name in sys.argv[1:] or case_names():
            case = Case.load(name)
            result = record(case, info.bootstrap, python, jars, database, schemas)
            case.expected_path.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
            print(f"{name}: {'error' if 'error' in result else 'recorded'}", flush=True)
    finally:
        registry.stop(schemas)
        postgres.stop(database)
        broker.stop(data_dir)


if __name__ == "__main__":
    main()
