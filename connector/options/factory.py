"""Connector and format factories (Flink's DynamicTableFactory / format factories): the options each one accepts,
its formats, metadata and rules. Validation and typed resolution are derived from these declarations, and so is
the options reference (docs/options.md), so they cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from connector.catalog.model import Column, Table
from connector.diagnostics import Diagnostic, Position, Severity, did_you_mean
from connector.formats import registry as format_registry
from connector.options.declarations import ConfigOption, FixedValue, ResolvedOptions
from connector.options.metadata import check_metadata_types

if TYPE_CHECKING:
    from connector.formats.payload import Codec

CONNECTOR_KEY = "connector"



@dataclass
class Check:
    """What a validation rule sees: the table, its typed options, and where to report."""

    table: Table
    factory: Factory
    options: ResolvedOptions
    diagnostics: list[Diagnostic]

    def position(self, key: str | None) -> Position:
        if key is None:
            return self.table.position
        return self.table.option_position(self.options.spelling(key) or key)

    def report(
        self,
        code: str,
        message: str,
        key: str | None = None,
        *,
        position: Position | None = None,
        severity: Severity = "error",
    ) -> None:
        where = position or self.position(key)
        self.diagnostics.append(Diagnostic.at(where, code, message, severity))


@dataclass
class FormatCheck(Check):
    """A rule's view of one format of a table: `options` are the format's typed options."""

    role: str
    format_key: str  # the key that chose the format, as written ('format', 'value.format', 'key.format')
    prefix: str  # what the format's own keys start with ('json.', 'value.json.', 'key.csv.')
    columns: list[Column]  # the physical columns the format (de)serializes

    def key(self, option: ConfigOption[Any]) -> str:
        """The format option's key as the table writes it ('value.json.ignore-parse-errors')."""
        return self.options.spelling(option.key) or self.prefix + option.key


Rule = Callable[[Check], None]
FormatRule = Callable[[FormatCheck], None]


@dataclass(frozen=True)
class Format:
    """A format factory: options are written '<format>.<key>' ('key.json.x' / 'value.json.x' for Kafka)."""

    identifier: str
    description: str
    options: tuple[ConfigOption[Any], ...] = ()
    codec: Codec | None = None  # what it does on Spark; None: declared so tables get "not supported yet"
    changelog: bool = False  # produces UPDATE/DELETE rows (CDC formats); insert-only otherwise
    # What carries it: 'messages' (a record per message: Kafka), 'files' (a file format: parquet), or 'any'.
    carrier: Literal["any", "messages", "files"] = "any"
    open_options: bool = False  # undeclared '<format>.*' keys are passed through to the library
    passthrough_prefixes: tuple[str, ...] = ()  # '<format>.properties.*': handed to the library untouched
    rules: tuple[FormatRule, ...] = ()
    readable_metadata: Mapping[str, str] = field(default_factory=dict)  # key -> Flink type, read as 'value.<key>'
    refusal: str = ""  # a declared format without a codec: why it cannot run here

    @property
    def supported(self) -> bool:
        return self.codec is not None


@dataclass(frozen=True)
class FormatSlot:
    """A place where a connector takes a format: `role` 'value' or 'key', chosen by `option`."""

    role: str
    option: ConfigOption[str]


@dataclass(frozen=True)
class SourceBehaviour:
    """How a source table is read, in words for `explain`, and whether it ends (bounded)."""

    bounded: bool
    words: dict[str, str]
    rows: int | None = None  # a generated source's row count, after which the runner stops its query
    final_watermark: bool = False  # a bounded scan ends with the end-of-input row (Flink's final watermark)


