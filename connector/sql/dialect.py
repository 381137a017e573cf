"""The `flink` sqlglot dialect: Flink SQL as Flink's SQL client accepts it in a pipeline file.

Importing this module registers the dialect, so `sqlglot.parse(sql, read="flink")` works. Flink SQL is
Calcite with backquoted identifiers and `''`-escaped single-quoted strings (a backslash is an ordinary
character). Its built-in function library is closest to Hive's, which is the parent dialect; the
generator undoes the Hive rewrites that Flink does not share (EXPLODE, TBLPROPERTIES, dropped
temporal precision, ...), so the SQL it produces is Flink SQL.

Flink-specific nodes (all defined here):
- `WindowTVF`: `TABLE(TUMBLE|HOP|CUMULATE|SESSION(...))`, standing in FROM/JOIN in place of a table.
- `MetadataColumnConstraint`: `METADATA [FROM 'key'] [VIRTUAL]` on a column definition.
- `ExpectConstraint`: `CONSTRAINT name EXPECT (predicate) [ON VIOLATION FAIL UPDATE | DROP ROW | QUARANTINE]`,
  a data-quality expectation (Databricks' syntax), in the column list or on a column.
- `StatementSet`: `EXECUTE STATEMENT SET BEGIN ... END` and the legacy `BEGIN STATEMENT SET; ... END;`.
- `Reset`: `RESET ['key']`;  `Explain`: `EXPLAIN [PLAN FOR | details] statement`.
SET uses sqlglot's `exp.Set`; read it with `setting_of`, RESET with `reset_of`, and
`/*+ OPTIONS(...) */` table hints with `table_option_hints`.
"""

from __future__ import annotations

from collections.abc import Callable
from types import EllipsisType
from typing import Any, ClassVar

from sqlglot import exp, generator, parser
from sqlglot.dialects.dialect import NormalizationStrategy, inline_array_sql
from sqlglot.dialects.hive import Hive
from sqlglot.errors import ParseError
from sqlglot.generators.hive import HiveGenerator
from sqlglot.helper import seq_get
from sqlglot.parsers.hive import HiveParser
from sqlglot.tokens import Token, TokenType

from connector.diagnostics import did_you_mean

_INTERVAL_FIELDS = ("YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND")

WINDOW_TVF_KINDS = ("TUMBLE", "HOP", "CUMULATE", "SESSION")

# Flink's named window TVF parameters (`SIZE => INTERVAL '1' MINUTE`), mapped to WindowTVF args.
_TVF_NAMED_ARGS = {
    "DATA": "this",
    "TIMECOL": "timecol",
    "SIZE": "size",
    "SLIDE": "slide",
    "STEP": "step",
    "GAP": "gap",
    "OFFSET": "offset",
}

# Positional parameters after DATA and TIMECOL, per window kind, in Flink's order.
_TVF_POSITIONAL_ARGS = {
    "TUMBLE": ("size", "offset"),
    "HOP": ("slide", "size", "offset"),
    "CUMULATE": ("step", "size", "offset"),
    "SESSION": ("gap",),
}

# Flink accepts plural interval units; the tree always holds the singular.
_SINGULAR_UNITS = {
    "YEARS": "YEAR",
    "MONTHS": "MONTH",
    "WEEKS": "WEEK",
    "DAYS": "DAY",
    "HOURS": "HOUR",
    "MINUTES": "MINUTE",
    "SECONDS": "SECOND",
    "MILLISECONDS": "MILLISECOND",
    "MICROSECONDS": "MICROSECOND",
    "NANOSECONDS": "NANOSECOND",
}

_LIKE_OPTIONS_KINDS = ("INCLUDING", "EXCLUDING", "OVERWRITING")
_LIKE_OPTIONS_FEATURES = (
    "ALL",
    "CONSTRAINTS",
    "GENERATED",
    "METADATA",
    "OPTIONS",
    "PARTITIONS",
    "WATERMARKS",
)

_SHOW_OBJECTS = (
    ("CURRENT", "CATALOG"),
    ("CURRENT", "DATABASE"),
    ("USER", "FUNCTIONS"),
    ("FULL", "MODULES"),
    ("CATALOGS",),
    ("DATABASES",),
    ("TABLES",),
    ("VIEWS",),
    ("FUNCTIONS",),
    ("MODULES",),
    ("JARS",),
    ("JOBS",),
)

# The words a statement can start with, for "did you mean" hints.
STATEMENT_KEYWORDS = (
    "BEGIN",
    "CREATE",
    "DESC",
    "DESCRIBE",
    "DROP",
    "EXECUTE",
    "EXPLAIN",
    "INSERT",
    "RESET",
    "SELECT",
    "SET",
    "SHOW",
    "USE",
    "VALUES",
    "WITH",
)

_EXPLAIN_DETAILS = ("ESTIMATED_COST", "CHANGELOG_MODE", "PLAN_ADVICE", "JSON_EXECUTION_PLAN")

# Hive/other dialects' keywords that are not Flink's: EXPLAIN is parsed (not a command), the rest are
# plain words in Flink.
_NOT_FLINK_KEYWORDS = {
    "EXPLAIN",
    "ADD ARCHIVE",
    "ADD ARCHIVES",
    "ADD FILE",
    "ADD FILES",
    "ADD JARS",
    "MSCK REPAIR",
    "OPTIMIZE",
    "PREPARE",
    "VACUUM",
}

# Hive generator rewrites that Flink does not share: sqlglot's standard SQL is Flink's for these.
_HIVE_ONLY_TRANSFORMS = {
    exp.Create,
    exp.NotNullColumnConstraint,
    exp.PrimaryKeyColumnConstraint,
    exp.Select,
    exp.Table,
    exp.TryCast,
    exp.Unnest,
}


