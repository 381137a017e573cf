"""Pipeline variables from the command line (``--var KEY=VALUE``) and from vars files.

Vars files (YAML is not available): a JSON object of strings, numbers and booleans when the file starts
with ``{``; otherwise ``KEY=VALUE`` lines as in a ``.env`` file, with blank lines, ``#`` comments, an
optional ``export`` prefix and optional matching quotes around the value. Values are strings, as
templates read them with ``var()``. Problems are ``bad-var`` (or ``io``) diagnostics pointing into the
file or at the command line.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from connector.diagnostics import Diagnostic, PipelineError

COMMAND_LINE = "<command line>"


def _bad_var(file: str, line: int, column: int, message: str) -> Diagnostic:
    return Diagnostic(file, line, column, "error", "bad-var", message)


def parse_var_args(items: Iterable[str]) -> dict[str, str]:
    """Variables from repeated `--var KEY=VALUE` arguments; the value may contain '=' and be empty."""
    variables: dict[str, str] = {}
    errors: list[Diagnostic] = []
    for item in items:
        key, equals, value = item.partition("=")
        if not equals or not key.strip():
            message = f"--var {item!r}: expected KEY=VALUE, e.g. --var brokers=localhost:9092"
            errors.append(_bad_var(COMMAND_LINE, 1, 1, message))
        else:
            variables[key.strip()] = value
    if errors:
        raise PipelineError(errors)
    return variables


def _json_scalar(value: object) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return json.dumps(value)
    return None


def _position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _json_vars(text: str, file: str) -> dict[str, str]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        message = f"Invalid JSON in vars file: {err.msg}"
        raise PipelineError([_bad_var(file, err.lineno, err.colno, message)]) from None
    if not isinstance(data, dict):
        raise PipelineError([_bad_var(file, 1, 1, "A JSON vars file must hold one object of variables")])
    variables: dict[str, str] = {}
    errors: list[Diagnostic] = []
    for key, value in data.items():
        scalar = _json_scalar(value)
        if scalar is None:
            line, column = _position(text, max(text.find(json.dumps(key)), 0))
            message = f"Variable '{key}' must be a string, number or boolean, not {type(value).__name__}"
            errors.append(_bad_var(file, line, column, message))
        else:
            variables[key] = scalar
    if errors:
        raise PipelineError(errors)
    return variables


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _env_style_vars(text: str, file: str) -> dict[str, str]:
    variables: dict[str, str] = {}
    errors: list[Diagnostic] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("export "):
            line = line[len("export ") :]
        key, equals, value = line.partition("=")
        if not equals or not key.strip():
            column = len(raw) - len(raw.lstrip()) + 1
            message = (
                f"Expected KEY=VALUE, got {line!r} "
                "(vars files are JSON or KEY=VALUE lines; YAML is not supported)"
            )
            errors.append(_bad_var(file, number, column, message))
        else:
            variables[key.strip()] = _unquote(value.strip())
    if errors:
        raise PipelineError(errors)
    return variables


def load_vars_file(path: Path | str) -> dict[str, str]:
    """Variables from a vars file: a JSON object, or KEY=VALUE lines (see the module docstring)."""
    file = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as err:
        message = f"Cannot read vars file {file}: {err}"
        raise PipelineError([Diagnostic(file, 1, 1, "error", "io", message)]) from None
    if text.lstrip().startswith("{"):
        return _json_vars(text, file)
    return _env_style_vars(text, file)
