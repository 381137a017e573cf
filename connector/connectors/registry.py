"""The connectors a pipeline can use, found by their 'connector' identifier (Flink's factory discovery),
and the entry points that validate and resolve a table's options through its connector's factory.

Each built-in connector is a package of `connector.connectors` whose `factory` module declares `FACTORY`, named in
`BUILTIN`. A connector from outside the project is a distribution's entry point in the group `kafka_sql.connectors`
(naming its `Factory`, or a module that declares `FACTORY`), or a `register(factory)` call; the built-ins are always
there. Adding one changes no other connector, the validator or the engine: they ask the factory what it can do.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from connector.catalog.model import Column, Table
from connector.diagnostics import Diagnostic, PipelineError, did_you_mean
from connector.options.declarations import ResolvedOptions
from connector.options.factory import CONNECTOR_KEY, Check, Factory, Format, FormatSlot, resolve_format
from connector.options.metadata import check_sink_metadata
from connector.plugins import DiscoveryError, ambiguous, discovered

BUILTIN = ("kafka", "upsert_kafka", "filesystem", "datagen", "print", "blackhole", "jdbc", "delta", "iceberg")
ENTRY_POINTS = "kafka_sql.connectors"
_registered: dict[str, Factory] = {}


def register(factory: Factory) -> None:
    """Make `factory` available to pipelines under its identifier (replacing one of the same name)."""
    factories()
    _registered[factory.identifier] = factory


def factories() -> Mapping[str, Factory]:
    """Every connector by identifier: the built-in ones first, then those of entry points and `register`."""
    if not _registered:  # built whole before it is kept: a failed discovery leaves no half registry behind
        builtin = [importlib.import_module(f"connector.connectors.{name}.factory").FACTORY for name in BUILTIN]
        found = {f.identifier: f for f in builtin}
        for origin, factory in discovered(ENTRY_POINTS, "FACTORY"):
            if not isinstance(factory, Factory):
                raise DiscoveryError(f"Entry point {origin} names no connector Factory.")
            if factory.identifier in found:
                raise ambiguous("connector", factory.identifier, origin)
            found[factory.identifier] = factory
        _registered.update(found)
    return _registered


def connector_factory(table: Table) -> Factory | None:
    """The factory of the table's 'connector', or None when it has none or an unknown one."""
    return factories().get(table.connector or "")


def validate_table(table: Table) -> list[Diagnostic]:
    """All option, format and metadata problems of a table, each at the offending key or column."""
    known = factories()
    identifier = table.connector
    available = ", ".join(sorted(known))
    if identifier is None:
        message = f"Table '{table.name}' has no 'connector' option. Available connectors: {available}."
        return [Diagnostic.at(table.position, "missing-option", message)]
    factory = known.get(identifier)
    if factory is None:
        message = (
            f"Unknown connector '{identifier}'.{did_you_mean(identifier.lower(), known)} "
            f"Available connectors: {available}."
        )
        return [Diagnostic.at(table.option_position(CONNECTOR_KEY), "unknown-connector", message)]
    return factory.validate(table)


def _usage_check(table: Table, usage: str) -> Check | None:
    factory = connector_factory(table)
    if factory is None:
        return None
    resolved, _ = factory.resolve(table)
    check = Check(table, factory, resolved, [])
    if not (factory.source if usage == "source" else factory.sink):
        other = "sink" if usage == "source" else "source"
        verb = "read from" if usage == "source" else "written to"
        check.report(
            "connector-usage",
            f"Table '{table.name}' is {verb}, but connector '{factory.identifier}' can only be used as a "
            f"{other}.",
            CONNECTOR_KEY,
        )
    return check


def validate_source(table: Table) -> list[Diagnostic]:
    """Problems that only matter when the table is read (e.g. 'group-offsets' without a group id)."""
    check = _usage_check(table, "source")
    if check is None:
        return []
    for rule in check.factory.source_rules:
        rule(check)
    return check.diagnostics


def validate_lookup(table: Table) -> list[Diagnostic]:
    """A table a lookup join (FOR SYSTEM_TIME AS OF) reads must be of a connector that looks rows up (jdbc)."""
    factory = connector_factory(table)
    if factory is None or factory.lookup is not None:
        return []
    able = ", ".join(f.identifier for f in factories().values() if f.lookup is not None)
    return [
        Diagnostic.at(
            table.option_position(CONNECTOR_KEY),
            "connector-usage",
            f"Table '{table.name}' is looked up (FOR SYSTEM_TIME AS OF), but connector '{factory.identifier}' cannot "
            f"look rows up; connectors that can: {able}. An event-time temporal join is against a versioned table: "
            "a changelog (upsert-kafka, a CDC format) with a PRIMARY KEY and a WATERMARK.",
        )
    ]


