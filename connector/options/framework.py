"""Connector and format options, declared once in Flink's ConfigOption / factory style.

A `ConfigOption` carries everything about one `WITH (...)` key: its type, default, when it is required and
its description. A `Factory` (connector) or `Format` groups the options it accepts, its metadata columns and
its validation rules. Validation, typed resolution and the generated options reference (docs/options.md)
are all derived from these declarations, so they cannot drift apart.
"""

from __future__ import annotations

import codecs
import dataclasses
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Generic, TypeVar, cast

from connector.diagnostics import Diagnostic, PipelineError, Position, Severity, did_you_mean
from connector.sql.catalog import Column, ColumnKind, Table

T = TypeVar("T")

CONNECTOR_KEY = "connector"

# ---------------------------------------------------------------------------------------------------------
# Option types: parse the string written in WITH (...) into a typed value
# ---------------------------------------------------------------------------------------------------------


def _invalid_value(text: str, key: str, expected: str) -> ValueError:
    """The one wording used for every unparseable option value."""
    return ValueError(f"Invalid value '{text}' for option '{key}': expected {expected}.")


class OptionType(ABC, Generic[T]):
    """How one kind of option value is parsed, described in the docs and rendered as a default."""

    @abstractmethod
    def parse(self, text: str, key: str) -> T:
        """Parse `text` written for option `key`; raise ValueError with a user-facing message."""

    @abstractmethod
    def describe(self) -> str:
        """The type column of the options reference."""

    def render(self, value: T) -> str:
        """A default value as a user would write it."""
        return str(value)


class _StringType(OptionType[str]):
    def parse(self, text: str, key: str) -> str:
        return text

    def describe(self) -> str:
        return "String"


class _IntType(OptionType[int]):
    def __init__(self, name: str, bits: int) -> None:
        self.name = name
        self.bits = bits

    def parse(self, text: str, key: str) -> int:
        if not re.fullmatch(r"[+-]?\d+", text.strip()):
            raise _invalid_value(text, key, f"an integer ({self.name})")
        value = int(text.strip())
        limit = 2 ** (self.bits - 1)
        if not -limit <= value < limit:
            raise _invalid_value(text, key, f"an integer between {-limit} and {limit - 1} ({self.name})")
        return value

    def describe(self) -> str:
        return self.name


class _FloatType(OptionType[float]):
    def parse(self, text: str, key: str) -> float:
        if not re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", text.strip()):
            raise _invalid_value(text, key, "a number (Float)")
        return float(text)

    def describe(self) -> str:
        return "Float"


class _NumberType(OptionType[int | float]):
    """An integer or decimal number, kept exact when integral (datagen bounds of BIGINT columns)."""

    def parse(self, text: str, key: str) -> int | float:
        stripped = text.strip()
        if re.fullmatch(r"[+-]?\d+", stripped):
            return int(stripped)
        return FLOAT.parse(text, key)

    def describe(self) -> str:
        return "Number (as the column type)"


class _BooleanType(OptionType[bool]):
    def parse(self, text: str, key: str) -> bool:
        lowered = text.strip().lower()
        if lowered not in ("true", "false"):
            raise _invalid_value(text, key, "'true' or 'false'")
        return lowered == "true"

    def describe(self) -> str:
        return "Boolean"

    def render(self, value: bool) -> str:
        return "true" if value else "false"


# Flink TimeUtils labels with the unit's length in nanoseconds; the first label is used when rendering.
_DURATION_UNITS: tuple[tuple[tuple[str, ...], int], ...] = (
    (("d", "day", "days"), 86_400_000_000_000),
    (("h", "hour", "hours"), 3_600_000_000_000),
    (("min", "m", "minute", "minutes"), 60_000_000_000),
    (("s", "sec", "secs", "second", "seconds"), 1_000_000_000),
    (("ms", "milli", "millis", "millisecond", "milliseconds"), 1_000_000),
    (("µs", "us", "micro", "micros", "microsecond", "microseconds"), 1_000),
    (("ns", "nano", "nanos", "nanosecond", "nanoseconds"), 1),
)
_DURATION_LABELS = {label: nanos for labels, nanos in _DURATION_UNITS for label in labels}


