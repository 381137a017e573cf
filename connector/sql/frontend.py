"""The front end of one pipeline file: render the template, parse, load the catalog, validate.

Shared by every verb of the CLI and by the session extension, so a file means the same thing everywhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from connector.catalog.loader import load_text
from connector.catalog.model import Pipeline
from connector.diagnostics import Diagnostic, PipelineError
from connector.planning.plan import build
from connector.sql.template import templating
from connector.sql.validate import validator


@dataclass
class CompiledFile:
    """A file after the front end. `pipeline` is None when rendering or parsing failed."""

    path: Path
    rendered: templating.RenderedFile | None
    pipeline: Pipeline | None
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]

    def require(self) -> Pipeline:
        """The pipeline, or PipelineError when the file has errors."""
        if self.errors or self.pipeline is None:
            raise PipelineError(self.diagnostics)
        return self.pipeline


def compile_file(
    path: Path, variables: Mapping[str, str] | None = None, env: Mapping[str, str] | None = None
) -> CompiledFile:
    """Render, parse, load and validate `path`; all problems come back as diagnostics, never raised."""
    file = str(path)
    try:
        rendered = templating.render(path, dict(variables or {}), env=env)
    except PipelineError as err:
        return CompiledFile(path, None, None, err.diagnostics)
    except OSError as err:
        return CompiledFile(
            path, None, None, [Diagnostic(file, 1, 1, "error", "io", f"Cannot read {file}: {err}")]
        )
    try:
        loaded = load_text(rendered.text, file, rendered.original_position)
    except PipelineError as err:
        return CompiledFile(path, rendered, None, err.diagnostics)
    diagnostics = validator.validate(loaded.pipeline, loaded.locate)
    ordered = sorted(loaded.warnings + diagnostics, key=lambda d: (d.file, d.line, d.column))
    return CompiledFile(path, rendered, loaded.pipeline, ordered)


def plan_diagnostics(compiled: CompiledFile) -> list[Diagnostic]:
    """What planning finds in a valid file: queries Spark cannot run, ignored settings, shared consumer groups.

    `validate` reports these too, so a file it accepts is one `run` accepts.
    """
    if compiled.errors or compiled.pipeline is None:
        return []
    try:
        return list(build(compiled.pipeline, compiled.path.stem).warnings)
    except PipelineError as err:
        return err.diagnostics
