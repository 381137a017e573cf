"""The names of Flink SQL's built-in functions: those Flink's SQL validator resolves in a call, listed in
`flink_functions.txt` beside this module and written by `make flink-functions`, which asks Flink itself
(`tests/conformance/flink_functions.py`); with the number of arguments each takes, where Flink's validator counts
them for a call in plain function syntax (`NAME min max`, max `*` for no limit).

The dialect's parser builds sqlglot's typed nodes only for these names (and for Flink's reserved words, which its
grammar reads), so a call of any other name stays a plain call that `validate` names as Flink would refuse it.
"""

from __future__ import annotations

import functools
from pathlib import Path

FLINK_FUNCTIONS_FILE = Path(__file__).with_name("flink_functions.txt")
# A typed call's meta entry: (written name upper-cased, written argument count), set by the dialect's parser.
CALL_META = "flink_call"


@functools.cache
def _entries() -> dict[str, tuple[int, int | None] | None]:
    entries: dict[str, tuple[int, int | None] | None] = {}
    for line in FLINK_FUNCTIONS_FILE.read_text(encoding="utf-8").splitlines():
        fields = line.split()
        if not fields or line.startswith("#"):
            continue
        name, *counts = fields
        entries[name] = (int(counts[0]), None if counts[1] == "*" else int(counts[1])) if counts else None
    return entries


@functools.cache
def flink_functions() -> frozenset[str]:
    """Flink's built-in function names, upper-cased."""
    return frozenset(_entries())


def argument_counts(name: str) -> tuple[int, int | None] | None:
    """How many arguments Flink's function `name` (upper-cased) takes, fewest and most (None: no limit); None when
    Flink does not count them for a plain call."""
    return _entries().get(name)


def takes(name: str, count: int) -> bool:
    """Whether Flink's function `name` (upper-cased) takes `count` arguments (True when Flink does not count them)."""
    counts = argument_counts(name)
    return counts is None or (counts[0] <= count and (counts[1] is None or count <= counts[1]))
