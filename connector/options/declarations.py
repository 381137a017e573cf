"""One option key declared once (Flink's ConfigOption), and the typed values a table resolves them to."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast

from connector.options.types import OptionType

T = TypeVar("T")



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
        return cast(ConfigOption[T], _for_column(self, column))

    def as_required(self) -> ConfigOption[T]:
        """The same option, required (a connector that needs what another one treats as optional)."""
        return dataclasses.replace(self, required=True)


@functools.lru_cache(maxsize=4096)
def _for_column(option: ConfigOption[Any], column: str) -> ConfigOption[Any]:
    """A template option for one column, made once: validating and planning a table ask for each several times."""
    return dataclasses.replace(option, key=option.key.replace("#", column))


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
        invalid: Iterable[str] = (),
    ) -> None:
        self.owner = owner
        self._declared = {option.key: option for option in declared}
        self._values = dict(values)
        self._spellings = dict(spellings)
        self.raw = dict(raw)
        self._invalid = frozenset(invalid)

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

    def is_invalid(self, option: ConfigOption[Any]) -> bool:
        """True when the table sets the option to a value that does not parse (reported already): a rule that reads
        the option's default in its place must not report about that default."""
        return option.key in self._invalid

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