class WindowTVF(exp.Expression, exp.UDTF):
    """A windowing table-valued function: `TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '5' MINUTE))`.

    It stands in the FROM clause (or a JOIN) in place of a table: `From.this` / `Join.this` is the
    WindowTVF itself, carrying the relation's `alias` (exp.TableAlias). Args: `kind` (str: TUMBLE, HOP,
    CUMULATE or SESSION); `this`, the input (exp.Table for `TABLE t`, exp.Subquery for `(SELECT ...)`);
    `timecol`, the exp.Column named by DESCRIPTOR; `size`, `slide`, `step`, `gap`, `offset`, interval
    expressions or None; `partition_by`, SESSION's partition keys (list of exp.Column).
    """

    arg_types: ClassVar[dict[str, bool]] = {
        "kind": True,
        "this": True,
        "timecol": True,
        "size": False,
        "slide": False,
        "step": False,
        "gap": False,
        "offset": False,
        "partition_by": False,
        "alias": False,
        "joins": False,
    }


class MetadataColumnConstraint(exp.Expression, exp.ColumnConstraintKind):
    """`METADATA [FROM 'key'] [VIRTUAL]`: `this` is the key literal (None: the column name is the key)."""

    arg_types: ClassVar[dict[str, bool]] = {"this": False, "virtual": False}


class ExpectConstraint(exp.Expression, exp.ColumnConstraintKind):
    """`[CONSTRAINT name] EXPECT (predicate) [ON VIOLATION ...]`: `this` is the name (None on a column, where
    the enclosing ColumnConstraint holds it), `expression` the predicate, `on_violation` one of
    EXPECT_VIOLATION_ACTIONS or None (keep the row and record the violation)."""

    arg_types: ClassVar[dict[str, bool]] = {"this": False, "expression": True, "on_violation": False}


EXPECT_VIOLATION_ACTIONS = ("FAIL UPDATE", "DROP ROW", "QUARANTINE")


class StatementSet(exp.Expression):
    """`EXECUTE STATEMENT SET BEGIN INSERT ...; ... END`: `expressions` are the exp.Insert statements."""

    arg_types: ClassVar[dict[str, bool]] = {"expressions": True}


class Reset(exp.Expression):
    """`RESET 'key'` (`this` is the key literal) or `RESET` (`this` is None: reset every key)."""

    arg_types: ClassVar[dict[str, bool]] = {"this": False}


class AlterReset(exp.Expression):
    """`ALTER TABLE t RESET ('key', ...)`: `expressions` are the key literals (none: Flink rejects it)."""

    arg_types: ClassVar[dict[str, bool]] = {"expressions": False}


class Explain(exp.Expression):
    """`EXPLAIN [details] statement`: `this` is the statement, `expressions` the detail names (Var)."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True, "expressions": False}


def setting_of(expression: exp.Expr) -> tuple[str, str] | None:
    """The (key, value) a `SET 'key' = 'value'` (or legacy `SET key = value`) statement assigns.

    None for anything else, including a bare `SET` (which lists the settings).
    """
    if not isinstance(expression, exp.Set) or len(expression.expressions) != 1:
        return None
    assignment = expression.expressions[0].this
    if not isinstance(assignment, exp.EQ):
        return None
    return assignment.this.name, assignment.expression.name


def reset_of(expression: exp.Expr) -> str | EllipsisType | None:
    """The key a `RESET 'key'` statement resets; `...` for a bare `RESET` (all keys); None if not RESET."""
    if not isinstance(expression, Reset):
        return None
    key = expression.this
    return ... if key is None else key.name


def table_option_hints(table: exp.Table) -> dict[str, str]:
    """The dynamic table options of `t /*+ OPTIONS('k'='v', ...) */`, in order; {} without hints."""
    options: dict[str, str] = {}
    for hint in table.args.get("hints") or []:
        if isinstance(hint, exp.Anonymous) and hint.name.upper() == "OPTIONS":
            for pair in hint.expressions:
                if isinstance(pair, exp.EQ):
                    options[pair.this.name] = pair.expression.name
    return options


def _build_timestamp_delta(kind: type[exp.TimestampAdd] | type[exp.TimestampDiff], args: list[exp.Expr]) -> exp.Expr:
    """TIMESTAMPADD(unit, n, ts) / TIMESTAMPDIFF(unit, t1, t2): the unit is a keyword, not a column."""
    if len(args) != 3:
        return exp.Anonymous(this=kind.__name__.upper(), expressions=args)
    unit, expression, this = args
    return kind(this=this, expression=expression, unit=exp.var(unit.name.upper()))


def _timestamp_delta_sql(name: str) -> Any:
    return lambda self, e: self.func(name, e.unit, e.expression, e.this)


def _locate_error(error: ParseError, token: Token, at_end: bool) -> None:
    """Add the offending token's start offset and whether input ended there to the error details."""
    for detail in error.errors:
        detail.setdefault("start", token.start)
        detail.setdefault("end", token.end)
        detail.setdefault("at_end", at_end)


class FlinkTokenizer(Hive.Tokenizer):
    QUOTES: ClassVar[list[tuple[str, str] | str]] = ["'"]
    STRING_ESCAPES: ClassVar[list[str]] = ["'"]
    IDENTIFIERS: ClassVar[list[str | tuple[str, str]]] = ["`"]
    IDENTIFIER_ESCAPES: ClassVar[list[str]] = ["`"]
    NUMERIC_LITERALS: ClassVar[dict[str, str]] = {}
    # Hive's `$` parameters (`${var}`) are not Flink SQL; pipeline variables are Jinja's.
    SINGLE_TOKENS: ClassVar[dict[str, TokenType]] = {k: v for k, v in Hive.Tokenizer.SINGLE_TOKENS.items() if k != "$"}

    KEYWORDS: ClassVar[dict[str, TokenType]] = {
        **{k: v for k, v in Hive.Tokenizer.KEYWORDS.items() if k not in _NOT_FLINK_KEYWORDS},
        "BYTES": TokenType.VARBINARY,
        "MATCH_RECOGNIZE": TokenType.MATCH_RECOGNIZE,
        "REMOVE JAR": TokenType.COMMAND,
    }

    # Only ADD JAR, REMOVE JAR and CALL stay opaque commands; EXECUTE and SHOW are parsed.
    COMMANDS: ClassVar[set[TokenType]] = {TokenType.COMMAND}

    # `t /*+ OPTIONS(...) */` hints follow a table name.
    TOKENS_PRECEDING_HINT = Hive.Tokenizer.TOKENS_PRECEDING_HINT | {TokenType.VAR, TokenType.IDENTIFIER}


