"""Run one rendered pipeline file on real Apache Flink (PyFlink), the way the conformance suite records it.

Runs under the Flink environment (`make conformance-expected` creates it), not the project's:
    python flink_job.py <rendered.sql> <jar>[;<jar>...]
A local mini-cluster in streaming mode, parallelism 1, a checkpoint every second, no restarts, UTC; each
INSERT (or statement set, or CREATE TABLE ... AS SELECT) runs until its bounded sources end.
"""

from __future__ import annotations

import re
import sys

from pyflink.table import EnvironmentSettings, TableEnvironment


def statements(script: str) -> list[str]:
    """The script's statements: a line ending in ';' ends one, except inside a statement set, which ends at END;."""
    found: list[str] = []
    current: list[str] = []
    in_set = False
    for line in script.splitlines():
        stripped = line.strip()
        if not current and (not stripped or stripped.startswith("--")):
            continue
        current.append(line)
        upper = stripped.upper()
        if upper.startswith(("EXECUTE STATEMENT SET", "BEGIN STATEMENT SET")):
            in_set = True
        if stripped.endswith(";") and (not in_set or upper.startswith("END")):
            found.append("\n".join(current).strip().rstrip(";"))
            current, in_set = [], False
    if current:
        found.append("\n".join(current).strip().rstrip(";"))
    return found


def main() -> None:
    script_path, jars = sys.argv[1], sys.argv[2]
    environment = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    config = environment.get_config()
    config.set("pipeline.jars", ";".join(f"file://{jar}" for jar in jars.split(";")))
    config.set("parallelism.default", "1")
    config.set("execution.checkpointing.interval", "1 s")
    config.set("restart-strategy.type", "none")
    config.set("table.local-time-zone", "UTC")
    with open(script_path, encoding="utf-8") as script:
        for statement in statements(script.read()):
            setting = re.fullmatch(r"SET\s+'([^']+)'\s*=\s*'([^']*)'", statement, re.IGNORECASE)
            if setting:  # the SQL client's SET; a TableEnvironment takes it as configuration
                config.set(setting.group(1), setting.group(2))
                continue
            result = environment.execute_sql(statement)
            if result.get_job_client() is not None:  # INSERT, a statement set, CREATE TABLE ... AS SELECT
                result.wait()


if __name__ == "__main__":
    main()
