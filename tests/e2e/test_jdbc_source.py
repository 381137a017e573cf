"""The `jdbc` connector as a bounded source on a real PostgreSQL server (the rows it reads, each type and the
partitioned read, are compared with real Flink's in conformance case `jdbc_scan`): a read the database refuses
names the table and its reason, 'scan.partition.*' is all or nothing as in Flink, and a checkpoint that read the
table does not read it again."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from support.commands import run
from support.topics import read_topic

from connector.dev import postgres
from connector.entrypoints import cli

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PIPELINE = """
CREATE TABLE items (id BIGINT, name STRING) WITH (
  'connector' = 'jdbc', 'url' = '{{ var("url") }}', 'table-name' = '{{ var("table") }}',
  'username' = 'kafka_sql', 'password' = '{{ var("password") }}'{{ var("extra", "") }}
);
CREATE TABLE copied (id BIGINT, name STRING) WITH (
  'connector' = 'kafka', 'topic' = '{{ var("topic") }}', 'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);
INSERT INTO copied SELECT id, name FROM items;
"""


def _run(capsys: pytest.CaptureFixture[str], tmp_path: Path, **variables: str) -> Any:
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "copy.sql").write_text(PIPELINE)
    return run(capsys, tmp_path / "copy.sql", tmp_path / "cp", **variables)


@pytest.mark.slow
def test_a_table_is_read_once_per_checkpoint_and_a_refused_read_names_table_and_reason(
    spark: SparkSession,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    postgres_server: postgres.PostgresInfo,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    postgres.query(postgres_server, "CREATE TABLE scanned (id BIGINT, name TEXT)")
    postgres.query(postgres_server, "INSERT INTO scanned VALUES (1, 'ann'), (2, 'bob')")
    topic = topic_factory()
    variables = {"url": postgres_server.jdbc_url, "password": postgres_server.password, "brokers": kafka_bootstrap,
                 "topic": topic}  # fmt: skip

    first = _run(capsys, tmp_path, table="scanned", **variables)
    postgres.query(postgres_server, "INSERT INTO scanned VALUES (3, 'cy')")
    again = _run(capsys, tmp_path, table="scanned", **variables)  # same checkpoint: the table was read
    missing = _run(capsys, tmp_path / "other", table="nowhere", **variables)

    assert first.code == 0, first.err
    assert again.code == 0, again.err
    assert read_topic(kafka_bootstrap, topic) == [{"id": 1, "name": "ann"}, {"id": 2, "name": "bob"}]
    assert missing.code != 0
    assert "reading table nowhere at jdbc:postgresql://" in missing.err
    assert 'relation "nowhere" does not exist' in missing.err
    assert postgres_server.password not in first.err + missing.err


def test_scan_partition_options_are_all_or_none(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "copy.sql"
    path.write_text(PIPELINE)
    extra = ", 'scan.partition.column' = 'id', 'scan.partition.num' = '4'"
    variables = {"url": "jdbc:postgresql://db:5432/x", "table": "t", "password": "p", "brokers": "b:9092",
                 "topic": "t", "extra": extra}  # fmt: skip

    code = cli.main(["validate", str(path), "--format", "json", *[f"--var={k}={v}" for k, v in variables.items()]])

    [error] = json.loads(capsys.readouterr().out)["diagnostics"]
    assert code == 1
    assert error["code"] == "missing-option"
    assert "Either all or none of the 'scan.partition.*' options must be set; missing: " in error["message"]
    assert "'scan.partition.lower-bound', 'scan.partition.upper-bound'" in error["message"]