class FlinkParser(HiveParser):
    # Besides STATEMENT_PARSERS: queries, and the opaque commands the tokenizer knows (ADD JAR, ...).
    STATEMENT_START_TOKENS: ClassVar[set[TokenType]] = {
        TokenType.SELECT,
        TokenType.WITH,
        TokenType.VALUES,
        TokenType.L_PAREN,
        TokenType.COMMAND,
    }
    STRICT_CAST = True

    FUNCTIONS: ClassVar[dict[str, Callable[..., exp.Expr]]] = {
        # Flink has no SPLIT built-in: `split` is a common user-defined function name.
        **{k: v for k, v in HiveParser.FUNCTIONS.items() if k != "SPLIT"},
        "LISTAGG": lambda args: exp.GroupConcat(this=seq_get(args, 0), separator=seq_get(args, 1)),
        "STR_TO_MAP": lambda args: exp.StrToMap(
            this=seq_get(args, 0),
            pair_delim=seq_get(args, 1) or exp.Literal.string(","),
            key_value_delim=seq_get(args, 2) or exp.Literal.string("="),
        ),
        "TIMESTAMPADD": lambda args: _build_timestamp_delta(exp.TimestampAdd, args),
        "TIMESTAMPDIFF": lambda args: _build_timestamp_delta(exp.TimestampDiff, args),
        "UNIX_TIMESTAMP": lambda args, dialect: (
            HiveParser.FUNCTIONS["UNIX_TIMESTAMP"](args, dialect)
            if args
            else exp.Anonymous(this="UNIX_TIMESTAMP", expressions=[])
        ),
    }

    # The legacy group window SESSION(ts, gap) is a function call.
    FUNC_TOKENS: ClassVar[set[TokenType]] = {*HiveParser.FUNC_TOKENS, TokenType.SESSION}

    FUNCTION_PARSERS: ClassVar[dict[str, Callable[..., exp.Expr | None]]] = {
        **HiveParser.FUNCTION_PARSERS,
        "JSON_VALUE": lambda self: self._parse_json_value(),
        "TABLE": lambda self: self._parse_table_function(),
    }

    STATEMENT_PARSERS: ClassVar[dict[TokenType, Callable[..., exp.Expr]]] = {
        **HiveParser.STATEMENT_PARSERS,
        TokenType.BEGIN: lambda self: self._parse_legacy_statement_set(),
        TokenType.EXECUTE: lambda self: self._parse_execute(),
        TokenType.SET: lambda self: self._parse_flink_set(),
        TokenType.SHOW: lambda self: self._parse_flink_show(),
    }

    # Statements whose keyword the tokenizer leaves as a plain word.
    WORD_STATEMENT_PARSERS: ClassVar[dict[str, Callable[..., exp.Expr]]] = {
        "RESET": lambda self: self._parse_reset(),
        "EXPLAIN": lambda self: self._parse_explain(),
    }

    PROPERTY_PARSERS: ClassVar[dict[str, Callable[..., exp.Expr | list[exp.Expr]]]] = {
        "COMMENT": lambda self: self._parse_property_assignment(exp.SchemaCommentProperty),
        "LANGUAGE": HiveParser.PROPERTY_PARSERS["LANGUAGE"],
        "LIKE": lambda self: self._parse_flink_like(),
        "TEMPORARY": lambda self: self.expression(exp.TemporaryProperty()),
        "WITH": lambda self: self._parse_table_options(),
    }

    CONSTRAINT_PARSERS: ClassVar[dict[str, Callable[..., exp.Expr | None]]] = {
        **{key: HiveParser.CONSTRAINT_PARSERS[key] for key in ("COMMENT", "NOT", "NULL", "PRIMARY KEY")},
        "METADATA": lambda self: self._parse_metadata_constraint(),
        "WATERMARK": lambda self: self._parse_watermark(),
        "EXPECT": lambda self: self._parse_expect_constraint(),
    }

    SCHEMA_UNNAMED_CONSTRAINTS: ClassVar[set[str]] = {"PRIMARY KEY", "WATERMARK", "EXPECT"}

    ALTER_PARSERS: ClassVar[dict[str, Callable[..., exp.Expr | list[exp.Expr] | None]]] = {
        **HiveParser.ALTER_PARSERS,
        "RESET": lambda self: self.expression(AlterReset(expressions=self._parse_wrapped_csv(self._parse_string))),
    }

    def reset(self) -> None:
        super().reset()
        # Hints met between a table name and its alias, waiting for the table (see _parse_table).
        self._pending_hints: list[exp.Expr] | None = None

    def raise_error(self, message: str, token: Token | None = None) -> None:
        """Record where the error is as an offset too: sqlglot reports only a token's end column."""
        at_end = not token and not self._curr
        token = token or self._curr or self._prev
        try:
            super().raise_error(message, token)
        except ParseError as error:
            _locate_error(error, token, at_end)
            raise
        if self.errors:
            _locate_error(self.errors[-1], token, at_end)

    def _reject_unknown_tokens(self) -> None:
        """sqlglot lets characters it cannot read (e.g. `"`) slip through; Flink's parser rejects them."""
        for token in self._tokens:
            if token.token_type == TokenType.UNKNOWN:
                self.raise_error(f"Unexpected '{token.text}'", token)

    def _parse_statement(self) -> exp.Expr | None:
        if not self._curr:
            return None
        self._reject_unknown_tokens()
        word_parser = self.WORD_STATEMENT_PARSERS.get(self._curr.text.upper())
        if word_parser and self._curr.token_type == TokenType.VAR:
            comments = self._curr.comments
            self._advance()
            statement = word_parser(self)
            statement.add_comments(comments, prepend=True)
            return statement
        if self._curr.token_type not in self.STATEMENT_PARSERS and self._curr.token_type not in (
            self.STATEMENT_START_TOKENS
        ):
            # Flink runs statements only; a bare expression is a misspelt keyword or a stray word.
            word = self._curr.text
            self.raise_error(
                f"Unexpected '{word}', expected a statement such as CREATE, INSERT, SELECT or SET."
                + did_you_mean(word.upper(), STATEMENT_KEYWORDS)
            )
        return super()._parse_statement()

    def _parse_create(self) -> exp.Create | exp.Command:
        create = super()._parse_create()
        if create.args.get("kind") == "VIEW" and not create.expression:
            self.raise_error("Expected AS followed by the view's query")
        return create

    def _parse_insert(self) -> exp.Insert | exp.MultitableInserts:
        insert = super()._parse_insert()
        if not insert.expression:
            self.raise_error("Expected the query to insert (SELECT ... or VALUES ...)")
        return insert

    def _warn_unsupported(self) -> None:
        """ADD JAR, REMOVE JAR and CALL are Flink statements kept as exp.Command, not unsupported SQL."""

    def _parse_as_command(self, start: parser.Token) -> exp.Command:
        # Flink rejects what it cannot parse; never fall back to an opaque command.
        if self._curr:
            self.raise_error(f"Unexpected '{self._curr.text}'")
        else:
            self.raise_error(f"Incomplete {start.text.upper()} statement", self._prev)
        return exp.Command(this=start.text.upper())

    # --- window table-valued functions -------------------------------------------------------------

    def _parse_table_function(self) -> exp.Expr | None:
        if self._curr.text.upper() in WINDOW_TVF_KINDS and self._next.token_type == TokenType.L_PAREN:
            name = self._curr
            self._advance(2)
            tvf = self._parse_window_tvf_args(name)
            self._match_r_paren(tvf)
            return tvf
        return self.expression(exp.TableFromRows(this=self._parse_function()))

    def _parse_window_tvf_args(self, name: Token) -> WindowTVF:
        kind = name.text.upper()
        positional = ("this", "timecol", *_TVF_POSITIONAL_ARGS[kind])
        args: dict[str, Any] = {"kind": kind}
        position = 0
        while True:
            if self._next.token_type == TokenType.FARROW:
                parameter = self._curr.text.upper()
                if parameter not in _TVF_NAMED_ARGS:
                    self.raise_error(
                        f"Unknown {kind} parameter '{self._curr.text}', expected one of " + ", ".join(_TVF_NAMED_ARGS)
                    )
                self._advance(2)
                key = _TVF_NAMED_ARGS[parameter]
            elif position < len(positional):
                key = positional[position]
            else:
                self.raise_error(f"Too many arguments for {kind}")
                break
            position += 1
            if key == "this":
                args["this"] = self._parse_window_tvf_input()
                if kind == "SESSION" and self._match(TokenType.PARTITION_BY):
                    args["partition_by"] = (
                        self._parse_wrapped_csv(self._parse_column)
                        if self._curr.token_type == TokenType.L_PAREN
                        else [self._parse_column()]
                    )
            elif key == "timecol":
                if not self._match_text_seq("DESCRIPTOR", "("):
                    self.raise_error("Expected DESCRIPTOR(<time attribute column>)")
                args["timecol"] = self._parse_column()
                self._match_r_paren()
            else:
                args[key] = self._parse_disjunction()
            if not self._match(TokenType.COMMA):
                break
        return self.expression(WindowTVF(**args), name)

    def _parse_window_tvf_input(self) -> exp.Expr | None:
        if self._match(TokenType.TABLE):
            return self._parse_table_parts()
        if not self._match(TokenType.L_PAREN, advance=False):
            self.raise_error("Expected TABLE <name> or a parenthesized query as the window input")
        return self._parse_select(nested=True)

    # --- tables and hints ----------------------------------------------------------------------------

    def _parse_table(self, *args: Any, **kwargs: Any) -> exp.Expr | None:
        this = super()._parse_table(*args, **kwargs)
        if isinstance(this, exp.Table) and isinstance(this.this, WindowTVF):
            tvf = this.this
            for arg in ("alias", "joins"):
                tvf.set(arg, this.args.get(arg))
            return tvf
        if self._pending_hints and isinstance(this, exp.Table):
            this.set("hints", self._pending_hints)
            self._pending_hints = None
        return this

    def _parse_table_alias(self, *args: Any, **kwargs: Any) -> exp.TableAlias | None:
        # Flink puts hints between the table name and its alias: `t /*+ OPTIONS(...) */ AS a`.
        if self._curr.token_type == TokenType.HINT:
            self._pending_hints = self._parse_hint_comment()
        return super()._parse_table_alias(*args, **kwargs)

    def _parse_table_hints(self) -> list[exp.Expr] | None:
        hints, self._pending_hints = self._pending_hints, None
        return hints

    def _parse_schema(self, this: exp.Expr | None = None) -> exp.Expr | None:
        # INSERT INTO t /*+ OPTIONS(...) */ ...
        if isinstance(this, exp.Table) and self._curr.token_type == TokenType.HINT:
            this.set("hints", self._parse_hint_comment())
        return super()._parse_schema(this)

    def _parse_hint_comment(self) -> list[exp.Expr]:
        """The hint's functions, e.g. [OPTIONS('k' = 'v')].

        The comment is parsed on its own, so its nodes' offsets are moved to where the comment is in
        the whole input. A hint that does not parse, or OPTIONS that are not 'key' = 'value' pairs,
        is an error, as in Flink.
        """
        self._advance()
        token = self._prev
        text = self._prev_comments[0] if self._prev_comments else ""
        self._prev_comments = []
        try:
            hint = exp.maybe_parse(text, into=exp.Hint, dialect=self.dialect) if text.strip() else None
        except ParseError:
            hint = None
        hints = list(hint.expressions) if hint else []
        if not hints or not all(isinstance(h, exp.Expr) for h in hints):
            self.raise_error("Expected a hint like /*+ OPTIONS('key' = 'value') */", token)
            return []
        for hint_function in hints:
            if hint_function.name.upper() == "OPTIONS" and not all(
                isinstance(pair, exp.EQ) and pair.this.is_string and pair.expression.is_string
                for pair in hint_function.expressions
            ):
                self.raise_error("Expected 'key' = 'value' pairs in OPTIONS", token)
        base = token.start + len(FlinkTokenizer.HINT_START)
        for node in hint.walk() if hint else ():
            meta = node._meta
            if meta and "start" in meta:
                start = meta["start"] = meta["start"] + base
                meta["end"] += base
                meta["line"] = self.sql.count("\n", 0, start) + 1
                meta["col"] = start - self.sql.rfind("\n", 0, start)
        return hints

    def _parse_bracket(self, this: exp.Expr | None = None) -> exp.Expr | None:
        """Flink's value constructor `MAP[k1, v1, k2, v2]` (the generic path would read MAP as a column)."""
        if (
            isinstance(this, exp.Column)
            and not this.table
            and not this.this.quoted
            and this.name.upper() == "MAP"
            and self._match(TokenType.L_BRACKET)
        ):
            items = self._parse_csv(self._parse_disjunction)
            if not self._match(TokenType.R_BRACKET):
                self.raise_error("Expected ]")
            if len(items) % 2:
                self.raise_error("MAP[...] needs key/value pairs: an even number of elements")
            varmap = self.expression(
                exp.VarMap(keys=exp.Array(expressions=items[0::2]), values=exp.Array(expressions=items[1::2]))
            )
            return super()._parse_bracket(varmap)
        return super()._parse_bracket(this)

    # --- types ---------------------------------------------------------------------------------------

    def _parse_types(
        self,
        check_func: bool = False,
        schema: bool = False,
        allow_identifiers: bool = True,
        with_collation: bool = False,
    ) -> exp.Expr | None:
        if not check_func:
            nested = self._parse_nested_type() or self._parse_interval_type()
            if nested:
                return nested
        # Skip Hive's override, which turns VARCHAR(n) casts into STRING.
        return parser.Parser._parse_types(
            self,
            check_func=check_func,
            schema=schema,
            allow_identifiers=allow_identifiers,
            with_collation=with_collation,
        )

    def _parse_interval_type(self) -> exp.DataType | None:
        """`INTERVAL DAY[(p)] [TO SECOND[(f)]]` and `INTERVAL YEAR[(p)] [TO MONTH]`; precisions are not kept."""
        if not (self._curr and self._curr.token_type == TokenType.INTERVAL and self._next
                and self._next.text.upper() in _INTERVAL_FIELDS):
            return None
        index = self._index
        self._advance()
        start = self._interval_field()
        end = self._interval_field() if self._match_text_seq("TO") else None
        if start is None or (end is None and self._prev.text.upper() == "TO"):
            self._retreat(index)
            return None
        unit: exp.Expr = exp.IntervalSpan(this=start, expression=end) if end is not None else start
        return exp.DataType(this=exp.Interval(unit=unit))

    def _interval_field(self) -> exp.Var | None:
        if not self._curr or self._curr.text.upper() not in _INTERVAL_FIELDS:
            return None
        field = exp.var(self._curr.text.upper())
        self._advance()
        if self._match(TokenType.L_PAREN):
            self._parse_number()
            self._match_r_paren()
        return field

    def _parse_nested_type(self) -> exp.DataType | None:
        name = self._curr.text.upper()
        opener = self._next.token_type
        if name in ("ARRAY", "MULTISET") and opener == TokenType.LT:
            self._advance(2)
            element = self._parse_element_type()
            self._match_closing_angle()
            if name == "ARRAY":
                return exp.DataType(this=exp.DType.ARRAY, expressions=[element], nested=True)
            return exp.DataType(this=exp.DType.USERDEFINED, kind="MULTISET", expressions=[element], nested=True)
        if name == "MAP" and opener == TokenType.LT:
            self._advance(2)
            key = self._parse_element_type()
            if not self._match(TokenType.COMMA):
                self.raise_error("Expected ',' between the MAP key and value types")
            value = self._parse_element_type()
            self._match_closing_angle()
            return exp.DataType(this=exp.DType.MAP, expressions=[key, value], nested=True)
        if name == "ROW" and opener == TokenType.NEQ:
            # `ROW<>`, the empty row: the tokenizer reads `<>` as not-equals.
            self._advance(2)
            return exp.DataType(this=exp.DType.STRUCT, expressions=[], nested=True)
        if name == "ROW" and opener in (TokenType.LT, TokenType.L_PAREN):
            closer = TokenType.GT if opener == TokenType.LT else TokenType.R_PAREN
            self._advance(2)
            fields = [] if self._curr.token_type == closer else self._parse_csv(self._parse_row_field)
            if not self._match(closer):
                self.raise_error(f"Expected '{'>' if closer == TokenType.GT else ')'}' to close ROW")
            return exp.DataType(this=exp.DType.STRUCT, expressions=fields, nested=True)
        if name == "RAW" and opener == TokenType.L_PAREN:
            self._advance(2)
            params = self._parse_csv(self._parse_string)
            self._match_r_paren()
            return exp.DataType(this=exp.DType.USERDEFINED, kind="RAW", expressions=params)
        return None

    def _match_closing_angle(self) -> None:
        if not self._match(TokenType.GT):
            self.raise_error("Expected '>'")

    def _parse_element_type(self) -> exp.Expr:
        element = self._parse_types(schema=True)
        if element is None:
            self.raise_error("Expected a data type")
            return exp.DataType(this=exp.DType.UNKNOWN)
        if self._match_pair(TokenType.NOT, TokenType.NULL):
            element.set("nullable", False)
        else:
            self._match(TokenType.NULL)
        return element

    def _parse_row_field(self) -> exp.ColumnDef:
        name = self._parse_id_var(any_token=True)
        kind = self._parse_element_type()
        constraints = []
        if kind.args.get("nullable") is False:
            kind.set("nullable", None)
            constraints.append(self.expression(exp.ColumnConstraint(kind=exp.NotNullColumnConstraint())))
        description = self._parse_string()
        if description:
            constraints.append(
                self.expression(exp.ColumnConstraint(kind=exp.CommentColumnConstraint(this=description)))
            )
        return self.expression(exp.ColumnDef(this=name, kind=kind, constraints=constraints))

    def _parse_interval_span(self, this: exp.Expr, parse_function_unit: bool = True) -> exp.Interval:
        interval = super()._parse_interval_span(this, parse_function_unit=parse_function_unit)
        unit = interval.args.get("unit")
        for word in unit.find_all(exp.Var) if unit else ():
            singular = _SINGULAR_UNITS.get(word.name.upper())
            if singular:
                word.set("this", singular)
        return interval

    # --- CREATE TABLE / VIEW -------------------------------------------------------------------------

    def _parse_property(self) -> exp.Expr | list[exp.Expr] | None:
        if self._match(TokenType.PARTITION_BY):
            return self._parse_partitioned_by()
        if self._match_texts(self.PROPERTY_PARSERS):
            return self.PROPERTY_PARSERS[self._prev.text.upper()](self)
        return None

    def _parse_table_options(self) -> list[exp.Expr]:
        if not self._match(TokenType.L_PAREN):
            self.raise_error("Expected '(' to start the WITH options")
        options: list[exp.Expr] = []
        if not self._match(TokenType.R_PAREN):
            options = self._parse_csv(self._parse_table_option)
            if not self._match(TokenType.R_PAREN):
                self.raise_error("Expected ',' or ')' after a WITH option")
        return options

    def _parse_table_option(self) -> exp.Property:
        key = self._parse_string()
        if not key:
            self.raise_error("Expected a quoted option key, e.g. 'connector'")
        if not self._match(TokenType.EQ):
            self.raise_error("Expected '=' after the option key")
        value = self._parse_string()
        if not value:
            self.raise_error("Expected a quoted option value, e.g. 'kafka'")
        return self.expression(exp.Property(this=key, value=value))

    def _parse_flink_like(self) -> exp.LikeProperty:
        table = self._parse_table_parts(schema=True)
        options = []
        if self._match(TokenType.L_PAREN):
            while self._match_texts(_LIKE_OPTIONS_KINDS):
                kind = self._prev.text.upper()
                if not self._match_texts(_LIKE_OPTIONS_FEATURES):
                    self.raise_error(f"Expected one of {', '.join(_LIKE_OPTIONS_FEATURES)}")
                options.append(
                    self.expression(exp.Property(this=exp.var(kind), value=exp.var(self._prev.text.upper())))
                )
            if not self._match(TokenType.R_PAREN):
                self.raise_error("Expected INCLUDING, EXCLUDING, OVERWRITING or ')'")
        return self.expression(exp.LikeProperty(this=table, expressions=options))

    def _parse_watermark(self) -> exp.WatermarkColumnConstraint:
        if not self._match(TokenType.FOR):
            self.raise_error("Expected FOR after WATERMARK")
        column = self._parse_column()
        if not column:
            self.raise_error("Expected the rowtime column after WATERMARK FOR")
        if not self._match(TokenType.ALIAS):
            self.raise_error("Expected AS followed by the watermark expression")
        strategy = self._parse_disjunction()
        if not strategy:
            self.raise_error("Expected the watermark expression after AS")
        return self.expression(exp.WatermarkColumnConstraint(this=column, expression=strategy))

    def _parse_metadata_constraint(self) -> MetadataColumnConstraint:
        key = self._parse_string() if self._match(TokenType.FROM) else None
        virtual = True if self._match_text_seq("VIRTUAL") else None
        return self.expression(MetadataColumnConstraint(this=key, virtual=virtual))

    def _parse_primary_key_part(self) -> exp.Expr | None:
        return self._parse_id_var()

    def _parse_constraint(self) -> exp.Expr | None:
        if not self._match(TokenType.CONSTRAINT):
            start = self._curr
            constraint = self._parse_unnamed_constraint(constraints=self.SCHEMA_UNNAMED_CONSTRAINTS)
            if isinstance(constraint, ExpectConstraint):
                self.raise_error("An expectation needs a name: CONSTRAINT <name> EXPECT (<predicate>)", start)
            return constraint
        name = self._parse_id_var()
        key = self._parse_unnamed_constraint(constraints={"PRIMARY KEY", "EXPECT"})
        if not isinstance(key, exp.PrimaryKey | ExpectConstraint):
            self.raise_error("Expected PRIMARY KEY (...) or EXPECT (<predicate>) after the constraint name")
            return key
        key.set("this", name)
        return key

    def _parse_expect_constraint(self) -> ExpectConstraint | None:
        """`EXPECT (predicate) [ON VIOLATION FAIL UPDATE | DROP ROW | QUARANTINE]`; None when EXPECT is not
        followed by '(' (a column named `expect`)."""
        if not self._match(TokenType.L_PAREN, advance=False):
            return None
        predicate = self._parse_wrapped(self._parse_disjunction, optional=False)
        action = None
        if self._match_text_seq("ON", "VIOLATION"):
            for words in EXPECT_VIOLATION_ACTIONS:
                if self._match_text_seq(*words.split()):
                    action = words
                    break
            else:
                self.raise_error("Expected FAIL UPDATE, DROP ROW or QUARANTINE after ON VIOLATION")
        return self.expression(ExpectConstraint(expression=predicate, on_violation=action))

    # --- statement sets ------------------------------------------------------------------------------

    def _parse_execute(self) -> exp.Expr:
        if not self._match_text_seq("STATEMENT", "SET"):
            self.raise_error("Expected STATEMENT SET after EXECUTE")
        if not self._match(TokenType.BEGIN):
            self.raise_error("Expected BEGIN after EXECUTE STATEMENT SET")
        return self._parse_statement_set_body()

    def _parse_legacy_statement_set(self) -> exp.Expr:
        if not self._match_text_seq("STATEMENT", "SET"):
            self.raise_error("Expected STATEMENT SET after BEGIN")
        if self._curr:
            self.raise_error("Expected ';' after BEGIN STATEMENT SET")
        return self._parse_statement_set_body()

    def _parse_statement_set_body(self) -> StatementSet:
        """INSERTs up to END; they span the `;`-separated chunks the base parser splits input into."""
        inserts: list[exp.Expr] = []
        while True:
            if not self._curr:
                if self._chunk_index >= len(self._chunks):
                    self.raise_error("Expected END to close the statement set")
                    break
                self._advance_chunk()
                self._reject_unknown_tokens()
                continue
            if self._match(TokenType.END):
                if not inserts:
                    self.raise_error("Expected at least one INSERT in the statement set", self._prev)
                break
            if self._curr.token_type != TokenType.INSERT:
                self.raise_error("Expected INSERT or END in a statement set")
                break
            self._advance()
            inserts.append(self._parse_insert())
            if self._curr and self._curr.token_type != TokenType.END:
                self.raise_error("Expected ';' after the INSERT")
                break
        return self.expression(StatementSet(expressions=inserts))

    # --- SET / RESET / SHOW / EXPLAIN ----------------------------------------------------------------

    def _parse_flink_set(self) -> exp.Set:
        if not self._curr:
            return self.expression(exp.Set(expressions=[]))
        if self._curr.token_type == TokenType.STRING:
            key = self._parse_string()
            if not self._match(TokenType.EQ):
                self.raise_error("Expected '=' after the configuration key")
            value = self._parse_string()
            if not value:
                self.raise_error("Expected a quoted value, e.g. SET 'key' = 'value'")
        else:
            # Legacy unquoted form: the key and the value are the raw text around '='.
            first = self._curr
            while self._curr and self._curr.token_type != TokenType.EQ:
                self._advance()
            if not self._curr:
                self.raise_error("Expected '=' in SET key = value", self._prev)
            key = self.expression(exp.Literal.string(self._find_sql(first, self._prev)), first)
            self._advance()
            if not self._curr:
                self.raise_error("Expected a value after '='", self._prev)
            value_start = self._curr
            if self._curr.token_type == TokenType.STRING and not self._next:
                value = self._parse_string()
            else:
                self._advance(self._tokens_size - self._index)
                value = self.expression(exp.Literal.string(self._find_sql(value_start, self._prev)), value_start)
        assignment = self.expression(exp.EQ(this=key, expression=value))
        return self.expression(exp.Set(expressions=[exp.SetItem(this=assignment)]))

    def _parse_reset(self) -> Reset:
        if not self._curr:
            return self.expression(Reset())
        if self._curr.token_type == TokenType.STRING:
            return self.expression(Reset(this=self._parse_string()))
        first = self._curr
        self._advance(self._tokens_size - self._index)
        return self.expression(Reset(this=exp.Literal.string(self._find_sql(first, self._prev))))

    def _parse_flink_show(self) -> exp.Show:
        for words in _SHOW_OBJECTS:
            if self._match_text_seq(*words):
                return self.expression(exp.Show(this=" ".join(words)))
        if self._match_text_seq("CREATE"):
            if not self._match_set((TokenType.TABLE, TokenType.VIEW)):
                self.raise_error("Expected TABLE or VIEW after SHOW CREATE")
            kind = self._prev.text.upper()
            return self.expression(exp.Show(this=f"CREATE {kind}", target=self._parse_table_parts(schema=True)))
        if self._match_text_seq("COLUMNS"):
            if not self._match_set((TokenType.FROM, TokenType.IN)):
                self.raise_error("Expected FROM or IN after SHOW COLUMNS")
            return self.expression(exp.Show(this="COLUMNS", target=self._parse_table_parts(schema=True)))
        self.raise_error("Expected TABLES, VIEWS, FUNCTIONS, CATALOGS, DATABASES, ... after SHOW")
        return exp.Show(this="")

    def _parse_explain(self) -> Explain:
        details = []
        if not self._match_text_seq("PLAN", "FOR"):
            while self._match_texts(_EXPLAIN_DETAILS):
                details.append(exp.var(self._prev.text.upper()))
                if not self._match(TokenType.COMMA):
                    break
        statement = self._parse_statement()
        if statement is None:
            self.raise_error("Expected a statement to explain", self._prev)
        return self.expression(Explain(this=statement, expressions=details))