@dataclass(frozen=True)
class Factory:
    """A connector (Flink DynamicTableFactory): the options it accepts, its formats, metadata and rules."""

    identifier: str
    description: str
    options: tuple[ConfigOption[Any], ...]
    reader: str | None = None  # module whose `read(spark, table, ...)` gives the table's rows; None: no source
    writer: str | None = None  # module whose `start(...)` / `batch_writer(...)` write the table; None: no sink
    lookup: str | None = None  # module whose `lookup(spark, table)` gives the table for lookup joins; None: none
    describe_source: Callable[[Table, ResolvedOptions], SourceBehaviour] | None = None  # for plans and explain
    describe_sink: Callable[[Table, ResolvedOptions], dict[str, str]] | None = None
    format_slots: tuple[FormatSlot, ...] = ()
    readable_metadata: Mapping[str, str] = field(default_factory=dict)  # key -> Flink type
    writable_metadata: Mapping[str, str] = field(default_factory=dict)
    passthrough_prefixes: tuple[str, ...] = ()  # e.g. 'properties.': handed to the client untouched
    forbidden: Mapping[str, str] = field(default_factory=dict)  # key -> why this connector rejects it
    fixed: tuple[FixedValue, ...] = ()
    rules: tuple[Rule, ...] = ()
    source_rules: tuple[Rule, ...] = ()
    sink_rules: tuple[Rule, ...] = ()
    format_columns: Callable[[Table, ResolvedOptions, str], list[Column]] | None = None
    spark_packages: tuple[str, ...] = ()  # Maven coordinates of jars its Spark side needs (a JDBC driver)
    # Which changes a sink takes (Flink's ChangelogMode): 'inserts' only, 'all' (updates and deletes), or all of
    # them when the table declares a PRIMARY KEY ('with-primary-key': Flink's upsert mode of jdbc).
    updates: Literal["inserts", "all", "with-primary-key"] = "inserts"
    # What the connector can do, which the layers outside its package (planning, the engine, the quality gate, the
    # formats, the pytest plugin) ask instead of its name:
    carries: Literal["messages", "files"] | None = None  # what its formats are written in: messages or files
    topic_option: str | None = None  # the option naming its topic (a schema registry subject's, a test's topic)
    commits_offsets: bool = False  # commits its consumer group's offsets after each micro-batch (Flink: checkpoint)
    record_provenance: bool = False  # its rows come with topic, partition and offset (quarantine, quality report)
    upsert_source: bool = False  # its rows are upserts and deletes of the primary key (Flink's ChangelogNormalize)
    shows_row_kinds: bool = False  # a sink that writes each change with its kind (+I, -U, +U, -D)
    # The options of a table of this connector that stands in for any sink in a pipeline test (the pytest plugin
    # reads the sink's rows back from it); an upsert source stands in for sinks keyed by a primary key.
    stand_in: Mapping[str, str] | None = None

    @property
    def source(self) -> bool:
        return self.reader is not None

    @property
    def sink(self) -> bool:
        return self.writer is not None

    @property
    def formats(self) -> tuple[Format, ...]:
        """Every registered format; a format may still limit itself to some connectors (`Format.connectors`)."""
        return format_registry.formats() if self.format_slots else ()

    @property
    def required_options(self) -> tuple[ConfigOption[Any], ...]:
        return tuple(o for o in self.options if o.required)

    @property
    def supported_formats(self) -> tuple[str, ...]:
        return tuple(
            f.identifier
            for f in self.formats
            if f.supported and not self.refuses(f)
        )

    def metadata_for_reading(self, options: ResolvedOptions) -> dict[str, str]:
        """The metadata keys a table reads, with their Flink types: the connector's, and its value format's as
        'value.<key>' (Flink's format metadata, e.g. debezium-json's 'value.source.table')."""
        known = dict(self.readable_metadata)
        for slot in self.format_slots:
            fmt = next((f for f in self.formats if f.identifier == options.get(slot.option)), None)
            if slot.role == "value" and fmt is not None:
                known.update((f"value.{key}", flink_type) for key, flink_type in fmt.readable_metadata.items())
        return known

    def columns_of(self, table: Table, options: ResolvedOptions, role: str) -> list[Column]:
        """The physical columns the format in `role` (de)serializes."""
        if self.format_columns is not None:
            return self.format_columns(table, options, role)
        return table.physical_columns

    def resolve(self, table: Table) -> tuple[ResolvedOptions, list[Diagnostic]]:
        """Typed options with defaults, leniently: invalid values are reported and treated as unset."""
        declared = _expand_templates(self.options, table)
        forbidden = set(self.forbidden)
        values, spellings, invalid, diagnostics = _parse_options(table, declared, "", forbidden)
        for fixed in self.fixed:
            declared.append(fixed.option)
            values[fixed.option.key] = fixed.value
        resolved = ResolvedOptions(
            f"connector '{self.identifier}'", declared, values, spellings, table.options, invalid
        )
        return resolved, diagnostics

    def validate(self, table: Table) -> list[Diagnostic]:
        """Every problem of the table's options, formats and metadata columns that does not depend on
        whether the table is read or written (see `validate_source` / `validate_sink` for those)."""
        resolved, diagnostics = self.resolve(table)
        check = Check(table, self, resolved, diagnostics)
        formats_in_use = self._check_formats(check)
        self._check_unknown_keys(check, formats_in_use)
        self._check_required(check)
        check_metadata_types(check)
        for rule in self.rules:
            rule(check)
        return check.diagnostics

    def _check_unknown_keys(self, check: Check, formats_in_use: Mapping[str, Format | None]) -> None:
        declared = _expand_templates(self.options, check.table)
        known = {CONNECTOR_KEY} | {k for o in declared for k in o.spellings if k not in self.forbidden}
        format_prefixes = tuple(formats_in_use)
        format_keys = {p + o.key for p, f in formats_in_use.items() if f is not None for o in f.options}
        for key in check.table.options:
            if key in known or key.startswith((*self.passthrough_prefixes, *format_prefixes)):
                continue
            if key in self.forbidden:
                message = (
                    f"Option '{key}' is not supported by connector '{self.identifier}': {self.forbidden[key]}"
                )
                check.report("unknown-option", message, key)
                continue
            column_message = _unknown_column_template(key, self.options, check.table)
            if column_message:
                check.report("unknown-option", column_message, key)
                continue
            valid = sorted(known) + [p + "*" for p in (*self.passthrough_prefixes, *format_prefixes)]
            check.report(
                "unknown-option",
                f"Unsupported option '{key}' for connector '{self.identifier}'."
                f"{did_you_mean(key, known | format_keys)} "
                f"Supported options: {', '.join(valid)}.",
                key,
            )

    def _check_required(self, check: Check) -> None:
        slot_keys = {slot.option.key for slot in self.format_slots}
        for option in _expand_templates(self.options, check.table):
            if any(key in check.table.options and key not in self.forbidden for key in option.spellings):
                continue  # set, possibly to an invalid value that is reported already
            if option.required:
                synonyms = "".join(f" (or '{k}')" for k in option.fallback_keys)
                formats = (
                    f" Supported formats: {', '.join(self.supported_formats)}."
                    if option.key in slot_keys
                    else ""
                )
                check.report(
                    "missing-option",
                    f"Missing required option '{option.key}'{synonyms} for connector '{self.identifier}' "
                    f"in table '{check.table.name}'.{formats}",
                )
            elif option.required_when and option.required_when.applies(check.options):
                rule = option.required_when
                message = (
                    rule.message or f"Option '{option.key}' is required when {rule.condition} but missing."
                )
                check.report("missing-option", message, rule.anchor)

    def _check_formats(self, check: Check) -> dict[str, Format | None]:
        """Validates each format in use; returns them by the prefix of their keys ('value.json.', ...),
        None for formats that are unknown or not usable here."""
        in_use: dict[str, Format | None] = {}
        by_id = {f.identifier: f for f in self.formats}
        for slot in self.format_slots:
            identifier = check.options.get(slot.option)
            spelled = check.options.spelling(slot.option.key)
            if identifier is None or spelled is None:
                continue
            prefix = spelled[: -len("format")] + identifier + "."
            fmt = by_id.get(identifier)
            problem = self.format_problem(identifier, fmt)
            if problem or fmt is None:
                check.report("unsupported-format", problem, slot.option.key)
                in_use[prefix] = None
                continue
            in_use[prefix] = fmt
            self._check_format(check, fmt, slot.role, spelled, prefix)
        return in_use

    def format_problem(self, identifier: str, fmt: Format | None) -> str:
        supported = ", ".join(self.supported_formats)
        if fmt is None:
            hint = did_you_mean(identifier.lower(), [f.identifier for f in self.formats])
            return (
                f"Unknown format '{identifier}'.{hint} Supported formats for connector '{self.identifier}': "
                f"{supported}."
            )
        if not fmt.supported:
            why = f" {fmt.refusal}" if fmt.refusal else ""
            return f"format '{identifier}' is not supported yet.{why} Supported formats: {supported}."
        refusal = self.refuses(fmt)
        if refusal:
            return f"{refusal} Supported formats for connector '{self.identifier}': {supported}."
        return ""

    def refuses(self, fmt: Format) -> str:
        """Why this connector cannot take `fmt` ('' when it can): a format carried by messages in a connector of
        files or the other way round, or a changelog format in a source of upserts (Flink: "'upsert-kafka' connector
        doesn't support 'debezium-json' as value format, because 'debezium-json' is not in insert-only mode")."""
        if fmt.carrier != "any" and fmt.carrier != self.carries:
            kinds = {"messages": "a format of messages (one record each)", "files": "a file format"}
            has = f"carries {self.carries}" if self.carries else "takes no such format"
            return f"format '{fmt.identifier}' is {kinds[fmt.carrier]}; connector '{self.identifier}' {has}."
        if fmt.changelog and self.upsert_source:
            return (
                f"'{self.identifier}' connector doesn't support '{fmt.identifier}' as value format, because "
                f"'{fmt.identifier}' is not in insert-only mode."
            )
        return ""

    def _check_format(self, check: Check, fmt: Format, role: str, format_key: str, prefix: str) -> None:
        resolved, diagnostics = resolve_format(check.table, fmt, prefix)
        check.diagnostics.extend(diagnostics)
        if not fmt.open_options:
            keys = sorted(prefix + o.key for o in fmt.options)
            passthrough = tuple(prefix + p for p in fmt.passthrough_prefixes)
            for key in check.table.options:
                if key.startswith(prefix) and key not in keys and not key.startswith(passthrough or ("\0",)):
                    listing = ", ".join([*keys, *(p + "*" for p in passthrough)]) if keys else "none"
                    check.report(
                        "unknown-option",
                        f"Unsupported option '{key}' for format '{fmt.identifier}'.{did_you_mean(key, keys)} "
                        f"Supported options: {listing}.",
                        key,
                    )
        for option in fmt.options:
            if option.required and resolved.get(option) is None:
                check.report(
                    "missing-option",
                    f"Missing required option '{prefix}{option.key}' for format '{fmt.identifier}' in table "
                    f"'{check.table.name}'.",
                    format_key,
                )
        columns = self.columns_of(check.table, check.options, role)
        format_check = FormatCheck(
            check.table, self, resolved, check.diagnostics, role, format_key, prefix, columns
        )
        for rule in fmt.rules:
            rule(format_check)


