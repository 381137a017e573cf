"""Diagnostics: every problem found in a pipeline file, pointing at file, line and column.

One type for syntax errors, option errors, template errors and semantic errors, so the CLI can print
them uniformly (text or JSON) and never a Python traceback. A file can hold many thousands of the same mistake
(a generated file repeating one bad statement): at most `SHOWN_PER_FILE` are listed per file, then how many more.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Literal

from rich.console import Console
from rich.text import Text

from connector.errors import KafkaSqlError

Severity = Literal["error", "warning"]

# Past this many diagnostics in one file, the rest are counted, not listed: the first ones show the mistake.
SHOWN_PER_FILE = 100


@dataclass(frozen=True)
class Position:
    """A 1-based line and column in a file."""

    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


@dataclass(frozen=True)
class Diagnostic:
    """One finding. `code` is a stable machine-readable kind ("syntax", "unknown-option", ...)."""

    file: str
    line: int
    column: int
    severity: Severity
    code: str
    message: str

    @classmethod
    def at(cls, pos: Position, code: str, message: str, severity: Severity = "error") -> Diagnostic:
        return cls(pos.file, pos.line, pos.column, severity, code, message)

    def to_json(self) -> dict[str, object]:
        return asdict(self)

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}: {self.severity}: [{self.code}] {self.message}"


class PipelineError(KafkaSqlError):
    """Raised when a file cannot be turned into a catalog or run; carries its diagnostics."""

    def __init__(self, diagnostics: Iterable[Diagnostic]) -> None:
        self.diagnostics = list(diagnostics)
        super().__init__("\n".join(str(d) for d in self.diagnostics))


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """A ' Did you mean 'x'?' suffix, or '' when nothing is close."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" Did you mean '{close[0]}'?" if close else ""


def shown(diagnostics: Iterable[Diagnostic]) -> tuple[list[Diagnostic], dict[str, int]]:
    """The diagnostics to list, at most `SHOWN_PER_FILE` per file in their order, and per file how many are left
    out (files with none left out are not named)."""
    listed: list[Diagnostic] = []
    per_file: Counter[str] = Counter()
    for d in diagnostics:
        per_file[d.file] += 1
        if per_file[d.file] <= SHOWN_PER_FILE:
            listed.append(d)
    return listed, {file: n - SHOWN_PER_FILE for file, n in per_file.items() if n > SHOWN_PER_FILE}


def diagnostics_json(diagnostics: Sequence[Diagnostic]) -> dict[str, object]:
    """The machine-readable listing: `diagnostics` (capped as `shown` caps them), `total` found and per file
    the number `omitted`."""
    listed, omitted = shown(diagnostics)
    return {"diagnostics": [d.to_json() for d in listed], "total": len(diagnostics), "omitted": omitted}


def print_diagnostics(console: Console, diagnostics: Iterable[Diagnostic]) -> None:
    """Print diagnostics as `file:line:col: severity [code] message`, the one way every command shows them;
    past `SHOWN_PER_FILE` in a file, one line says how many more there are."""
    listed, omitted = shown(diagnostics)
    for d in listed:
        # Text parts, never markup: messages quote user SQL, which may hold '[...]' or ':name:'.
        line = Text.assemble(
            (f"{d.file}:{d.line}:{d.column}", "bold"),
            ": ",
            (d.severity, "red" if d.severity == "error" else "yellow"),
            " ",
            (f"[{d.code}]", "dim"),
            f" {d.message}",
        )
        console.print(line, emoji=False)
    for file, more in omitted.items():
        console.print(Text.assemble(f"... and {more} more in ", (file, "bold")), emoji=False)
