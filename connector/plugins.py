"""Connectors and formats from outside the project, found through installed distributions' entry points (Flink
finds its factories through Java's ServiceLoader): `kafka_sql.connectors` and `kafka_sql.formats`."""

from __future__ import annotations

from importlib.metadata import entry_points
from types import ModuleType
from typing import Any

from connector.errors import KafkaSqlError


class DiscoveryError(KafkaSqlError):
    """An entry point that names nothing usable, or a second declaration of an identifier (Flink's
    AmbiguousTableFactoryException): which one a pipeline gets must never depend on the install order."""


def discovered(group: str, attribute: str) -> list[tuple[str, Any]]:
    """What each installed entry point of `group` names, with where it comes from: the object itself, or a
    module's `attribute` (`FACTORY`, `FORMATS`)."""
    found = []
    for point in entry_points(group=group):
        origin = f"'{point.name} = {point.value}' (group '{group}')"
        try:
            loaded = point.load()
        except Exception as err:  # a broken plugin is named, not a traceback from importlib
            raise DiscoveryError(f"Entry point {origin} does not load: {type(err).__name__}: {err}") from err
        if isinstance(loaded, ModuleType):
            if not hasattr(loaded, attribute):
                raise DiscoveryError(f"Entry point {origin} is a module without {attribute}.")
            loaded = getattr(loaded, attribute)
        found.append((origin, loaded))
    return found


def ambiguous(kind: str, identifier: str, origin: str) -> DiscoveryError:
    """The error of an entry point declaring a `kind` identifier that is already declared."""
    return DiscoveryError(f"Entry point {origin} declares {kind} '{identifier}', which is already declared; "
                          f"a {kind} identifier names one {kind}.")  # fmt: skip
