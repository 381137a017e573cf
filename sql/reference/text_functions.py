"""Python functions of the reference pipeline `python_functions.sql` (CREATE FUNCTION ... LANGUAGE PYTHON)."""

from collections.abc import Iterator
from decimal import Decimal

import connector


def initials(name: str | None) -> str | None:
    """'Ann Lee' -> 'AL': a scalar function, its type from its annotations (str -> STRING)."""
    return None if name is None else "".join(word[0].upper() for word in name.split())


@connector.udf(result_type="DECIMAL(10, 2)")
def with_vat(amount: Decimal | None, rate: Decimal | None) -> Decimal | None:
    """A scalar function whose result type is declared, since Python's Decimal has no precision."""
    return None if amount is None or rate is None else (amount * (1 + rate)).quantize(Decimal("0.01"))


def tags(text: str | None) -> Iterator[tuple[str, int]]:
    """A table function: one row (tag, position) per comma-separated tag."""
    for position, tag in enumerate((text or "").split(",")):
        if tag.strip():
            yield tag.strip(), position
