"""Python scalar functions, declared as Flink SQL declares them:
`CREATE [TEMPORARY [SYSTEM]] FUNCTION [IF NOT EXISTS] name AS 'package.module.function' LANGUAGE PYTHON`.

The identifier names a plain Python function, imported from the pipeline file's directory (or the PYTHONPATH), as
PyFlink's `python.files` would ship it. Its result type is Flink SQL text: given with the project's decorator
(`@connector.udf(result_type="DECIMAL(10, 2)")`) or read from its return annotation with PyFlink's mapping of
Python types (int BIGINT, float DOUBLE, str STRING, bool BOOLEAN, bytes BYTES, Decimal DECIMAL(38, 18), date DATE,
time TIME, datetime TIMESTAMP(3)). As in PyFlink, the function is called once per row, with None for NULL
arguments; on Spark it runs as an Arrow-optimized Python UDF (`connector.runtime.engine` registers it).
"""

from __future__ import annotations

import datetime
import decimal
import importlib
import sys
import types
import typing
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

RESULT_TYPE = "__kafka_sql_result_type__"
_ANNOTATION_TYPES: dict[Any, str] = {
    int: "BIGINT",
    float: "DOUBLE",
    str: "STRING",
    bool: "BOOLEAN",
    bytes: "BYTES",
    decimal.Decimal: "DECIMAL(38, 18)",
    datetime.date: "DATE",
    datetime.time: "TIME",
    datetime.datetime: "TIMESTAMP(3)",
}

F = TypeVar("F", bound=Callable[..., Any])


class FunctionError(ValueError):
    """The function cannot be imported or has no result type; the message says which and why."""


def udf(result_type: str) -> Callable[[F], F]:
    """Declare the Flink SQL result type of a Python function used with CREATE FUNCTION ... LANGUAGE PYTHON."""

    def mark(function: F) -> F:
        setattr(function, RESULT_TYPE, result_type)
        return function

    return mark


@contextmanager
def _searching(directories: Sequence[Path]) -> Iterator[None]:
    added = [str(d) for d in directories if str(d) not in sys.path]
    sys.path[:0] = added
    try:
        yield
    finally:
        for entry in added:
            sys.path.remove(entry)


def resolve(identifier: str, directories: Sequence[Path]) -> Callable[..., Any]:
    """The function `identifier` ('module.function' or 'package.module.function') names."""
    module_name, _, attribute = identifier.rpartition(".")
    if not module_name:
        raise FunctionError(f"'{identifier}' is not a Python function name: write 'module.function'")
    with _searching(directories):
        try:
            module = importlib.import_module(module_name)
        except Exception as err:  # the user's module: any error in it
            where = ", ".join(str(d) for d in directories)
            raise FunctionError(
                f"Python module '{module_name}' cannot be imported ({type(err).__name__}: {err}); it is looked for "
                f"in {where} and on the PYTHONPATH"
            ) from None
    function = getattr(module, attribute, None)
    if not callable(function):
        raise FunctionError(f"Python module '{module_name}' has no function '{attribute}'")
    return typing.cast(Callable[..., Any], function)


def result_type(function: Callable[..., Any]) -> str:
    """The Flink SQL result type of `function`: its `udf` declaration, else its return annotation."""
    declared = getattr(function, RESULT_TYPE, None)
    if isinstance(declared, str):
        return declared
    try:
        annotation = typing.get_type_hints(function).get("return")
    except Exception:  # annotations that do not evaluate
        annotation = None
    arguments = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        annotation = arguments[0] if len(arguments) == 1 else None
    found = _ANNOTATION_TYPES.get(annotation)
    if found is None:
        name = getattr(function, "__qualname__", repr(function))
        raise FunctionError(
            f"Python function '{name}' has no result type: annotate its return (-> int, -> str, ...) or decorate "
            'it with @connector.udf(result_type="BIGINT")'
        )
    return found