class FlinkGenerator(HiveGenerator):
    QUERY_HINTS = True
    SUPPORTS_TEMPORAL_PRECISION = True
    TRY_SUPPORTED = False
    INSERT_OVERWRITE = " OVERWRITE"
    WITH_PROPERTIES_PREFIX = "WITH"
    STRUCT_DELIMITER = ("<", ">")

    TYPE_MAPPING: ClassVar[dict[exp.DType, str]] = {
        **HiveGenerator.TYPE_MAPPING,
        exp.DType.TIME: "TIME",
        exp.DType.TIMESTAMPLTZ: "TIMESTAMP_LTZ",
        exp.DType.TIMESTAMPTZ: "TIMESTAMP_LTZ",
        exp.DType.VARBINARY: "VARBINARY",
        exp.DType.STRUCT: "ROW",
    }

    TRANSFORMS: ClassVar[dict[type[exp.Expr], Callable[..., str]]] = {
        **{k: v for k, v in HiveGenerator.TRANSFORMS.items() if k not in _HIVE_ONLY_TRANSFORMS},
        exp.Property: lambda self, e: f"{self.sql(e, 'this')} = {self.sql(e, 'value')}",
        exp.Array: lambda self, e: f"ARRAY{inline_array_sql(self, e)}",
        exp.VarMap: lambda self, e: (
            "MAP["
            + ", ".join(
                f"{self.sql(k)}, {self.sql(v)}"
                for k, v in zip(e.args["keys"].expressions, e.args["values"].expressions, strict=True)
            )
            + "]"
        ),
        exp.CurrentTimestamp: lambda *_: "CURRENT_TIMESTAMP",
        exp.GroupConcat: lambda self, e: self.func("LISTAGG", e.this, e.args.get("separator")),
        exp.JSONKeyValue: lambda self, e: f"KEY {self.sql(e, 'this')} VALUE {self.sql(e, 'expression')}",
        exp.Length: lambda self, e: self.func("CHAR_LENGTH", e.this),
        exp.TimestampAdd: _timestamp_delta_sql("TIMESTAMPADD"),
        exp.TimestampDiff: _timestamp_delta_sql("TIMESTAMPDIFF"),
        exp.Trunc: lambda self, e: self.func("TRUNCATE", e.this, e.args.get("decimals")),
        exp.Version: lambda self, e: f"FOR SYSTEM_TIME AS OF {self.sql(e, 'expression')}",
        exp.RegexpLike: lambda self, e: self.func("REGEXP", e.this, e.expression),
        WindowTVF: lambda self, e: self.windowtvf_sql(e),
        MetadataColumnConstraint: lambda self, e: self.metadatacolumnconstraint_sql(e),
        ExpectConstraint: lambda self, e: self.expectconstraint_sql(e),
        StatementSet: lambda self, e: self.statementset_sql(e),
        Reset: lambda self, e: self.reset_sql(e),
        AlterReset: lambda self, e: f"RESET ({self.expressions(e, flat=True)})",
        Explain: lambda self, e: self.explain_sql(e),
    }

    PROPERTIES_LOCATION: ClassVar[dict[type[exp.Expression], exp.PropertiesLocation]] = {
        **HiveGenerator.PROPERTIES_LOCATION,
        exp.LikeProperty: exp.Properties.Location.POST_EXPRESSION,
        exp.LanguageProperty: exp.Properties.Location.POST_EXPRESSION,
    }

    def alterset_sql(self, expression: exp.AlterSet) -> str:
        """Flink's `ALTER TABLE t SET ('key' = 'value', ...)` (Hive's form has no parentheses)."""
        return f"SET ({self.expressions(expression, flat=True)})"

    def arrayagg_sql(self, expression: exp.ArrayAgg) -> str:
        return generator.Generator.arrayagg_sql(self, expression)

    def windowtvf_sql(self, expression: WindowTVF) -> str:
        data = expression.this
        data_sql = self.sql(data) if isinstance(data, exp.Subquery) else f"TABLE {self.sql(data)}"
        keys = expression.args.get("partition_by") or []
        if keys:
            partition = self.expressions(expression, key="partition_by", flat=True)
            data_sql += f" PARTITION BY {partition if len(keys) == 1 else f'({partition})'}"
        args = [data_sql, f"DESCRIPTOR({self.sql(expression, 'timecol')})"]
        for key in _TVF_POSITIONAL_ARGS[expression.args["kind"]]:
            value = expression.args.get(key)
            if value is not None:
                args.append(self.sql(value))
        call = f"TABLE({expression.args['kind']}({', '.join(args)}))"
        alias = self.sql(expression, "alias")
        alias = f" AS {alias}" if alias else ""
        joins = self.indent(self.expressions(expression, key="joins", sep="", flat=True), skip_first=True)
        return f"{call}{alias}{joins}"

    def metadatacolumnconstraint_sql(self, expression: MetadataColumnConstraint) -> str:
        key = self.sql(expression, "this")
        key = f" FROM {key}" if key else ""
        virtual = " VIRTUAL" if expression.args.get("virtual") else ""
        return f"METADATA{key}{virtual}"

    def expectconstraint_sql(self, expression: ExpectConstraint) -> str:
        name = self.sql(expression, "this")
        named = f"CONSTRAINT {name} " if name else ""
        action = expression.args.get("on_violation")
        violation = f" ON VIOLATION {action}" if action else ""
        return f"{named}EXPECT ({self.sql(expression, 'expression')}){violation}"

    def statementset_sql(self, expression: StatementSet) -> str:
        inserts = "".join(f"{self.sep()}{self.indent(self.sql(e))};" for e in expression.expressions)
        return f"EXECUTE STATEMENT SET{self.sep()}BEGIN{inserts}{self.sep()}END"

    def likeproperty_sql(self, expression: exp.LikeProperty) -> str:
        options = " ".join(f"{e.name} {self.sql(e, 'value')}" for e in expression.expressions)
        options = f" ({options})" if options else ""
        return f"LIKE {self.sql(expression, 'this')}{options}"

    def reset_sql(self, expression: Reset) -> str:
        key = self.sql(expression, "this")
        return f"RESET {key}" if key else "RESET"

    def explain_sql(self, expression: Explain) -> str:
        details = self.expressions(expression, flat=True)
        details = f" {details}" if details else ""
        return f"EXPLAIN{details} {self.sql(expression, 'this')}"

    def show_sql(self, expression: exp.Show) -> str:
        target = self.sql(expression, "target")
        target = f" {'FROM ' if expression.name == 'COLUMNS' else ''}{target}" if target else ""
        return f"SHOW {expression.name}{target}"

    def set_sql(self, expression: exp.Set) -> str:
        return super().set_sql(expression).rstrip()

    def table_parts(self, expression: exp.Table) -> str:
        name = super().table_parts(expression)
        hints = expression.args.get("hints")
        if hints:
            name += f" /*+ {self.expressions(expression, key='hints', flat=True, sep=' ')} */"
        return name

    def primarykey_sql(self, expression: exp.PrimaryKey) -> str:
        name = self.sql(expression, "this")
        constraint = f"CONSTRAINT {name} " if name else ""
        columns = self.expressions(expression, flat=True)
        options = self.expressions(expression, key="options", flat=True, sep=" ")
        options = f" {options}" if options else ""
        return f"{constraint}PRIMARY KEY ({columns}){options}"

    def columndef_sql(self, expression: exp.ColumnDef, sep: str = " ") -> str:
        return generator.Generator.columndef_sql(self, expression, sep)

    def unnest_sql(self, expression: exp.Unnest) -> str:
        return generator.Generator.unnest_sql(self, expression)

    def datatype_sql(self, expression: exp.DataType) -> str:
        if expression.is_type(exp.DType.STRUCT):
            fields = ", ".join(self._row_field_sql(field) for field in expression.expressions)
            sql = f"ROW<{fields}>"
        elif expression.is_type(exp.DType.VARBINARY) and not expression.expressions:
            sql = "BYTES"
        else:
            # Skip Hive's override, which drops temporal precision and VARCHAR lengths.
            sql = generator.Generator.datatype_sql(self, expression)
        if expression.args.get("nullable") is False:
            sql += " NOT NULL"
        return sql

    def _row_field_sql(self, field: exp.Expr) -> str:
        if not isinstance(field, exp.ColumnDef):
            return self.sql(field)
        parts = [self.sql(field, "this"), self.sql(field, "kind")]
        for constraint in field.args.get("constraints") or []:
            kind = constraint.args.get("kind")
            if isinstance(kind, exp.CommentColumnConstraint):
                parts.append(self.sql(kind, "this"))
            else:
                parts.append(self.sql(constraint))
        return " ".join(parts)


class Flink(Hive):
    """Flink SQL. Identifiers are case-sensitive and arrays are 1-based, as in Flink."""

    NORMALIZATION_STRATEGY = NormalizationStrategy.CASE_SENSITIVE
    INDEX_OFFSET = 1
    TYPED_DIVISION = True
    SAFE_DIVISION = False
    REGEXP_EXTRACT_DEFAULT_GROUP = 0

    Tokenizer = FlinkTokenizer
    Parser = FlinkParser
    Generator = FlinkGenerator