def parse_duration(text: str, key: str) -> timedelta:
    """Flink duration syntax: a non-negative integer and an optional unit; a bare number is milliseconds."""
    match = re.fullmatch(r"\s*(\d+)\s*([^\d\s]*)\s*", text)
    if match:
        label = match.group(2).lower()
        nanos = _DURATION_LABELS.get(label) if label else _DURATION_LABELS["ms"]
        if nanos is not None:
            return timedelta(microseconds=int(match.group(1)) * nanos // 1000)
    units = "; ".join("/".join(labels) for labels, _ in _DURATION_UNITS)
    raise _invalid_value(
        text,
        key,
        "a duration such as '30 s', '5 min', '1 h' or '500 ms' (a bare number means milliseconds; units: "
        f"{units})",
    )


class _DurationType(OptionType[timedelta]):
    def parse(self, text: str, key: str) -> timedelta:
        return parse_duration(text, key)

    def describe(self) -> str:
        return "Duration"

    def render(self, value: timedelta) -> str:
        nanos = value // timedelta(microseconds=1) * 1000
        for labels, unit in _DURATION_UNITS:
            if nanos % unit == 0 and nanos >= unit:
                return f"{nanos // unit} {labels[0]}"
        return "0 ms"


_MEMORY_UNITS: tuple[tuple[tuple[str, ...], int], ...] = (
    (("tb", "t", "tebibytes"), 1 << 40),
    (("gb", "g", "gibibytes"), 1 << 30),
    (("mb", "m", "mebibytes"), 1 << 20),
    (("kb", "k", "kibibytes"), 1 << 10),
    (("b", "bytes"), 1),
)
_MEMORY_FACTORS = {label: factor for labels, factor in _MEMORY_UNITS for label in labels}


class _MemorySizeType(OptionType[int]):
    """Flink MemorySize ('128mb', '1 gb', bare number = bytes), as a number of bytes."""

    def parse(self, text: str, key: str) -> int:
        match = re.fullmatch(r"\s*(\d+)\s*([a-zA-Z]*)\s*", text)
        if match:
            label = match.group(2).lower()
            factor = _MEMORY_FACTORS.get(label) if label else 1
            if factor is not None:
                return int(match.group(1)) * factor
        raise _invalid_value(text, key, "a memory size such as '128mb', '1gb', '512kb' or a number of bytes")

    def describe(self) -> str:
        return "MemorySize"

    def render(self, value: int) -> str:
        for labels, factor in _MEMORY_UNITS:
            if value % factor == 0 and value >= factor:
                return f"{value // factor}{labels[0]}"
        return "0b"


class _ListType(OptionType[list[str]]):
    """Flink list options: items separated by ';' ('topic-1;topic-2')."""

    def parse(self, text: str, key: str) -> list[str]:
        return [item.strip() for item in text.split(";") if item.strip()]

    def describe(self) -> str:
        return "List<String> (';'-separated)"

    def render(self, value: list[str]) -> str:
        return ";".join(value)


class EnumType(OptionType[str]):
    """A closed set of values, matched case-insensitively ('-' and '_' interchangeable), as Flink does."""

    def __init__(self, values: Sequence[str]) -> None:
        self.values = tuple(values)

    @staticmethod
    def _norm(text: str) -> str:
        return text.strip().lower().replace("_", "-")

    def parse(self, text: str, key: str) -> str:
        for value in self.values:
            if self._norm(value) == self._norm(text):
                return value
        hint = did_you_mean(self._norm(text), [self._norm(v) for v in self.values])
        raise ValueError(
            f"Invalid value '{text}' for option '{key}': expected one of {', '.join(self.values)}.{hint}"
        )

    def describe(self) -> str:
        return "Enum: " + " | ".join(f"`{v}`" for v in self.values)


def _unescape_java(text: str) -> str:
    """Java string escapes (\\t, \\n, \\uXXXX ...), as Flink's CSV format applies to its delimiter."""
    simple = {"t": "\t", "n": "\n", "r": "\r", "f": "\f", "b": "\b", "\\": "\\", "'": "'", '"': '"'}

    def replace(match: re.Match[str]) -> str:
        escape = match.group(1)
        if escape.startswith("u"):
            return chr(int(escape[1:], 16))
        return simple.get(escape, match.group(0))

    return re.sub(r"\\(u[0-9a-fA-F]{4}|.)", replace, text)


class CharType(OptionType[str]):
    """A single character; with `unescape`, Java escapes such as '\\t' are resolved first."""

    def __init__(self, unescape: bool = False) -> None:
        self.unescape = unescape

    def parse(self, text: str, key: str) -> str:
        value = _unescape_java(text) if self.unescape else text
        if len(value) != 1:
            raise ValueError(f"Option '{key}' must be a string with single character, but was: {text}")
        return value

    def describe(self) -> str:
        return "Character" + (" (Java escapes such as `\\t` allowed)" if self.unescape else "")


class _CharsetType(OptionType[str]):
    def parse(self, text: str, key: str) -> str:
        try:
            codecs.lookup(text)
        except LookupError:
            raise _invalid_value(
                text, key, "a charset name such as 'UTF-8', 'ISO-8859-1' or 'UTF-16'"
            ) from None
        return text

    def describe(self) -> str:
        return "Charset name"


STRING: OptionType[str] = _StringType()
INT: OptionType[int] = _IntType("Integer", 32)
LONG: OptionType[int] = _IntType("Long", 64)
FLOAT: OptionType[float] = _FloatType()
NUMBER: OptionType[int | float] = _NumberType()
BOOLEAN: OptionType[bool] = _BooleanType()
DURATION: OptionType[timedelta] = _DurationType()
MEMORY_SIZE: OptionType[int] = _MemorySizeType()
LIST: OptionType[list[str]] = _ListType()
CHARSET: OptionType[str] = _CharsetType()


def ENUM(*values: str) -> EnumType:
    return EnumType(values)


def CHAR(unescape: bool = False) -> CharType:
    return CharType(unescape)


# ---------------------------------------------------------------------------------------------------------
# Option declarations
# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Constraint(Generic[T]):
    """A check on an already typed value; `doc` reads as a predicate ("must be at least 1")."""

    doc: str
    test: Callable[[T], bool]
    message: str = "Invalid value '{value}' for option '{key}': {doc}."


def at_least(minimum: int) -> Constraint[int]:
    return Constraint(f"must be at least {minimum}", lambda value: value >= minimum)


def fraction() -> Constraint[float]:
    return Constraint("must be between 0.0 and 1.0", lambda value: 0.0 <= value <= 1.0)


@dataclass(frozen=True)
class RequiredWhen:
    """An option required only under a condition on the other options.

    `condition` is the human-readable form used in docs and errors; `applies` evaluates it on the typed
    options; `anchor` is the key the error points at (the one that made the option necessary).
    """

    condition: str
    applies: Callable[[ResolvedOptions], bool]
    anchor: str | None = None
    message: str | None = None


@dataclass(frozen=True, eq=False)
class ConfigOption(Generic[T]):
    """One option key with its type, default, requiredness and description (Flink's ConfigOption).

    `fallback_keys` are synonyms (`format` for `value.format`); `deprecated_keys` still work but warn
    (`sink.semantic` for `sink.delivery-guarantee`). A `#` in the key is a per-column template
    (`fields.#.kind`), instantiated with `for_column`.
    """

    key: str
    type: OptionType[T]
    description: str
    default: T | None = None
    required: bool = False
    required_when: RequiredWhen | None = None
    fallback_keys: tuple[str, ...] = ()
    deprecated_keys: tuple[str, ...] = ()
    constraint: Constraint[T] | None = None
    spark_only: bool = False

    @property
    def spellings(self) -> tuple[str, ...]:
        """Every key that sets this option, in precedence order."""
        return (self.key, *self.fallback_keys, *self.deprecated_keys)

    @property
    def is_template(self) -> bool:
        return "#" in self.key

    def for_column(self, column: str) -> ConfigOption[T]:
        return dataclasses.replace(self, key=self.key.replace("#", column))

    def as_required(self) -> ConfigOption[T]:
        """The same option, required (a connector that needs what another one treats as optional)."""
        return dataclasses.replace(self, required=True)


@dataclass(frozen=True)
class FixedValue:
    """A value a connector always uses for an option it does not let users set."""

    option: ConfigOption[Any]
    value: Any


class ResolvedOptions:
    """Typed option values of one table (or of one of its formats), defaults applied.

    `get(KafkaOptions.SCAN_STARTUP_MODE)` returns the parsed value, or the declared default when unset.
    """

    def __init__(
        self,
        owner: str,
        declared: Sequence[ConfigOption[Any]],
        values: Mapping[str, Any],
        spellings: Mapping[str, str],
        raw: Mapping[str, str],
    ) -> None:
        self.owner = owner
        self._declared = {option.key: option for option in declared}
        self._values = dict(values)
        self._spellings = dict(spellings)
        self.raw = dict(raw)

    def get(self, option: ConfigOption[T]) -> T | None:
        if option.key not in self._declared:
            raise KeyError(f"'{option.key}' is not an option of {self.owner}")
        if option.key in self._values:
            return cast(T, self._values[option.key])
        return option.default

    def require(self, option: ConfigOption[T]) -> T:
        """`get` for options that always have a value after validation (required or defaulted)."""
        value = self.get(option)
        if value is None:
            raise LookupError(f"option '{option.key}' of {self.owner} has no value")
        return value

    def is_set(self, option: ConfigOption[Any]) -> bool:
        """True when the table sets the option itself (under any of its spellings)."""
        return option.key in self._spellings

    def spelling(self, key: str) -> str | None:
        """The key as written in the table for declared option `key` (it may be a synonym)."""
        return self._spellings.get(key)

    def with_prefix(self, prefix: str) -> dict[str, str]:
        """Raw options under `prefix`, prefix stripped (e.g. the Kafka client `properties.*`)."""
        return {k[len(prefix) :]: v for k, v in self.raw.items() if k.startswith(prefix)}

    @property
    def properties(self) -> dict[str, str]:
        return self.with_prefix("properties.")

    def as_dict(self) -> dict[str, Any]:
        """Every declared option by key, typed, defaults applied."""
        return {key: self.get(option) for key, option in self._declared.items()}


# ---------------------------------------------------------------------------------------------------------
# Formats and connector factories
# ---------------------------------------------------------------------------------------------------------


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
    supported: bool = True
    changelog: bool = False  # produces UPDATE/DELETE rows (CDC formats); insert-only otherwise
    connectors: tuple[str, ...] = ()  # when set, only these connectors can use the format
    open_options: bool = False  # undeclared '<format>.*' keys are passed through to the library
    rules: tuple[FormatRule, ...] = ()


@dataclass(frozen=True)
class FormatSlot:
    """A place where a connector takes a format: `role` 'value' or 'key', chosen by `option`."""

    role: str
    option: ConfigOption[str]


@dataclass(frozen=True)
class Factory:
    """A connector (Flink DynamicTableFactory): the options it accepts, its formats, metadata and rules."""

    identifier: str
    description: str
    options: tuple[ConfigOption[Any], ...]
    source: bool
    sink: bool
    format_slots: tuple[FormatSlot, ...] = ()
    formats: tuple[Format, ...] = ()
    readable_metadata: Mapping[str, str] = field(default_factory=dict)  # key -> Flink type
    writable_metadata: Mapping[str, str] = field(default_factory=dict)
    passthrough_prefixes: tuple[str, ...] = ()  # e.g. 'properties.': handed to the client untouched
    forbidden: Mapping[str, str] = field(default_factory=dict)  # key -> why this connector rejects it
    fixed: tuple[FixedValue, ...] = ()
    rules: tuple[Rule, ...] = ()
    source_rules: tuple[Rule, ...] = ()
    sink_rules: tuple[Rule, ...] = ()
    format_columns: Callable[[Table, ResolvedOptions, str], list[Column]] | None = None

    @property
    def required_options(self) -> tuple[ConfigOption[Any], ...]:
        return tuple(o for o in self.options if o.required)

    @property
    def supported_formats(self) -> tuple[str, ...]:
        return tuple(
            f.identifier
            for f in self.formats
            if f.supported and (not f.connectors or self.identifier in f.connectors)
        )

    def columns_of(self, table: Table, options: ResolvedOptions, role: str) -> list[Column]:
        """The physical columns the format in `role` (de)serializes."""
        if self.format_columns is not None:
            return self.format_columns(table, options, role)
        return table.physical_columns

    def resolve(self, table: Table) -> tuple[ResolvedOptions, list[Diagnostic]]:
        """Typed options with defaults, leniently: invalid values are reported and treated as unset."""
        declared = _expand_templates(self.options, table)
        forbidden = set(self.forbidden)
        values, spellings, diagnostics = _parse_options(table, declared, "", forbidden)
        for fixed in self.fixed:
            declared.append(fixed.option)
            values[fixed.option.key] = fixed.value
        resolved = ResolvedOptions(
            f"connector '{self.identifier}'", declared, values, spellings, table.options
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
        _check_metadata_types(check)
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
            return f"format '{identifier}' is not supported yet. Supported formats: {supported}."
        if fmt.connectors and self.identifier not in fmt.connectors:
            return (
                f"format '{identifier}' is only supported by connector(s) {', '.join(fmt.connectors)}, not "
                f"'{self.identifier}'. Supported formats for connector '{self.identifier}': {supported}."
            )
        return ""

    def _check_format(self, check: Check, fmt: Format, role: str, format_key: str, prefix: str) -> None:
        resolved, diagnostics = resolve_format(check.table, fmt, prefix)
        check.diagnostics.extend(diagnostics)
        if not fmt.open_options:
            keys = sorted(prefix + o.key for o in fmt.options)
            for key in check.table.options:
                if key.startswith(prefix) and key not in keys:
                    listing = ", ".join(keys) if keys else "none"
                    check.report(
                        "unknown-option",
                        f"Unsupported option '{key}' for format '{fmt.identifier}'.{did_you_mean(key, keys)} "
                        f"Supported options: {listing}.",
                        key,
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
) -> tuple[dict[str, Any], dict[str, str], list[Diagnostic]]:
    """Parses each declared option the table sets; returns values and spellings by declared key."""
    values: dict[str, Any] = {}
    spellings: dict[str, str] = {}
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
            continue
        values[option.key] = value
        spellings[option.key] = spelled
    return values, spellings, diagnostics


def resolve_format(table: Table, fmt: Format, prefix: str) -> tuple[ResolvedOptions, list[Diagnostic]]:
    """Typed options of one format, read from the table's keys under `prefix` ('value.json.')."""
    values, spellings, diagnostics = _parse_options(table, fmt.options, prefix, set())
    owner = f"format '{fmt.identifier}'"
    return ResolvedOptions(owner, fmt.options, values, spellings, table.options), diagnostics


# ---------------------------------------------------------------------------------------------------------
# Metadata columns: keys and type compatibility (Flink LogicalTypeCasts, explicit casts)
# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FlinkType:
    """A Flink SQL type reduced to what cast rules need: its root and the types nested in it."""

    root: str
    children: tuple[FlinkType, ...] = ()


_CHARACTER = {"CHAR", "VARCHAR"}
_BINARY = {"BINARY", "VARBINARY"}
_INTEGERS = {"TINYINT", "SMALLINT", "INTEGER", "BIGINT"}
_EXACT = _INTEGERS | {"DECIMAL"}
_NUMERIC = _EXACT | {"FLOAT", "DOUBLE"}
_TIMESTAMPS = {"TIMESTAMP", "TIMESTAMP_LTZ"}
_DATETIME = _TIMESTAMPS | {"DATE", "TIME"}
_INTERVALS = {"INTERVAL_YM", "INTERVAL_DT"}
_PREDEFINED = _CHARACTER | _BINARY | _NUMERIC | _DATETIME | _INTERVALS | {"BOOLEAN"}
_CONSTRUCTED = {"ARRAY", "MULTISET", "MAP", "ROW"}

# target root -> source roots an explicit CAST accepts (constructed types: same root, castable children)
_CASTABLE_FROM: dict[str, set[str]] = {
    "CHAR": _PREDEFINED | _CONSTRUCTED | {"RAW", "VARIANT"},
    "VARCHAR": _PREDEFINED | _CONSTRUCTED | {"RAW", "VARIANT"},
    "BOOLEAN": {"BOOLEAN"} | _CHARACTER | _INTEGERS,
    "BINARY": _BINARY | _CHARACTER | {"RAW"},
    "VARBINARY": _BINARY | _CHARACTER | {"RAW"},
    "DECIMAL": _NUMERIC | _CHARACTER | _INTERVALS | {"BOOLEAN", "TIMESTAMP_LTZ"},
    "TINYINT": _NUMERIC | _CHARACTER | {"BOOLEAN", "TIMESTAMP_LTZ"},
    "SMALLINT": _NUMERIC | _CHARACTER | {"BOOLEAN", "TIMESTAMP_LTZ"},
    "INTEGER": _NUMERIC | _CHARACTER | _INTERVALS | {"BOOLEAN", "TIMESTAMP_LTZ"},
    "BIGINT": _NUMERIC | _CHARACTER | _INTERVALS | {"BOOLEAN", "TIMESTAMP_LTZ"},
    "FLOAT": _NUMERIC | _CHARACTER | {"BOOLEAN", "TIMESTAMP_LTZ"},
    "DOUBLE": _NUMERIC | _CHARACTER | {"BOOLEAN", "TIMESTAMP_LTZ"},
    "DATE": {"DATE"} | _TIMESTAMPS | _CHARACTER,
    "TIME": {"TIME"} | _TIMESTAMPS | _CHARACTER,
    "TIMESTAMP": _DATETIME | _CHARACTER,
    "TIMESTAMP_LTZ": _DATETIME | _CHARACTER | _NUMERIC,
    "INTERVAL_YM": {"INTERVAL_YM"} | _EXACT | _CHARACTER,
    "INTERVAL_DT": {"INTERVAL_DT"} | _EXACT | _CHARACTER,
}


def castable(source: FlinkType, target: FlinkType) -> bool:
    """Whether Flink can explicitly CAST a `source` value to `target`."""
    if source.root == "NULL" or source == target:
        return True
    if target.root in _CONSTRUCTED or (source.root in _CONSTRUCTED and target.root not in _CHARACTER):
        return (
            source.root == target.root
            and len(source.children) == len(target.children)
            and all(castable(s, t) for s, t in zip(source.children, target.children, strict=True))
        )
    return source.root in _CASTABLE_FROM.get(target.root, {target.root})


_TYPE_TOKEN = re.compile(r"`(?:[^`]|``)*`|'(?:[^']|'')*'|\"[^\"]*\"|[A-Za-z_][A-Za-z_0-9$]*|\d+|[<>(),]|\S")
_SIMPLE_ROOTS = {
    **{root: root for root in (*_PREDEFINED - _INTERVALS, "VARIANT", "NULL")},
    **{"STRING": "VARCHAR", "TEXT": "VARCHAR", "BOOL": "BOOLEAN", "BYTES": "VARBINARY", "DEC": "DECIMAL"},
    **{"NUMERIC": "DECIMAL", "INT": "INTEGER", "REAL": "FLOAT", "TIMESTAMPLTZ": "TIMESTAMP_LTZ"},
    **{"TIMESTAMPTZ": "TIMESTAMP_LTZ"},
}


class _TypeParser:
    """Recursive-descent reader of Flink types ('MAP<STRING, BYTES>', 'TIMESTAMP(3) WITH LOCAL TIME ZONE')."""

    def __init__(self, text: str) -> None:
        self.tokens = _TYPE_TOKEN.findall(text)
        self.pos = 0

    def peek(self) -> str:
        return self.tokens[self.pos].upper() if self.pos < len(self.tokens) else ""

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if not token or (expected is not None and token != expected):
            raise ValueError(f"expected {expected or 'a token'} at {token!r}")
        self.pos += 1
        return token

    def skip_parens(self) -> None:
        if self.peek() != "(":
            return
        depth = 0
        while True:
            token = self.take()
            depth += {"(": 1, ")": -1}.get(token, 0)
            if depth == 0:
                return

    def parse(self) -> FlinkType:
        result = self.type()
        if self.pos != len(self.tokens):
            raise ValueError("trailing tokens")
        return result

    def type(self) -> FlinkType:
        word = self.take()
        if word in ("ARRAY", "MULTISET"):
            result = FlinkType(word, (self.nested(1)[0],))
        elif word == "MAP":
            result = FlinkType("MAP", self.nested(2))
        elif word == "ROW":
            result = FlinkType("ROW", self.row_fields())
        elif word == "INTERVAL":
            result = self.interval()
        elif word == "RAW":
            self.skip_parens()
            result = FlinkType("RAW")
        elif word in _SIMPLE_ROOTS:
            result = self.simple(word)
        else:
            raise ValueError(f"unknown type {word}")
        while self.peek() in ("NOT", "NULL", "ARRAY", "MULTISET"):
            token = self.take()
            if token == "NOT":
                self.take("NULL")
            elif token in ("ARRAY", "MULTISET"):
                result = FlinkType(token, (result,))
        return result

    def simple(self, word: str) -> FlinkType:
        root = _SIMPLE_ROOTS[word]
        if word in ("CHAR", "CHARACTER") and self.peek() == "VARYING":
            self.take()
            root = "VARCHAR"
        if word == "DOUBLE" and self.peek() == "PRECISION":
            self.take()
        self.skip_parens()
        if root in ("TIME", "TIMESTAMP") and self.peek() in ("WITH", "WITHOUT"):
            with_zone = self.take() == "WITH"
            if self.peek() == "LOCAL":
                self.take()
            self.take("TIME")
            self.take("ZONE")
            if with_zone:
                root = "TIMESTAMP_LTZ"
        return FlinkType(root)

    def interval(self) -> FlinkType:
        words: list[str] = []
        while self.peek() and self.peek() not in (",", ">", ")", "NOT", "NULL"):
            words.append(self.take())
            self.skip_parens()
        return FlinkType("INTERVAL_YM" if {"YEAR", "MONTH"} & set(words) else "INTERVAL_DT")

    def nested(self, count: int) -> tuple[FlinkType, ...]:
        self.take("<")
        children = [self.type()]
        while len(children) < count:
            self.take(",")
            children.append(self.type())
        self.take(">")
        return tuple(children)

    def row_fields(self) -> tuple[FlinkType, ...]:
        close = {"<": ">", "(": ")"}.get(self.peek())
        if close is None:
            raise ValueError("ROW needs fields")
        self.take()
        fields: list[FlinkType] = []
        while self.peek() != close:
            if fields:
                self.take(",")
            self.take()  # field name
            fields.append(self.type())
            if self.peek() == "COMMENT":
                self.take()
                self.take()
        self.take(close)
        return tuple(fields)


def parse_flink_type(text: str) -> FlinkType | None:
    """The cast-relevant shape of a Flink type, or None when the text is not a type this module knows."""
    try:
        return _TypeParser(text).parse()
    except (ValueError, IndexError):
        return None


def _declared_type(column: Column) -> str:
    if column.type_sql:
        return column.type_sql
    return column.data_type.sql() if column.data_type is not None else ""


def _metadata_columns(table: Table) -> list[Column]:
    return [c for c in table.columns if c.kind is ColumnKind.METADATA]


def _metadata_key(column: Column) -> str:
    return column.metadata_key or column.name


def _check_metadata_types(check: Check) -> None:
    """Metadata keys exist for the connector and declared types are castable from the metadata type."""
    factory, table = check.factory, check.table
    known = {**factory.writable_metadata, **factory.readable_metadata}
    for column in _metadata_columns(table):
        key = _metadata_key(column)
        if not known:
            check.report(
                "metadata",
                f"Column '{column.name}' reads metadata key '{key}', but connector '{factory.identifier}' "
                "provides no metadata columns.",
                position=column.position,
            )
        elif key not in known:
            readable = ", ".join(sorted(factory.readable_metadata))
            check.report(
                "metadata",
                f"Invalid metadata key '{key}' in column '{column.name}' of table '{table.name}'."
                f"{did_you_mean(key, known)} Connector '{factory.identifier}' supports the following "
                "metadata "
                f"keys for reading: {readable}.",
                position=column.position,
            )
        elif key in factory.readable_metadata:
            _check_cast(check, column, factory.readable_metadata[key], to_metadata=False)


def _check_cast(check: Check, column: Column, metadata_type: str, to_metadata: bool) -> None:
    declared_text = _declared_type(column)
    declared, expected = parse_flink_type(declared_text), parse_flink_type(metadata_type)
    if declared is None or expected is None:
        return
    ok = castable(declared, expected) if to_metadata else castable(expected, declared)
    if not ok:
        direction = "to" if to_metadata else "from"
        check.report(
            "metadata",
            f"Invalid data type for metadata column '{column.name}' of table '{check.table.name}'. The "
            "column "
            f"cannot be declared as '{declared_text}' because the type must be castable {direction} metadata "
            f"type '{metadata_type}'.",
            position=column.position,
        )


def _check_sink_metadata(check: Check) -> None:
    factory = check.factory
    writable = ", ".join(sorted(factory.writable_metadata)) or "none"
    for column in _metadata_columns(check.table):
        key = _metadata_key(column)
        if column.virtual or (key not in factory.readable_metadata and key not in factory.writable_metadata):
            continue
        if key not in factory.writable_metadata:
            check.report(
                "metadata",
                f"Metadata column '{column.name}' (key '{key}') is read-only for connector "
                f"'{factory.identifier}'; declare it VIRTUAL to write to table '{check.table.name}'. "
                f"Writable metadata keys: {writable}.",
                position=column.position,
            )
        else:
            _check_cast(check, column, factory.writable_metadata[key], to_metadata=True)


# ---------------------------------------------------------------------------------------------------------
# Public entry points
# ---------------------------------------------------------------------------------------------------------


def _factories() -> Mapping[str, Factory]:
    # Imported here because the declarations module builds on this framework module.
    from connector.connectors.declarations import FACTORIES

    return FACTORIES


def connector_factory(table: Table) -> Factory | None:
    """The factory of the table's 'connector', or None when it has none or an unknown one."""
    return _factories().get(table.connector or "")


def validate_table(table: Table) -> list[Diagnostic]:
    """All option, format and metadata problems of a table, each at the offending key or column."""
    factories = _factories()
    identifier = table.connector
    available = ", ".join(sorted(factories))
    if identifier is None:
        message = f"Table '{table.name}' has no 'connector' option. Available connectors: {available}."
        return [Diagnostic.at(table.position, "missing-option", message)]
    factory = factories.get(identifier)
    if factory is None:
        message = (
            f"Unknown connector '{identifier}'.{did_you_mean(identifier.lower(), factories)} "
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


def validate_sink_metadata(table: Table) -> list[Diagnostic]:
    """Persisted metadata columns of a table written to must be writable and castable to their type."""
    factory = connector_factory(table)
    if factory is None:
        return []
    resolved, _ = factory.resolve(table)
    check = Check(table, factory, resolved, [])
    _check_sink_metadata(check)
    return check.diagnostics


def validate_sink(table: Table) -> list[Diagnostic]:
    """Problems that only matter when the table is written to, metadata columns included."""
    check = _usage_check(table, "sink")
    if check is None:
        return []
    _check_sink_metadata(check)
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
    return fmt.identifier, values


def format_columns(table: Table, role: str) -> list[Column]:
    """The physical columns the format in `role` (de)serializes (Kafka: key.fields / the rest)."""
    found = _format_in(table, role)
    if found is None:
        return []
    factory, resolved, slot, _, _ = found
    return factory.columns_of(table, resolved, slot.role)
