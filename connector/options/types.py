"""Option value types: how the text written in `WITH (...)` becomes a typed value, as Flink parses it."""

from __future__ import annotations

import codecs
import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from datetime import timedelta
from typing import Generic, TypeVar

from connector.diagnostics import did_you_mean

T = TypeVar("T")



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
