"""great-expectations suite files (`'quality.suite' = 'path.json'`) read into rules, and the great-expectations
objects built from rules.

A suite's failures do what `'quality.on-failure'` says (fail | drop | quarantine); `rules.SUPPORTED_TYPES`
lists the expectation types the micro-batch gate can check. great-expectations itself checks each expectation's
configuration. It is imported only inside functions, when a suite is read or an object built: the import takes
seconds.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from connector.catalog.model import Table
from connector.diagnostics import Diagnostic, Position, did_you_mean
from connector.quality.rules import (
    OF_TYPE,
    RESERVED_NAMES,
    ROW_COUNT_BETWEEN,
    ROW_COUNT_EQUAL,
    SUPPORTED_TYPES,
    Action,
    Rule,
    reserved_name,
)

_TABLE_TYPES = (ROW_COUNT_BETWEEN, ROW_COUNT_EQUAL)
_UNSUPPORTED_KWARGS = ("row_condition", "condition_parser")


def load_suite_file(
    path_text: str, pipeline_file: Path, table: Table, action: Action, where: Position, taken: set[str]
) -> tuple[list[Rule], list[Diagnostic]]:
    """The rules of a great-expectations suite JSON file (a path relative to the pipeline file)."""
    path = Path(path_text)
    if not path.is_absolute():
        path = pipeline_file.resolve().parent / path
    label = f"Suite file '{path_text}'"

    def problem(message: str) -> tuple[list[Rule], list[Diagnostic]]:
        return [], [Diagnostic.at(where, "expectation-suite", f"{label}: {message}")]

    try:
        document = json.loads(path.read_text())
    except FileNotFoundError:
        return problem(f"no such file ({path}).")
    except OSError as error:
        return problem(f"cannot be read: {error.strerror or error}.")
    except ValueError as error:
        return problem(f"is not valid JSON: {error}.")
    entries = document.get("expectations") if isinstance(document, dict) else None
    if not isinstance(entries, list):
        return problem('expected a great-expectations suite: {"name": ..., "expectations": [...]}.')
    rules: list[Rule] = []
    diagnostics: list[Diagnostic] = []
    written = [c.name for c in table.columns if c.persisted]
    for index, entry in enumerate(entries, start=1):
        found = _suite_rule(entry, index, written, action, where, path_text, taken)
        if isinstance(found, str):
            diagnostics.append(Diagnostic.at(where, "expectation-suite", f"{label}, expectation {index}: {found}"))
            continue
        rules.append(found)
        taken.add(found.name.lower())
    if not diagnostics:
        gx_problems = _gx_problems([r.configuration() for r in rules])
        diagnostics += [
            Diagnostic.at(where, "expectation-suite", f"{label}, expectation {i}: {message}")
            for i, message in gx_problems
        ]
    return rules, diagnostics


def _suite_rule(
    entry: Any, index: int, written: list[str], action: Action, where: Position, origin: str, taken: set[str]
) -> Rule | str:
    """One suite entry as a rule, or what is wrong with it."""
    if not isinstance(entry, dict):
        return "expected an object with 'type' and 'kwargs'."
    kind = entry.get("type", entry.get("expectation_type"))
    kwargs = entry.get("kwargs", {})
    meta = entry.get("meta") or {}
    if not isinstance(kind, str) or not isinstance(kwargs, dict) or not isinstance(meta, dict):
        return "expected an object with 'type' (a string), 'kwargs' and optional 'meta' (objects)."
    if kind not in SUPPORTED_TYPES:
        return (
            f"'{kind}' cannot be checked by the micro-batch gate.{did_you_mean(kind, SUPPORTED_TYPES)} "
            f"Supported: {', '.join(SUPPORTED_TYPES)}."
        )
    for key in _UNSUPPORTED_KWARGS:
        if key in kwargs:
            return f"'{key}' is not supported by the micro-batch gate; filter rows in the query instead."
    column = kwargs.get("column")
    if kind not in _TABLE_TYPES:
        if not isinstance(column, str):
            return f"'{kind}' needs a 'column'."
        if column not in written:
            return (
                f"column '{column}' is not a written column of the table.{did_you_mean(column, written)} "
                f"Columns: {', '.join(written)}."
            )
    if kind == OF_TYPE:
        message = _spark_type_problem(kwargs.get("type_"))
        if message:
            return message
    low, high = kwargs.get("min_value"), kwargs.get("max_value")
    if isinstance(low, int | float) and isinstance(high, int | float) and low > high:
        return f"'min_value' ({low}) is greater than 'max_value' ({high})."
    name = meta.get("name")
    if name is not None and not isinstance(name, str):
        return "'meta.name' must be a string."
    if name is not None and reserved_name(name):
        return f"'meta.name' '{name}': {RESERVED_NAMES}"
    if name is None:
        base = f"{kind}({column})" if column else kind
        name, count = base, 1
        while name.lower() in taken:
            count += 1
            name = f"{base}#{count}"
    elif name.lower() in taken:
        return f"the name '{name}' is already used by another expectation of the table."
    return Rule(name, kind, kwargs, action, where, origin, meta={k: v for k, v in meta.items() if k != "name"})


def _spark_type_problem(type_name: Any) -> str | None:
    from pyspark.sql import types as T

    candidate = getattr(T, str(type_name), None) if isinstance(type_name, str) else None
    if isinstance(candidate, type) and issubclass(candidate, T.DataType) and candidate is not T.DataType:
        return None
    names = [n for n, v in vars(T).items() if isinstance(v, type) and issubclass(v, T.DataType) and n.endswith("Type")]
    return (
        f"'type_' must name a Spark type, e.g. LongType or StringType, not {type_name!r}."
        + did_you_mean(str(type_name), names)
    )


def _gx_problems(configurations: Sequence[Mapping[str, Any]]) -> list[tuple[int, str]]:
    """What great-expectations itself rejects in the configurations: (1-based index, message)."""
    problems = []
    for index, config in enumerate(configurations, start=1):
        try:
            gx_expectation(config)
        except Exception as error:  # pydantic and great-expectations configuration errors
            problems.append((index, _gx_message(error)))
    return problems


def _gx_message(error: Exception) -> str:
    errors = getattr(error, "errors", None)
    if callable(errors):
        parts: dict[str, str] = {}  # by field: the first message (later ones explain alternative types)
        for item in errors():
            where = ".".join(str(p) for p in item.get("loc", ()) if p != "__root__")
            message = str(item.get("msg", ""))
            if message == "extra fields not permitted":
                parts.setdefault(where, f"'{where}' is not a parameter of this expectation")
            else:
                parts.setdefault(where, f"'{where}': {message}" if where else message)
        return "; ".join(parts.values()) + "."
    return str(error).splitlines()[0]



def gx_expectation(configuration: Mapping[str, Any]) -> Any:
    """A great-expectations Expectation from a configuration (type, kwargs, meta)."""
    from great_expectations.expectations.expectation_configuration import ExpectationConfiguration

    return ExpectationConfiguration(
        type=configuration["type"], kwargs=dict(configuration["kwargs"]), meta=dict(configuration.get("meta") or {})
    ).to_domain_obj()



def gx_context() -> Any:
    """An ephemeral great-expectations context: nothing written to disk, no progress bars, no analytics."""
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig

    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    return context
