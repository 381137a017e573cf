"""An installed kafka-sql (a wheel, not this checkout) has every data file its modules read: the function and
reserved-word lists the dialect loads when it is imported, the driver's log configuration, the registry's files."""

from __future__ import annotations

import fnmatch
from pathlib import Path

import tomllib

REPO = Path(__file__).resolve().parents[2]
_OWN = ("connector", "pyspark_flink_kafka", "pyspark_flink_kafka_sink")
_LOADED_BY = {"pytest": "the pytest plugin (connector/entrypoints/pytest_plugin.py) is loaded by pytest only"}


def test_every_data_file_of_the_package_is_in_its_package_data() -> None:
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["connector"]
    package = REPO / "connector"
    data = [
        path.relative_to(package).as_posix()
        for path in package.rglob("*")
        if path.is_file() and path.suffix not in (".py", ".pyc") and "__pycache__" not in path.parts
    ]
    assert data, "the package has data files"
    missing = [name for name in data if not any(fnmatch.fnmatch(name, pattern) for pattern in declared)]
    assert missing == []


def test_every_module_the_package_imports_is_a_runtime_dependency() -> None:
    """A plain `pip install kafka-sql` (no extras) must be able to import every module the package imports:
    each third-party import of connector/ and the data source modules comes from a declared dependency."""
    import ast
    import sys
    from importlib.metadata import packages_distributions

    from packaging.requirements import Requirement

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    declared = {Requirement(r).name.lower().replace("_", "-") for r in project["dependencies"]}
    distributions = packages_distributions()
    missing: dict[str, str] = {}
    for folder in ("connector", "pyspark_flink_kafka", "pyspark_flink_kafka_sink"):
        for path in (REPO / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    top = name.split(".")[0]
                    if top in sys.stdlib_module_names or top in _OWN or top in _LOADED_BY:
                        continue
                    owners = {d.lower().replace("_", "-") for d in distributions.get(top, [top])}
                    if not owners & declared:
                        missing[top] = str(path.relative_to(REPO))
    assert missing == {}, f"imported at run time but not in [project] dependencies: {missing}"
