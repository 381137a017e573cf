"""The package's shape a newcomer relies on: layers that import each other one way, and one root for every error
kafka-sql raises (so that a caller tells them from a bug)."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from pathlib import Path

import connector
from connector.errors import KafkaSqlError

PACKAGE = Path(connector.__file__).parent
# The layered packages: template, dialect, validate and rewrite (connector.sql), the catalog model, planning, runtime.
LAYERED = ("connector.sql", "connector.catalog", "connector.planning", "connector.runtime")


def _imports() -> dict[str, set[str]]:
    """Each module of the package and the package modules it imports, at any level (type-checking ones too)."""
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("connector"):
                found |= {f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules else node.module
                          for a in node.names}  # fmt: skip
            elif isinstance(node, ast.Import):
                found |= {a.name for a in node.names if a.name in modules}
        graph[name] = {m for m in found if m in modules and m != name}
    return graph


def _cycle(graph: dict[str, set[str]], start: str) -> list[str] | None:
    """An import path from `start` back to itself, if there is one."""
    stack, seen = [(start, [start])], set()
    while stack:
        module, path = stack.pop()
        for imported in graph[module]:
            if imported == start:
                return [*path, start]
            if imported not in seen:
                seen.add(imported)
                stack.append((imported, [*path, imported]))
    return None


def test_the_layered_packages_import_each_other_without_a_circle() -> None:
    graph = _imports()
    layered = {m: {i for i in graph[m] if i.startswith(LAYERED)} for m in graph if m.startswith(LAYERED)}
    cycles = [c for c in (_cycle(layered, m) for m in sorted(layered)) if c]
    assert cycles == [], " -> ".join(cycles[0])


def test_every_error_kafka_sql_raises_derives_from_one_root() -> None:
    strays = []
    for info in pkgutil.walk_packages(connector.__path__, "connector."):
        if info.name.startswith("connector.dev.apicurio"):
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            own = inspect.isclass(value) and value.__module__ == info.name
            if own and issubclass(value, Exception) and not issubclass(value, (KafkaSqlError, Warning)):
                strays.append(f"{info.name}.{name}")
    assert strays == []
