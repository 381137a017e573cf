"""Metadata columns: their keys exist for the connector and their types cast to and from the metadata type
(Flink's LogicalTypeCasts for explicit casts)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from connector.catalog.model import Column, ColumnKind, Table
from connector.diagnostics import did_you_mean

if TYPE_CHECKING:
    from connector.options.factory import Check



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


def check_metadata_types(check: Check) -> None:
    """Metadata keys exist for the connector and declared types are castable from the metadata type."""
    factory, table = check.factory, check.table
    readable_metadata = factory.metadata_for_reading(check.options)
    known = {**factory.writable_metadata, **readable_metadata}
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
            readable = ", ".join(sorted(readable_metadata))
            check.report(
                "metadata",
                f"Invalid metadata key '{key}' in column '{column.name}' of table '{table.name}'."
                f"{did_you_mean(key, known)} Connector '{factory.identifier}' supports the following "
                "metadata "
                f"keys for reading: {readable}.",
                position=column.position,
            )
        elif key in readable_metadata:
            _check_cast(check, column, readable_metadata[key], to_metadata=False)


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


def check_sink_metadata(check: Check) -> None:
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
