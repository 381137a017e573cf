"""Jinja2 templating of pipeline files (dbt style), with every position mapped back to the file as written.

A pipeline file is a Jinja2 template, rendered before it is parsed. The context is deliberately small:

``var(name[, default])``
    A pipeline variable, from ``--vars-file`` and ``--var KEY=VALUE`` (the command line wins). Values are
    strings. A variable that is not defined and has no default is an error naming it and listing the
    defined ones.
``env_var(name[, default])``
    A variable of the process environment (or of the ``env`` mapping given to `render`). Not set and no
    default: an error naming it.
``raise_error(message)``
    Stops rendering with ``message``; macros use it to reject bad arguments.
``sql_string`` (filter)
    Quotes a value as a SQL string literal: ``{{ "it's" | sql_string }}`` renders ``'it''s'``.

Macro files are imported by name, ``{% import 'kafka.sql' as kafka %}`` or
``{% from 'kafka.sql' import kafka_source %}``, and searched in this order: the pipeline file's directory,
``templates/`` next to it, the ``templates/`` directory shipped with this project, then each of
``templates_dirs``. A file found earlier shadows a later one of the same name.

The environment is sandboxed (no access to Python internals), an undefined name is an error
(StrictUndefined), ``trim_blocks`` and ``lstrip_blocks`` are on (a line holding only ``{% ... %}`` tags
disappears from the output instead of leaving a blank line) and the file's trailing newline is kept.

Errors. Every template problem is raised as a PipelineError holding one Diagnostic, never a traceback.
Its position is in the file as written: the pipeline file, or the macro file the error happened in (the
message then names the pipeline file line that imported or called it). Codes:

=====================  ==============================================================================
``template-syntax``    Jinja syntax error (unclosed tag, unknown tag, bad expression).
``undefined``          An undefined name or attribute, including a macro a file does not define.
``missing-var``        ``var(name)`` without a value or default.
``missing-env-var``    ``env_var(name)`` for an unset environment variable, without default.
``template-not-found`` An imported or included file is in none of the search directories.
``template-security``  Code the sandbox refuses (Python internals).
``template``           Any other error while rendering, including ``raise_error``.
``bad-var``            A malformed ``--var`` argument or vars file.
``io``                 A pipeline or vars file that cannot be read.
=====================  ==============================================================================

How rendered text is mapped back to the file is in `connector.sql.template.positions`; ``--var`` arguments and
vars files are read by `connector.sql.template.variables`.
"""

from __future__ import annotations

import bisect
import os
import re
import sys
import traceback
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from jinja2 import BaseLoader, Environment, StrictUndefined, TemplateNotFound, TemplateSyntaxError
from jinja2.exceptions import SecurityError, UndefinedError
from jinja2.loaders import split_template_path
from jinja2.sandbox import SandboxedEnvironment

from connector.diagnostics import Diagnostic, PipelineError, did_you_mean
from connector.errors import KafkaSqlError
from connector.secrets import is_secret_key
from connector.sql.template.positions import Lexeme, Lines, PositionMarkers, Segment, lex, normalize_newlines, untag


def _bundled_templates() -> Path:
    """The project's templates/: beside the package in a checkout or editable install, else the copy a wheel
    installs under <prefix>/share/kafka-sql/templates (pyproject's data-files)."""
    beside = Path(__file__).resolve().parents[3] / "templates"
    return beside if beside.is_dir() else Path(sys.prefix) / "share" / "kafka-sql" / "templates"


BUNDLED_TEMPLATES = _bundled_templates()

_MISSING = object()

_QUOTED = re.compile(r"'([^']*)'")
_LEXER_OFFSET = re.compile(r" at (\d+)$")  # Jinja's lexer ends some messages with the source offset


@dataclass(frozen=True)
class RenderedFile:
    """A rendered pipeline file. `secrets` holds values read from secret-named var()s and env_var()s
    (`KAFKA_PASSWORD`), for the runner to mask in logs."""

    file: str
    source: str
    text: str
    secrets: frozenset[str] = frozenset()
    _segments: tuple[tuple[Segment, ...], ...] = field(default=(), repr=False, compare=False)

    def original_position(self, line: int, column: int) -> tuple[int, int]:
        """The 1-based (line, column) in the original file of 1-based `line`:`column` in `text`."""
        if not self._segments:
            return line, column
        segments = self._segments[min(max(line, 1), len(self._segments)) - 1]
        index = bisect.bisect_right([s.start for s in segments], column) - 1
        segment = segments[max(index, 0)]
        if segment.generated:
            return segment.line, segment.column
        return segment.line, segment.column + max(column - segment.start, 0)


# --- rendering ---------------------------------------------------------------------------------------


class _RenderFailure(KafkaSqlError):
    """A problem reported by the template context (var, env_var, raise_error)."""

    def __init__(self, code: str, message: str, culprit: str = "") -> None:
        super().__init__(message)
        self.code, self.message, self.culprit = code, message, culprit


