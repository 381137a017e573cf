"""An installed kafka-sql (a wheel, not this checkout) has every data file its modules read: the function and
reserved-word lists the dialect loads when it is imported, the driver's log configuration, the registry's files."""

from __future__ import annotations

import fnmatch
from pathlib import Path

import tomllib

REPO = Path(__file__).resolve().parents[1]


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
