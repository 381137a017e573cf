"""The Flink parser: statements (SET, RESET, SHOW, EXPLAIN, statement sets), window table-valued
functions, `/*+ OPTIONS(...) */` hints, Flink's functions, and errors that know their offset.

CREATE TABLE's grammar is in `FlinkSchemaParser`, which this class extends.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

from sqlglot import exp
from sqlglot.errors import ParseError
from sqlglot.helper import seq_get
from sqlglot.parsers.hive import HiveParser
from sqlglot.tokens import Token, TokenType

from connector.diagnostics import did_you_mean
from connector.sql.dialect import unicode_strings
from connector.sql.dialect.expressions import (
    WINDOW_TVF_KINDS,
    WINDOW_TVF_POSITIONAL_ARGS,
    Explain,
    Reset,
    StatementSet,
    WindowTVF,
)
from connector.sql.dialect.flink_functions import CALL_META, flink_functions, takes
from connector.sql.dialect.reserved import reserved_words
from connector.sql.dialect.schema_parser import FlinkSchemaParser

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


def _build_timestamp_delta(kind: type[exp.TimestampAdd] | type[exp.TimestampDiff], args: list[exp.Expr]) -> exp.Expr:
    """TIMESTAMPADD(unit, n, ts) / TIMESTAMPDIFF(unit, t1, t2): the unit is a keyword, not a column."""
    if len(args) != 3:
        return exp.Anonymous(this=kind.__name__.upper(), expressions=args)
    unit, expression, this = args
    return kind(this=this, expression=expression, unit=exp.var(unit.name.upper()))


def _locate_error(error: ParseError, token: Token, at_end: bool) -> None:
    """Add the offending token's start offset and whether input ended there to the error details."""
    for detail in error.errors:
        detail.setdefault("start", token.start)
        detail.setdefault("end", token.end)
        detail.setdefault("at_end", at_end)


E = TypeVar("E", bound=exp.Expr)

# Flink functions whose calls stay plain for `connector.sql.rewrite.functions.strings` to rewrite (Spark's split takes a
# regular expression, Flink's a delimiter; Spark's instr takes no start or occurrence) or for `validate` to refuse
# (TYPEOF: `connector.sql.validate.calls.NOT_AS_IN_FLINK`).
_PLAIN_CALLS = frozenset({"SPLIT", "INSTR", "TYPEOF"})