class _Loader(BaseLoader):
    """Serves the pipeline file itself under its own name, and macro files from the search directories."""

    def __init__(self, main_name: str, main_source: str, search_dirs: list[Path]) -> None:
        self.main_name = main_name
        self.search_dirs = search_dirs
        self.sources: dict[str, str] = {main_name: main_source}  # by file name, for error positions
        self.loaded: dict[str, str] = {}  # template name -> file name, for suggestions

    def get_source(self, environment: Environment, template: str) -> tuple[str, str, Callable[[], bool]]:
        if template == self.main_name:
            return self.sources[template], template, lambda: True
        pieces = split_template_path(template)
        for directory in self.search_dirs:
            path = directory.joinpath(*pieces)
            if path.is_file():
                filename = str(path)
                source = path.read_text(encoding="utf-8-sig")
                self.sources[filename] = source
                self.loaded[template] = filename
                return source, filename, lambda: True
        raise TemplateNotFound(template)


class _Context:
    """The functions a template can call; remembers secret values it hands out."""

    def __init__(self, variables: Mapping[str, str], env: Mapping[str, str]) -> None:
        self.variables = variables
        self.env = env
        self.secrets: set[str] = set()

    def _value(self, name: str, value: Any) -> Any:
        if isinstance(value, str) and value and is_secret_key(name):
            self.secrets.add(value)
        return value

    def var(self, name: str, default: Any = _MISSING) -> Any:
        if name in self.variables:
            return self._value(name, self.variables[name])
        if default is not _MISSING:
            return default
        defined = ", ".join(sorted(self.variables)) or "none"
        raise _RenderFailure(
            "missing-var",
            f"Variable '{name}' is not defined.{did_you_mean(name, self.variables)} Pass --var {name}=VALUE, "
            f"add it to the --vars-file, or give var() a default. Defined variables: {defined}.",
            name,
        )

    def env_var(self, name: str, default: Any = _MISSING) -> Any:
        if name in self.env:
            return self._value(name, self.env[name])
        if default is not _MISSING:
            return default
        raise _RenderFailure(
            "missing-env-var",
            f"Environment variable '{name}' is not set. Set it, or give env_var() a default: "
            f"env_var('{name}', 'VALUE').",
            name,
        )

    @staticmethod
    def raise_error(message: object) -> NoReturn:
        raise _RenderFailure("template", str(message))


def sql_string(value: object) -> str:
    """`value` as a single-quoted SQL string literal."""
    return "'" + str(value).replace("'", "''") + "'"


def _search_dirs(base: Path, templates_dirs: Iterable[Path]) -> list[Path]:
    dirs: list[Path] = []
    for directory in (base, base / "templates", BUNDLED_TEMPLATES, *templates_dirs):
        if all(directory.resolve() != d.resolve() for d in dirs):
            dirs.append(directory)
    return dirs


