"""Diagnostics: every problem found in a pipeline file, pointing at file, line and column.

One type for syntax errors, option errors, template errors and semantic errors, so the CLI can print
them uniformly (text or JSON) and never a Python traceback.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Literal

from rich.console import Console
from rich.text import Text

Severity = Literal["error", "warning"]


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


class PipelineError(Exception):
    """Raised when a file cannot be turned into a catalog or run; carries its diagnostics."""

    def __init__(self, diagnostics: Iterable[Diagnostic]) -> None:
        self.diagnostics = list(diagnostics)
        super().__init__("\n".join(str(d) for d in self.diagnostics))


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """A ' Did you mean 'x'?' suffix, or '' when nothing is close."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" Did you mean '{close[0]}'?" if close else ""


def print_diagnostics(console: Console, diagnostics: Iterable[Diagnostic]) -> None:
    """Print diagnostics as `file:line:col: severity [code] message`, the one way every command shows them."""
    for d in diagnostics:
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
