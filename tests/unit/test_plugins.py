"""Connectors and formats from outside the project: an installed distribution declares them as entry points
(`kafka_sql.connectors`, `kafka_sql.formats`) and `kafka-sql` validates pipelines that use them like built-in ones,
the built-ins still there. Each case runs `kafka-sql` in a fresh interpreter with the plugin's distribution on its
path, as a user who pip-installed it would."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PLUGIN = '''
"""An outside connector (a sink of rows nobody reads) and an outside format (JSON's codec under its own name)."""
from connector.formats import json
from connector.options.declarations import ConfigOption
from connector.options.factory import Factory, Format
from connector.options.types import INT, STRING

FACTORY = Factory(
    "audit-log",
    "Writes rows to an audit log.",
    options=(ConfigOption("retention-days", INT, "How long rows are kept.", default=7),),
    writer="audit_plugin.writing",
)
KEY_VALUE = Format(
    "kv",
    "key=value pairs.",
    (ConfigOption("pair-delimiter", STRING, "Between pairs.", default="&"),),
    codec=json.FORMATS[0].codec,
)
'''
PIPELINE = """
CREATE TABLE orders (id INT, name STRING) WITH (
  'connector' = 'kafka', 'topic' = 'orders', 'properties.bootstrap.servers' = 'localhost:9092',
  'properties.group.id' = 'g', 'format' = 'kv', 'kv.pair-delimiter' = ';'
);
CREATE TABLE audit (id INT, name STRING) WITH ('connector' = 'audit-log', 'retention-days' = '{days}');
INSERT INTO audit SELECT id, name FROM orders;
"""


def _install(site: Path, entry_points: str) -> None:
    """A distribution as pip leaves it in site-packages: its module and its dist-info with entry points."""
    (site / "audit_plugin.py").write_text(PLUGIN)
    info = site / "audit_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: audit-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(textwrap.dedent(entry_points))


def _validate(tmp_path: Path, site: Path, days: str = "30") -> subprocess.CompletedProcess[str]:
    pipeline = tmp_path / "audit.sql"
    pipeline.write_text(PIPELINE.format(days=days))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, "-m", "connector.entrypoints.cli", "validate", str(pipeline)]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)


ENTRY_POINTS = """
    [kafka_sql.connectors]
    audit-log = audit_plugin

    [kafka_sql.formats]
    kv = audit_plugin:KEY_VALUE
"""


@pytest.fixture
def site(tmp_path: Path) -> Path:
    site = tmp_path / "site-packages"
    site.mkdir()
    return site


def test_an_installed_connector_and_format_are_validated_like_built_in_ones(tmp_path: Path, site: Path) -> None:
    _install(site, ENTRY_POINTS)
    passed = _validate(tmp_path, site)
    assert passed.returncode == 0, passed.stdout + passed.stderr

    refused = _validate(tmp_path, site, days="a week")
    assert refused.returncode != 0
    assert "'retention-days'" in refused.stdout + refused.stderr


def test_without_the_distribution_its_connector_is_unknown_and_the_built_ins_are_listed(
    tmp_path: Path, site: Path
) -> None:
    refused = _validate(tmp_path, site)
    output = refused.stdout + refused.stderr
    assert refused.returncode != 0
    assert "Unknown connector 'audit-log'" in output and "kafka" in output


def test_a_second_connector_of_a_built_in_identifier_is_an_error_naming_the_entry_point(
    tmp_path: Path, site: Path
) -> None:
    _install(site, "[kafka_sql.connectors]\nkafka = audit_plugin:FACTORY\n")
    (site / "audit_plugin.py").write_text(PLUGIN.replace('"audit-log"', '"kafka"'))
    refused = _validate(tmp_path, site)
    output = refused.stdout + refused.stderr
    assert refused.returncode != 0
    assert "'kafka = audit_plugin:FACTORY'" in output and "declares connector 'kafka'" in output


def test_a_connector_registered_in_code_joins_the_built_in_ones() -> None:
    script = (
        "from connector.connectors import registry\n"
        "from connector.options.factory import Factory\n"
        "registry.register(Factory('audit-log', 'Audit.', options=(), writer='audit_plugin.writing'))\n"
        "print(sorted(registry.factories()))\n"
    )
    listed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    assert {"audit-log", "kafka", "upsert-kafka", "filesystem"} <= set(eval(listed.stdout))