def _environment(loader: _Loader, context: _Context) -> SandboxedEnvironment:
    environment = SandboxedEnvironment(
        loader=loader,
        undefined=StrictUndefined,
        extensions=[PositionMarkers],
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    environment.globals.update(var=context.var, env_var=context.env_var, raise_error=context.raise_error)
    environment.filters["sql_string"] = sql_string
    markers = environment.extensions[PositionMarkers.identifier]
    assert isinstance(markers, PositionMarkers)
    markers.main_name = loader.main_name
    return environment


def render_string(
    text: str,
    file: str,
    variables: Mapping[str, str],
    templates_dirs: Iterable[Path] | None = None,
    env: Mapping[str, str] | None = None,
) -> RenderedFile:
    """Renders `text`, the contents of pipeline file `file`; imports resolve next to `file`.

    Raises PipelineError (one Diagnostic, see the module docstring) for any template problem.
    """
    loader = _Loader(file, text, _search_dirs(Path(file).parent, templates_dirs or ()))
    context = _Context(variables, os.environ if env is None else env)
    environment = _environment(loader, context)
    try:
        marked = environment.get_template(file).render()
    except Exception as exc:  # every template failure, whatever its type, becomes a diagnostic
        raise PipelineError([_diagnose(exc, environment, loader, context)]) from None
    rendered, segments = untag(marked)
    return RenderedFile(file, text, rendered, frozenset(context.secrets), segments)


def render(
    path: Path,
    variables: Mapping[str, str],
    templates_dirs: Iterable[Path] | None = None,
    env: Mapping[str, str] | None = None,
) -> RenderedFile:
    """Reads and renders pipeline file `path` (see `render_string`)."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as err:
        message = f"Cannot read {path}: {err}"
        raise PipelineError([Diagnostic(str(path), 1, 1, "error", "io", message)]) from None
    return render_string(text, str(path), variables, templates_dirs, env)


# --- errors ------------------------------------------------------------------------------------------


def _locate(environment: Environment, source: str, line: int, culprits: Iterable[str]) -> tuple[int, int]:
    """Where on `line` the error is: the first template token naming a culprit, else the line's first tag.

    Jinja reports the line a tag starts on; a culprit further down in the same multi-line tag is found
    there too.
    """
    source = normalize_newlines(source)
    lines = Lines(source)
    candidates: list[Lexeme] = []
    tag_line = 0
    for lx in lex(environment, source):
        own_line = lines.position(lx.start)[0]
        if lx.kind in ("variable_begin", "block_begin"):
            tag_line = own_line
        if lx.kind not in ("data", "whitespace") and line in (own_line, tag_line):
            candidates.append(lx)
        if lx.kind in ("variable_end", "block_end"):
            tag_line = 0
    for culprit in culprits:
        for lx in candidates:
            if culprit and culprit in (lx.text, lx.text[1:-1] if lx.kind == "string" else None):
                return lines.position(lx.start)
    on_line = [lx for lx in candidates if lines.position(lx.start)[0] == line]
    tags = [lx for lx in on_line if lx.kind in ("variable_begin", "block_begin")] or on_line
    if tags:
        return lines.position(tags[0].start)
    text = source.split("\n")[line - 1] if 0 < line <= len(lines.starts) else ""
    return line, len(text) - len(text.lstrip()) + 1


def _exports(environment: Environment, loader: _Loader) -> dict[str, list[str]]:
    """The public macros and variables of every macro file loaded so far."""
    exports: dict[str, list[str]] = {}
    for name in loader.loaded:
        try:
            module = environment.get_template(name).module
        except Exception:  # a broken file exports nothing; its own error was reported already
            continue
        exports[name] = sorted(k for k in vars(module) if not k.startswith("_"))
    return exports


def _undefined_message(
    message: str, environment: Environment, loader: _Loader, context: _Context
) -> tuple[str, list[str]]:
    culprits = _QUOTED.findall(message)
    missing = culprits[-1] if culprits else ""
    if message.endswith("is undefined"):
        if missing in context.variables:
            hint = f" Did you mean var('{missing}')?"
        else:
            hint = did_you_mean(missing, environment.globals) + (
                " Read pipeline variables with var('NAME') and environment variables with env_var('NAME')."
            )
        return f"'{missing}' is undefined.{hint}", culprits
    if "TemplateModule object" in message or "does not export" in message:
        exports = _exports(environment, loader)
        every = [name for names in exports.values() for name in names]
        listing = "; ".join(f"{file}: {', '.join(names) or 'nothing'}" for file, names in exports.items())
        hint = did_you_mean(missing, every)
        return f"No macro '{missing}' in the imported files ({listing}).{hint}", culprits
    return message, culprits


def _not_found_message(name: str, loader: _Loader) -> str:
    candidates: list[str] = []
    listed: list[str] = []
    for directory in loader.search_dirs:
        if not directory.is_dir():
            continue
        files = sorted(p.name for p in directory.iterdir() if p.is_file() and not p.name.startswith("."))
        candidates += files
        if directory != loader.search_dirs[0]:
            listed += files
    searched = ", ".join(str(d) for d in loader.search_dirs)
    available = ", ".join(dict.fromkeys(listed)) or "none"
    hint = did_you_mean(name, candidates)
    return f"Template '{name}' not found.{hint} Searched: {searched}. Macro files available: {available}."


def _classify(
    exc: Exception, environment: Environment, loader: _Loader, context: _Context
) -> tuple[str, str, list[str]]:
    """Code, message and the names to look for on the error's line."""
    if isinstance(exc, _RenderFailure):
        return exc.code, exc.message, [exc.culprit]
    if isinstance(exc, TemplateNotFound):
        return "template-not-found", _not_found_message(str(exc.name), loader), [str(exc.name)]
    if isinstance(exc, TemplateSyntaxError):
        message = _LEXER_OFFSET.sub("", exc.message or "")
        return "template-syntax", f"Template syntax error: {message}", _QUOTED.findall(message)
    if isinstance(exc, SecurityError):
        return "template-security", f"Not allowed in a template: {exc}", _QUOTED.findall(str(exc))
    if isinstance(exc, UndefinedError):
        message, culprits = _undefined_message(str(exc), environment, loader, context)
        return "undefined", message, culprits
    return "template", f"Error while rendering: {type(exc).__name__}: {exc}", _QUOTED.findall(str(exc))


def _diagnose(exc: Exception, environment: Environment, loader: _Loader, context: _Context) -> Diagnostic:
    code, message, culprits = _classify(exc, environment, loader, context)
    frames = [
        (frame.f_code.co_filename, lineno)
        for frame, lineno in traceback.walk_tb(exc.__traceback__)
        if frame.f_code.co_filename in loader.sources
    ]
    main = loader.main_name
    if isinstance(exc, TemplateSyntaxError) and exc.lineno:
        file, line = exc.filename or main, exc.lineno
    elif frames:
        file, line = frames[-1]
    else:
        file, line = main, 1
    if file not in loader.sources:
        file = main
    line, column = _locate(environment, loader.sources[file], line, culprits)
    offset = _LEXER_OFFSET.search(str(exc)) if isinstance(exc, TemplateSyntaxError) else None
    if offset:  # the lexer tells exactly where it stopped
        line, column = Lines(normalize_newlines(loader.sources[file])).position(int(offset.group(1)))
    if file != main:
        used_at = next((lineno for name, lineno in frames if name == main), None)
        if used_at is not None:
            message += f" (reached from {main}:{used_at})"
    return Diagnostic(file, line, column, "error", code, message)