def validate_sink_metadata(table: Table) -> list[Diagnostic]:
    """Persisted metadata columns of a table written to must be writable and castable to their type."""
    factory = connector_factory(table)
    if factory is None:
        return []
    resolved, _ = factory.resolve(table)
    check = Check(table, factory, resolved, [])
    check_sink_metadata(check)
    return check.diagnostics


def validate_sink(table: Table) -> list[Diagnostic]:
    """Problems that only matter when the table is written to, metadata columns included."""
    check = _usage_check(table, "sink")
    if check is None:
        return []
    check_sink_metadata(check)
    for rule in check.factory.sink_rules:
        rule(check)
    return check.diagnostics


def _errors(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    return [d for d in diagnostics if d.severity == "error"]


def _valid_factory(table: Table) -> Factory:
    factory = connector_factory(table)
    if factory is None:
        raise PipelineError(validate_table(table))
    return factory


def resolve(table: Table) -> ResolvedOptions:
    """Typed connector options with defaults; raises PipelineError when a value does not parse."""
    resolved, diagnostics = _valid_factory(table).resolve(table)
    if _errors(diagnostics):
        raise PipelineError(_errors(diagnostics))
    return resolved


def _format_in(table: Table, role: str) -> tuple[Factory, ResolvedOptions, FormatSlot, Format, str] | None:
    factory = _valid_factory(table)
    resolved = resolve(table)
    for slot in factory.format_slots:
        identifier, spelled = resolved.get(slot.option), resolved.spelling(slot.option.key)
        if slot.role != role or identifier is None or spelled is None:
            continue
        fmt = next((f for f in factory.formats if f.identifier == identifier), None)
        if fmt is None or factory.format_problem(identifier, fmt):
            raise PipelineError(_errors(factory.validate(table)))
        return factory, resolved, slot, fmt, spelled[: -len("format")] + identifier + "."
    return None


def format_options(table: Table, role: str) -> tuple[str, dict[str, Any]] | None:
    """The format in `role` ('value' or 'key') and its typed options (unprefixed keys, defaults applied);
    None when the table has no format in that role. Open formats (parquet) also carry their extra keys."""
    found = _format_in(table, role)
    if found is None:
        return None
    _, _, _, fmt, prefix = found
    resolved, diagnostics = resolve_format(table, fmt, prefix)
    if _errors(diagnostics):
        raise PipelineError(_errors(diagnostics))
    values = resolved.as_dict()
    if fmt.open_options:
        values = {**resolved.with_prefix(prefix), **values}
    for passthrough in fmt.passthrough_prefixes:
        values.update((passthrough + k, v) for k, v in resolved.with_prefix(prefix + passthrough).items())
    return fmt.identifier, values


def format_columns(table: Table, role: str) -> list[Column]:
    """The physical columns the format in `role` (de)serializes (Kafka: key.fields / the rest)."""
    found = _format_in(table, role)
    if found is None:
        return []
    factory, resolved, slot, _, _ = found
    return factory.columns_of(table, resolved, slot.role)


def upsert_source(table: Table) -> bool:
    """Whether the table's connector reads its rows as upserts and deletes of the primary key (upsert-kafka)."""
    factory = connector_factory(table)
    return factory is not None and factory.upsert_source


def reads_changelog(table: Table) -> bool:
    """Whether the table's rows are a changelog, upserts and deletes of keys: a table of an upsert source
    (upsert-kafka), or one whose value format is a changelog format (debezium-json). False for a table whose
    options are invalid."""
    if upsert_source(table):
        return True
    try:
        found = _format_in(table, "value")
    except PipelineError:
        return False
    return found is not None and found[3].changelog


def writes_changelog(table: Table) -> bool:
    """Whether the table's value format writes changelog rows, retractions included (debezium-json): the table
    takes a changelog's deletes and old rows as messages. False for a table whose options are invalid."""
    try:
        found = _format_in(table, "value")
    except PipelineError:
        return False
    codec = found[3].codec if found is not None else None
    return codec is not None and codec.writes_changes