class FlinkParser(FlinkSchemaParser):
    # Besides STATEMENT_PARSERS: queries, and the opaque commands the tokenizer knows (ADD JAR, ...).
    STATEMENT_START_TOKENS: ClassVar[set[TokenType]] = {
        TokenType.SELECT,
        TokenType.WITH,
        TokenType.VALUES,
        TokenType.L_PAREN,
        TokenType.COMMAND,
    }
    STRICT_CAST = True

    # Hive's function table, kept for Flink's function names and for the words Flink's grammar reserves (ARRAY[...],
    # TRANSLATE, DATE '...'): a call of any other name (NVL, LEN, DATEDIFF) stays a plain call (exp.Anonymous), which
    # reaches Spark by its own name and which `validate` can name as a function Flink lacks. So do `_PLAIN_CALLS`.
    FUNCTIONS: ClassVar[dict[str, Callable[..., exp.Expr]]] = {
        **{
            k: v
            for k, v in HiveParser.FUNCTIONS.items()
            if k not in _PLAIN_CALLS and (k in flink_functions() or k in reserved_words())
        },
        "LISTAGG": lambda args: exp.GroupConcat(this=seq_get(args, 0), separator=seq_get(args, 1)),
        "STR_TO_MAP": lambda args: exp.StrToMap(
            this=seq_get(args, 0),
            pair_delim=seq_get(args, 1) or exp.Literal.string(","),
            key_value_delim=seq_get(args, 2) or exp.Literal.string("="),
        ),
        # Flink's default group is 1 here (0 in REGEXP_EXTRACT)
        "REGEXP_EXTRACT_ALL": lambda args: exp.RegexpExtractAll(
            this=seq_get(args, 0), expression=seq_get(args, 1), group=seq_get(args, 2) or exp.Literal.number(1)
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
        "JSON_ARRAY": lambda self: self._parse_flink_json_array(),
        "TABLE": lambda self: self._parse_table_function(),
    }

    STATEMENT_PARSERS: ClassVar[dict[TokenType, Callable[..., exp.Expr]]] = {
        **HiveParser.STATEMENT_PARSERS,
        TokenType.BEGIN: lambda self: self._parse_legacy_statement_set(),
        TokenType.EXECUTE: lambda self: self._parse_execute(),
        TokenType.SET: lambda self: self._parse_flink_set(),
        TokenType.SHOW: lambda self: self._parse_flink_show(),
    }

    STRING_PARSERS: ClassVar[dict[TokenType, Callable[..., exp.Expr]]] = {
        **HiveParser.STRING_PARSERS,
        TokenType.UNICODE_STRING: lambda self, token: self._parse_unicode_string(token),
    }
    PRIMARY_PARSERS: ClassVar[dict[TokenType, Callable[..., exp.Expr | None]]] = {
        **HiveParser.PRIMARY_PARSERS,
        **STRING_PARSERS,
    }

    # Flink 2.3's strategies for a sink whose primary key differs from the query's upsert key.
    CONFLICT_ACTIONS: ClassVar[dict[str, Any]] = {"DO": ("NOTHING", "ERROR", "DEDUPLICATE")}

    # Statements whose keyword the tokenizer leaves as a plain word.
    WORD_STATEMENT_PARSERS: ClassVar[dict[str, Callable[..., exp.Expr]]] = {
        "RESET": lambda self: self._parse_reset(),
        "EXPLAIN": lambda self: self._parse_explain(),
    }

    def reset(self) -> None:
        super().reset()
        # Hints met between a table name and its alias, waiting for the table (see _parse_table).
        self._pending_hints: list[exp.Expr] | None = None
        # The name tokens of the calls being parsed, innermost last (see validate_expression).
        self._calls: list[Token] = []

    def _parse_unicode_string(self, token: Token) -> exp.Expr:
        """`U&'...' [UESCAPE 'c']` as the plain string it stands for, so that every layer after the parser (and
        Spark) sees text."""
        escape = "\\"
        if self._match_text_seq("UESCAPE"):
            written = self._parse_string()
            escape = written.name if isinstance(written, exp.Literal) else ""
        try:
            unicode_strings.check_escape(escape)
            text = unicode_strings.decode(token.text, escape)
        except unicode_strings.UnicodeLiteralError as error:
            self.raise_error(str(error), token)
            text = token.text
        return self.expression(exp.Literal(this=text, is_string=True), token)

    def _parse_function_call(self, *args: Any, **kwargs: Any) -> exp.Expr | None:
        if not self._curr:
            return None
        self._calls.append(self._curr)
        try:
            return super()._parse_function_call(*args, **kwargs)
        finally:
            self._calls.pop()

    def validate_expression(self, expression: E, args: list | None = None) -> E:
        """sqlglot calls this with the written arguments of a call it builds a typed node for; the node keeps the
        name and the argument count (`CALL_META`), which typed nodes may not show (defaults added, arguments merged),
        for `validate` to check them against Flink's signature. A count Flink refuses skips sqlglot's own checks of
        the node ("Required keyword ... missing"), so that the error says what Flink's function takes."""
        if args is not None and self._calls and isinstance(expression, exp.Func):
            name = self._calls[-1].text.upper()
            expression.meta[CALL_META] = (name, len(args))
            expression.update_positions(self._calls[-1])  # IF(...), SUBSTRING(...) have parsers of their own
            if not takes(name, len(args)):
                return expression  # `validate` names Flink's argument counts; sqlglot's node's would mislead
        return super().validate_expression(expression, args)

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
        if self._curr and self._curr.text.upper() == "CATALOG":  # parsed so that the loader can say why not
            self._advance()
            exists = self._parse_exists(not_=True)
            name = self._parse_id_var()
            if name is None:
                self.raise_error("Expected the catalog's name")
            properties = self._parse_properties()
            return self.expression(exp.Create(this=name, kind="CATALOG", exists=exists, properties=properties))
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

    def _parse_as_command(self, start: Token) -> exp.Command:
        # Flink rejects what it cannot parse; never fall back to an opaque command.
        if self._curr:
            self.raise_error(f"Unexpected '{self._curr.text}'")
        else:
            self.raise_error(f"Incomplete {start.text.upper()} statement", self._prev)
        return exp.Command(this=start.text.upper())

    # --- window table-valued functions -------------------------------------------------------------

    def _parse_flink_json_array(self) -> exp.JSONArray:
        """JSON_ARRAY([value, ...] [NULL | ABSENT ON NULL])."""
        values = [] if self._match(TokenType.R_PAREN, advance=False) else self._parse_csv(self._parse_bitwise)
        handling = self._parse_on_handling("NULL", "NULL", "ABSENT")
        return self.expression(exp.JSONArray(expressions=values, null_handling=handling))

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
        positional = ("this", "timecol", *WINDOW_TVF_POSITIONAL_ARGS[kind])
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
        base = token.start + len(self.dialect.tokenizer_class.HINT_START)
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

    def _parse_interval_span(self, this: exp.Expr, parse_function_unit: bool = True) -> exp.Interval:
        interval = super()._parse_interval_span(this, parse_function_unit=parse_function_unit)
        unit = interval.args.get("unit")
        for word in unit.find_all(exp.Var) if unit else ():
            singular = _SINGULAR_UNITS.get(word.name.upper())
            if singular:
                word.set("this", singular)
        return interval

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
