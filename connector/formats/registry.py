"""The formats tables can use, found by identifier (Flink's format factory discovery).

Each built-in format is a module of `connector.formats` declaring `FORMATS` (its `Format` declarations: options,
rules and the Spark codec), named in `BUILTIN`. A format from outside the project is a distribution's entry point
in the group `kafka_sql.formats` (naming a `Format`, or a module that declares `FORMATS`), or a `register(fmt)`
call; no connector, the validator or the engine changes.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from connector.plugins import DiscoveryError, ambiguous, discovered

if TYPE_CHECKING:
    from connector.options.factory import Format  # format modules build on the factory module, which uses this one

BUILTIN = (
    "json", "csv", "raw", "avro", "avro_confluent", "debezium_json", "canal_json", "maxwell_json",
    "debezium_avro_confluent", "parquet", "protobuf",
)  # fmt: skip
ENTRY_POINTS = "kafka_sql.formats"
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
    """Every format: the built-in ones first, then those of entry points and `register`."""
    if not _registered:  # built whole before it is kept: a failed discovery leaves no half registry behind
        known: dict[str, Format] = {}
        for name in BUILTIN:
            for fmt in importlib.import_module(f"connector.formats.{name}").FORMATS:
                known[fmt.identifier] = fmt
        for origin, found in discovered(ENTRY_POINTS, "FORMATS"):
            declared = found if isinstance(found, (tuple, list)) else (found,)
            # Format is not imported here (the factory module builds on this one): a Format is what has a codec slot
            if not all(hasattr(f, "identifier") and hasattr(f, "codec") for f in declared):
                raise DiscoveryError(f"Entry point {origin} names no Format.")
            for fmt in declared:
                if fmt.identifier in known:
                    raise ambiguous("format", fmt.identifier, origin)
                known[fmt.identifier] = fmt
        _registered.update(known)
    return tuple(_registered.values())


def get(identifier: str) -> Format | None:
    formats()
    return _registered.get(identifier)

