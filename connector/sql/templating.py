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

Vars files (YAML is not available): a JSON object of strings, numbers and booleans when the file starts
with ``{``; otherwise ``KEY=VALUE`` lines as in a ``.env`` file, with blank lines, ``#`` comments, an
optional ``export`` prefix and optional matching quotes around the value.

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

Position mapping, and why it works this way. Parse errors are found in the rendered SQL but must point
into the original file. Diffing source against output would have to guess where expansions start and
end; instead the renderer itself says where each piece of output comes from. A Jinja extension rewrites
the main file's token stream (never its text): every literal text token is prefixed with an invisible
marker holding its source line and column (and again after each newline inside it), and every
``{{ ... }}`` expression, ``{% call %}``, ``{% filter %}`` and ``{% include %}`` is bracketed by
"expansion begins at line:column" / "file text resumes at line:column" markers. Jinja then renders
normally: an ``{% if %}`` that drops lines drops their markers, a ``{% for %}`` repeats them, a macro
expanding to many lines sits between one pair of expansion markers. Stripping the markers from the
output yields the SQL plus, for each output line, the segments that map columns back: literal text maps
1:1 (columns shift after a longer or shorter expansion), generated text maps to the start of the
``{{`` or tag that produced it. Markers are private-use Unicode characters and are never left in the
output. Macro bodies and ``{% set %}`` blocks are not marked, so values computed from them compare as
written.
"""

from __future__ import annotations

import bisect
import json
import os
import re
import sys
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, NoReturn

from jinja2 import BaseLoader, Environment, StrictUndefined, TemplateNotFound, TemplateSyntaxError
from jinja2.exceptions import SecurityError, UndefinedError
from jinja2.ext import Extension
from jinja2.lexer import Token, TokenStream
from jinja2.loaders import split_template_path
from jinja2.sandbox import SandboxedEnvironment

from connector.diagnostics import Diagnostic, PipelineError, did_you_mean
from connector.secrets import is_secret_key


def _bundled_templates() -> Path:
    """The project's templates/: beside the package in a checkout or editable install, else the copy a wheel
    installs under <prefix>/share/kafka-sql/templates (pyproject's data-files)."""
    beside = Path(__file__).resolve().parents[2] / "templates"
    return beside if beside.is_dir() else Path(sys.prefix) / "share" / "kafka-sql" / "templates"


BUNDLED_TEMPLATES = _bundled_templates()
COMMAND_LINE = "<command line>"

_MISSING = object()

# Markers: _LITERAL / _EXPAND / _RESUME, then "line,column", then _CLOSE.
_LITERAL = "\ue000"  # the file's own text starts here, at line:column
_CLOSE = "\ue001"
_EXPAND = "\ue002"  # text generated by the tag at line:column, up to the matching _RESUME
_RESUME = "\ue003"  # generated text ends; the file's own text resumes at line:column
_MARKER = re.compile(f"([{_LITERAL}{_EXPAND}{_RESUME}])(\\d+),(\\d+){_CLOSE}")
_QUOTED = re.compile(r"'([^']*)'")
_LEXER_OFFSET = re.compile(r" at (\d+)$")  # Jinja's lexer ends some messages with the source offset


class _Segment(NamedTuple):
    """From rendered column `start` on, text comes from source `line`:`column`; `generated` text maps to
    that one position, literal text advances with it."""

    start: int
    line: int
    column: int
    generated: bool


@dataclass(frozen=True)
class RenderedFile:
    """A rendered pipeline file. `secrets` holds values read from secret-named var()s and env_var()s
    (`KAFKA_PASSWORD`), for the runner to mask in logs."""

    file: str
    source: str
    text: str
    secrets: frozenset[str] = frozenset()
    _segments: tuple[tuple[_Segment, ...], ...] = field(default=(), repr=False, compare=False)

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


# --- variables ---------------------------------------------------------------------------------------


def _bad_var(file: str, line: int, column: int, message: str) -> Diagnostic:
    return Diagnostic(file, line, column, "error", "bad-var", message)


def parse_var_args(items: Iterable[str]) -> dict[str, str]:
    """Variables from repeated `--var KEY=VALUE` arguments; the value may contain '=' and be empty."""
    variables: dict[str, str] = {}
    errors: list[Diagnostic] = []
    for item in items:
        key, equals, value = item.partition("=")
        if not equals or not key.strip():
            message = f"--var {item!r}: expected KEY=VALUE, e.g. --var brokers=localhost:9092"
            errors.append(_bad_var(COMMAND_LINE, 1, 1, message))
        else:
            variables[key.strip()] = value
    if errors:
        raise PipelineError(errors)
    return variables


def _json_scalar(value: object) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return json.dumps(value)
    return None


def _position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _json_vars(text: str, file: str) -> dict[str, str]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        message = f"Invalid JSON in vars file: {err.msg}"
        raise PipelineError([_bad_var(file, err.lineno, err.colno, message)]) from None
    if not isinstance(data, dict):
        raise PipelineError([_bad_var(file, 1, 1, "A JSON vars file must hold one object of variables")])
    variables: dict[str, str] = {}
    errors: list[Diagnostic] = []
    for key, value in data.items():
        scalar = _json_scalar(value)
        if scalar is None:
            line, column = _position(text, max(text.find(json.dumps(key)), 0))
            message = f"Variable '{key}' must be a string, number or boolean, not {type(value).__name__}"
            errors.append(_bad_var(file, line, column, message))
        else:
            variables[key] = scalar
    if errors:
        raise PipelineError(errors)
    return variables


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _env_style_vars(text: str, file: str) -> dict[str, str]:
    variables: dict[str, str] = {}
    errors: list[Diagnostic] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("export "):
            line = line[len("export ") :]
        key, equals, value = line.partition("=")
        if not equals or not key.strip():
            column = len(raw) - len(raw.lstrip()) + 1
            message = (
                f"Expected KEY=VALUE, got {line!r} "
                "(vars files are JSON or KEY=VALUE lines; YAML is not supported)"
            )
            errors.append(_bad_var(file, number, column, message))
        else:
            variables[key.strip()] = _unquote(value.strip())
    if errors:
        raise PipelineError(errors)
    return variables


def load_vars_file(path: Path | str) -> dict[str, str]:
    """Variables from a vars file: a JSON object, or KEY=VALUE lines (see the module docstring)."""
    file = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as err:
        message = f"Cannot read vars file {file}: {err}"
        raise PipelineError([Diagnostic(file, 1, 1, "error", "io", message)]) from None
    if text.lstrip().startswith("{"):
        return _json_vars(text, file)
    return _env_style_vars(text, file)


# --- source positions --------------------------------------------------------------------------------


class _Lexeme(NamedTuple):
    """A raw Jinja token with its source offsets (`end` exclusive)."""

    kind: str
    text: str
    start: int
    end: int


class _Lines:
    """Offsets to 1-based line:column in one (newline-normalized) source text."""

    def __init__(self, source: str) -> None:
        self.starts = [0] + [i + 1 for i, char in enumerate(source) if char == "\n"]

    def position(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.starts, offset)
        return line, offset - self.starts[line - 1] + 1


def _normalize_newlines(source: str) -> str:
    # What Jinja's lexer does before tokenizing: offsets below are in this text.
    return re.sub(r"\r\n?", "\n", source)


def _lex(environment: Environment, source: str) -> list[_Lexeme]:
    """Jinja's raw tokens of `source` with offsets; up to the first lexing error, if any.

    Raw token values are verbatim slices of the source in order (whitespace control only drops text
    between them), so each is found with a forward search from the previous one.
    """
    lexemes: list[_Lexeme] = []
    cursor = 0
    try:
        for _, kind, text in environment.lexer.tokeniter(source, None):
            start = source.find(text, cursor)
            if start < 0:
                break
            cursor = start + len(text)
            lexemes.append(_Lexeme(kind, text, start, cursor))
    except TemplateSyntaxError:
        pass
    return lexemes


def _marker(kind: str, position: tuple[int, int]) -> str:
    return f"{kind}{position[0]},{position[1]}{_CLOSE}"


class _PositionMarkers(Extension):
    """Tags the main file's output with source positions (see "Position mapping" in the module docstring)."""

    # Tags whose body is not output where it stands: macro and block-set bodies, call and filter bodies.
    _OPAQUE = frozenset({"macro", "call", "filter", "set"})
    # Tags whose whole output is generated text mapped to the tag.
    _EXPANDING = frozenset({"call", "filter"})

    main_name: str | None = None
    _source = ""

    def preprocess(self, source: str, name: str | None, filename: str | None = None) -> str:
        if name == self.main_name:
            self._source = _normalize_newlines(source)
        return source

    def filter_stream(self, stream: TokenStream) -> TokenStream | Iterable[Token]:
        if stream.name != self.main_name:
            return stream
        return self._tag(stream, _lex(self.environment, self._source), _Lines(self._source))

    def _tag(self, stream: TokenStream, lexemes: list[_Lexeme], lines: _Lines) -> Iterator[Token]:
        anchored = ("data", "variable_begin", "variable_end", "block_begin", "block_end")
        queues = {kind: iter([lx for lx in lexemes if lx.kind == kind]) for kind in anchored}
        opaque: list[str] = []
        tokens = iter(stream)

        def mark(lineno: int, kind: str, offset: int) -> Token:
            return Token(lineno, "data", _marker(kind, lines.position(offset)))

        for token in tokens:
            lexeme = next(queues[token.type], None) if token.type in queues else None
            if token.type == "block_begin":
                yield from self._block(token, tokens, lexeme, next(queues["block_end"], None), opaque, mark)
            elif opaque or lexeme is None:
                yield token
            elif token.type == "data":
                yield Token(token.lineno, "data", self._literal(token.value, lines.position(lexeme.start)))
            elif token.type == "variable_begin":
                yield mark(token.lineno, _EXPAND, lexeme.start)
                yield token
            elif token.type == "variable_end":
                yield token
                yield mark(token.lineno, _RESUME, lexeme.end)
            else:
                yield token

    def _block(
        self,
        begin: Token,
        tokens: Iterator[Token],
        begin_lexeme: _Lexeme | None,
        end_lexeme: _Lexeme | None,
        opaque: list[str],
        mark: Callable[[int, str, int], Token],
    ) -> Iterator[Token]:
        """One `{% ... %}` tag: brackets expanding tags with markers and tracks opaque bodies."""
        tag = [begin]
        for inner in tokens:
            tag.append(inner)
            if inner.type == "block_end":
                break
        name = tag[1].value if len(tag) > 1 and tag[1].type == "name" else ""
        top_level = not opaque
        if top_level and begin_lexeme and (name in self._EXPANDING or name == "include"):
            yield mark(begin.lineno, _EXPAND, begin_lexeme.start)
        yield from tag
        resume = top_level and name == "include"
        if name in self._OPAQUE and not (name == "set" and any(t.type == "assign" for t in tag)):
            opaque.append(name)
        elif opaque and name == "end" + opaque[-1]:
            resume = opaque.pop() in self._EXPANDING and not opaque
        if resume and end_lexeme:
            yield mark(begin.lineno, _RESUME, end_lexeme.end)

    @staticmethod
    def _literal(text: str, position: tuple[int, int]) -> str:
        line, column = position
        pieces = text.split("\n")
        tail = "".join(f"\n{_marker(_LITERAL, (line + n, 1))}{rest}" for n, rest in enumerate(pieces[1:], 1))
        return _marker(_LITERAL, (line, column)) + pieces[0] + tail


def _untag(marked: str) -> tuple[str, tuple[tuple[_Segment, ...], ...]]:
    """The output without markers, and per output line the segments mapping it to the source."""
    out: list[str] = []
    lines: list[list[_Segment]] = [[_Segment(1, 1, 1, False)]]
    column = 1
    depth = 0

    def begin(segment: _Segment) -> None:
        current = lines[-1]
        if current[-1].start == segment.start:
            current[-1] = segment
        else:
            current.append(segment)

    def emit(text: str) -> None:
        nonlocal column
        pieces = text.split("\n")
        column += len(pieces[0])
        for piece in pieces[1:]:
            last = lines[-1][-1]
            # A newline no marker explains: generated text stays at its tag, literal text moves down.
            lines.append([last._replace(start=1) if last.generated else _Segment(1, last.line + 1, 1, False)])
            column = 1 + len(piece)
        out.append(text)

    cursor = 0
    for match in _MARKER.finditer(marked):
        emit(marked[cursor : match.start()])
        cursor = match.end()
        kind, line, col = match.group(1), int(match.group(2)), int(match.group(3))
        if kind == _EXPAND:
            depth += 1
            if depth == 1:
                begin(_Segment(column, line, col, True))
        elif kind == _RESUME:
            depth = max(depth - 1, 0)
            if depth == 0:
                begin(_Segment(column, line, col, False))
        elif depth == 0:
            begin(_Segment(column, line, col, False))
    emit(marked[cursor:])
    return "".join(out), tuple(tuple(segments) for segments in lines)


# --- rendering ---------------------------------------------------------------------------------------


class _RenderFailure(Exception):
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
        extensions=[_PositionMarkers],
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    environment.globals.update(var=context.var, env_var=context.env_var, raise_error=context.raise_error)
    environment.filters["sql_string"] = sql_string
    markers = environment.extensions[_PositionMarkers.identifier]
    assert isinstance(markers, _PositionMarkers)
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
    rendered, segments = _untag(marked)
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
    source = _normalize_newlines(source)
    lines = _Lines(source)
    candidates: list[_Lexeme] = []
    tag_line = 0
    for lx in _lex(environment, source):
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
        line, column = _Lines(_normalize_newlines(loader.sources[file])).position(int(offset.group(1)))
    if file != main:
        used_at = next((lineno for name, lineno in frames if name == main), None)
        if used_at is not None:
            message += f" (reached from {main}:{used_at})"
    return Diagnostic(file, line, column, "error", code, message)
