"""Flink's Unicode string literals, `U&'\\0041\\00e9'` and `U&'!0041' UESCAPE '!'`, decoded as Calcite decodes them
(checked against Flink 2.3): the escape character (backslash unless UESCAPE names another) then exactly four
characters Java's Integer.parseInt reads as hex (a sign included: `\\+01F` is U+001F) give one UTF-16 code unit,
so surrogate pairs make one character; the escape character twice is itself."""

from __future__ import annotations

import re

from connector.errors import KafkaSqlError

_HEX = re.compile(r"[+-]?[0-9a-fA-F]+")  # what Integer.parseInt(text, 16) accepts


class UnicodeLiteralError(KafkaSqlError, ValueError):
    """Text Flink's parser refuses as a Unicode literal; the message is Calcite's."""


def check_escape(escape: str) -> None:
    """Calcite's rules for the character UESCAPE names."""
    if len(escape) != 1:
        raise UnicodeLiteralError(f"UESCAPE '{escape}' must be exactly one character")
    if re.fullmatch(r"[0-9a-fA-F+\"\s]", escape):
        raise UnicodeLiteralError(f"UESCAPE '{escape}' may not be hex digit, whitespace, plus sign, or double quote")


def decode(text: str, escape: str = "\\") -> str:
    """The characters `text` (a U& literal's content, quotes unescaped) stands for."""
    units: list[int] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char != escape:
            units.extend(_utf16(char))
            i += 1
        elif text[i + 1 : i + 2] == escape:
            units.extend(_utf16(escape))
            i += 2
        else:
            digits = text[i + 1 : i + 5]
            if len(digits) != 4 or not _HEX.fullmatch(digits):
                raise UnicodeLiteralError(
                    f"Unicode escape sequence starting at character {i} is not exactly four hex digits"
                )
            units.append(int(digits, 16) & 0xFFFF)  # Java's (char) of a negative int wraps
            i += 5
    data = b"".join(unit.to_bytes(2, "little") for unit in units)
    return data.decode("utf-16-le", errors="surrogatepass")


def _utf16(char: str) -> list[int]:
    data = char.encode("utf-16-le", errors="surrogatepass")
    return [int.from_bytes(data[k : k + 2], "little") for k in range(0, len(data), 2)]