def _expand_templates(options: Sequence[ConfigOption[Any]], table: Table) -> list[ConfigOption[Any]]:
    """Per-column template options instantiated for each physical column of the table."""
    expanded: list[ConfigOption[Any]] = []
    for option in options:
        if option.is_template:
            expanded.extend(option.for_column(c.name) for c in table.physical_columns)
        else:
            expanded.append(option)
    return expanded


def _unknown_column_template(key: str, options: Sequence[ConfigOption[Any]], table: Table) -> str | None:
    """A message for 'fields.<col>.kind' naming a column the table lacks, else None."""
    for option in options:
        if not option.is_template:
            continue
        head, _, tail = option.key.partition("#")
        if key.startswith(head) and key.endswith(tail) and len(key) > len(head) + len(tail):
            column = key[len(head) : len(key) - len(tail)]
            names = [c.name for c in table.physical_columns]
            return (
                f"Option '{key}' refers to column '{column}', which is not a physical column of table "
                f"'{table.name}'.{did_you_mean(column, names)} Physical columns: {', '.join(names)}."
            )
    return None


def _parse_options(
    table: Table, declared: Sequence[ConfigOption[Any]], prefix: str, forbidden: set[str]
) -> tuple[dict[str, Any], dict[str, str], set[str], list[Diagnostic]]:
    """Parses each declared option the table sets; returns values and spellings by declared key, and the keys whose
    value does not parse."""
    values: dict[str, Any] = {}
    spellings: dict[str, str] = {}
    invalid: set[str] = set()
    diagnostics: list[Diagnostic] = []
    for option in declared:
        present = [prefix + k for k in option.spellings if prefix + k in table.options and k not in forbidden]
        if not present:
            continue
        spelled = present[0]
        if len(present) > 1:
            diagnostics.append(
                Diagnostic.at(
                    table.option_position(present[1]),
                    "option-conflict",
                    f"Options {' and '.join(repr(k) for k in present)} set the same option; keep only "
                    f"'{prefix + option.key}'.",
                )
            )
        if spelled[len(prefix) :] in option.deprecated_keys:
            diagnostics.append(
                Diagnostic.at(
                    table.option_position(spelled),
                    "deprecated-option",
                    f"Option '{spelled}' is deprecated; use '{prefix + option.key}' instead.",
                    "warning",
                )
            )
        text = table.options[spelled]
        try:
            value = option.type.parse(text, spelled)
            constraint = option.constraint
            if constraint is not None and not constraint.test(value):
                raise ValueError(constraint.message.format(value=text, key=spelled, doc=constraint.doc))
        except ValueError as error:
            diagnostics.append(
                Diagnostic.at(table.option_position(spelled), "invalid-option-value", str(error))
            )
            invalid.add(option.key)
            continue
        values[option.key] = value
        spellings[option.key] = spelled
    return values, spellings, invalid, diagnostics


def resolve_format(table: Table, fmt: Format, prefix: str) -> tuple[ResolvedOptions, list[Diagnostic]]:
    """Typed options of one format, read from the table's keys under `prefix` ('value.json.')."""
    values, spellings, invalid, diagnostics = _parse_options(table, fmt.options, prefix, set())
    owner = f"format '{fmt.identifier}'"
    return ResolvedOptions(owner, fmt.options, values, spellings, table.options, invalid), diagnostics
