"""The names of Flink SQL's built-in functions: those Flink's SQL validator resolves in a call, listed in
`flink_functions.txt` beside this module and written by `make flink-functions`, which asks Flink itself
(`tests/conformance/flink_functions.py`).

The dialect's parser builds sqlglot's typed nodes only for these names (and for Flink's reserved words, which its
grammar reads), so a call of any other name stays a plain call that `validate` names as Flink would refuse it.
"""

from __future__ import annotations

import functools
from pathlib import Path

FLINK_FUNCTIONS_FILE = Path(__file__).with_name("flink_functions.txt")


@functools.cache
def flink_functions() -> frozenset[str]:
    """Flink's built-in function names, upper-cased."""
    lines = FLINK_FUNCTIONS_FILE.read_text(encoding="utf-8").splitlines()
    return frozenset(line.strip() for line in lines if line.strip() and not line.startswith("#"))
