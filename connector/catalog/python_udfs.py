"""Python scalar functions, declared as Flink SQL declares them:
`CREATE [TEMPORARY [SYSTEM]] FUNCTION [IF NOT EXISTS] name AS 'package.module.function' LANGUAGE PYTHON`.

The identifier names a plain Python function, imported from the pipeline file's directory (or the PYTHONPATH), as
PyFlink's `python.files` would ship it. Its result type is Flink SQL text: given with the project's decorator
(`@connector.udf(result_type="DECIMAL(10, 2)")`) or read from its return annotation with PyFlink's mapping of
Python types (int BIGINT, float DOUBLE, str STRING, bool BOOLEAN, bytes BYTES, Decimal DECIMAL(38, 18), date DATE,
time TIME, datetime TIMESTAMP(3)). As in PyFlink, the function is called once per row, with None for NULL
arguments; on Spark it runs as an Arrow-optimized Python UDF (`connector.runtime.engine` registers it).

A table function (PyFlink's `@udtf`) is a generator: it yields its rows, each a tuple (or one value for one column),
and is joined with `LATERAL TABLE(f(...)) AS T(a, b)`. Its column types come from
`@connector.udtf(result_types=["STRING", "INT"])` or from a return annotation such as `-> Iterator[tuple[str,
int]]`; its columns are named f0, f1, ... as in Flink, unless the LATERAL TABLE alias names them.
"""

from __future__ import annotations

import datetime
import decimal
import importlib
import inspect
import sys
import types
import typing
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from connector.errors import KafkaSqlError

RESULT_TYPE = "__kafka_sql_result_type__"
RESULT_TYPES = "__kafka_sql_result_types__"  # of a table function: one per column


def outer_name(name: str) -> str:
    """The name a table function is registered under for LEFT JOIN LATERAL TABLE: it yields one row of NULLs
    where the function yields none (Spark streams no outer lateral join)."""
    return f"{name}__kafka_sql_outer"
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


class FunctionError(KafkaSqlError, ValueError):
    """The function cannot be imported or has no result type; the message says which and why."""


def udf(result_type: str) -> Callable[[F], F]:
    """Declare the Flink SQL result type of a Python function used with CREATE FUNCTION ... LANGUAGE PYTHON."""

    def mark(function: F) -> F:
        setattr(function, RESULT_TYPE, result_type)
        return function

    return mark


def udtf(result_types: str | Sequence[str]) -> Callable[[F], F]:
    """Declare a Python generator a table function (LATERAL TABLE), with the Flink SQL types of its columns."""

    def mark(function: F) -> F:
        setattr(function, RESULT_TYPES, [result_types] if isinstance(result_types, str) else list(result_types))
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


def table_result_types(function: Callable[..., Any]) -> list[str] | None:
    """The column types of a table function (its `udtf` declaration, else an Iterator/Iterable/Generator return
    annotation of a tuple or of one type); None for a scalar function."""
    declared = getattr(function, RESULT_TYPES, None)
    if isinstance(declared, list):
        return [str(t) for t in declared]
    annotation = _return_annotation(function)
    origin = typing.get_origin(annotation) or annotation  # a bare `-> Iterator` is a table function without types
    if origin not in (Iterator, Iterable, Generator):  # typing's aliases have these origins too
        return None
    row = (typing.get_args(annotation) or (None,))[0]
    fields = typing.get_args(row) if typing.get_origin(row) is tuple else (row,)
    found = [_ANNOTATION_TYPES.get(_unoptional(f)) for f in fields]
    if not fields or any(t is None for t in found):
        name = getattr(function, "__qualname__", repr(function))
        raise FunctionError(
            f"Python table function '{name}' has no column types: annotate its return (-> Iterator[tuple[str, int]]) "
            'or decorate it with @connector.udtf(result_types=["STRING", "INT"])'
        )
    return [t for t in found if t is not None]


def _return_annotation(function: Callable[..., Any]) -> Any:
    try:
        return typing.get_type_hints(function).get("return")
    except Exception:  # annotations that do not evaluate
        return None


def _unoptional(annotation: Any) -> Any:
    """`X` of `X | None` / `Optional[X]`; other annotations as they are."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        arguments = [a for a in typing.get_args(annotation) if a is not type(None)]
        return arguments[0] if len(arguments) == 1 else None
    return annotation


def parameters(function: Callable[..., Any]) -> tuple[tuple[tuple[str, str | None], ...], int, bool]:
    """`function`'s positional parameters, each with the Flink type of its annotation (None without one that maps),
    how many of them need an argument, and whether it takes *args."""
    signature = inspect.signature(function)
    try:
        hints = typing.get_type_hints(function)
    except Exception:  # annotations that do not evaluate: the parameters without their types
        hints = {}
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    found = [p for p in signature.parameters.values() if p.kind in positional]
    typed = tuple((p.name, _ANNOTATION_TYPES.get(_unoptional(hints.get(p.name)))) for p in found)
    required = sum(1 for p in found if p.default is inspect.Parameter.empty)
    variadic = any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in signature.parameters.values())
    return typed, required, variadic


def result_type(function: Callable[..., Any]) -> str:
    """The Flink SQL result type of `function`: its `udf` declaration, else its return annotation."""
    declared = getattr(function, RESULT_TYPE, None)
    if isinstance(declared, str):
        return declared
    found = _ANNOTATION_TYPES.get(_unoptional(_return_annotation(function)))
    if found is None:
        name = getattr(function, "__qualname__", repr(function))
        raise FunctionError(
            f"Python function '{name}' has no result type: annotate its return (-> int, -> str, ...) or decorate "
            'it with @connector.udf(result_type="BIGINT")'
        )
    return found
