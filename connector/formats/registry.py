"""The formats tables can use, found by identifier (Flink's format factory discovery).

Each format is a module of `connector.formats` declaring `FORMATS` (its `Format` declarations: options, rules
and the Spark codec). Adding one is a new module plus its name in `BUILTIN`, or a `register(fmt)` call from
outside the project; no connector, the validator or the engine changes.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from connector.options.factory import Format  # format modules build on the factory module, which uses this one

BUILTIN = (
    "json", "csv", "raw", "avro", "avro_confluent", "debezium_json", "canal_json", "maxwell_json",
    "debezium_avro_confluent", "parquet", "protobuf",
)  # fmt: skip
_registered: dict[str, Format] = {}


def register(fmt: Format) -> None:
    """Make `fmt` available to every connector that takes formats (replacing one of the same identifier)."""
    formats()
    _registered[fmt.identifier] = fmt


def unregister(identifier: str) -> None:
    """Forget a format registered with `register` (a plugin unloading it, a test cleaning up)."""
    formats()
    _registered.pop(identifier, None)


def formats() -> tuple[Format, ...]:
    """Every registered format, the built-in ones first."""
    if not _registered:
        for name in BUILTIN:
            for fmt in importlib.import_module(f"connector.formats.{name}").FORMATS:
                _registered[fmt.identifier] = fmt
    return tuple(_registered.values())


def get(identifier: str) -> Format | None:
    formats()
    return _registered.get(identifier)

