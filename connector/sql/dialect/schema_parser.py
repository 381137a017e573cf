"""The part of the Flink parser that reads what CREATE TABLE declares: data types, column constraints
(METADATA, WATERMARK, EXPECT, PRIMARY KEY), the WITH options and LIKE; and ALTER TABLE's RESET.

`FlinkParser` (connector.sql.dialect.parser) extends it; the split keeps each module a readable size.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from sqlglot import exp, parser
from sqlglot.parsers.hive import HiveParser
from sqlglot.tokens import TokenType

from connector.sql.dialect.expressions import (
    EXPECT_VIOLATION_ACTIONS,
    AlterReset,
    ExpectConstraint,
    MetadataColumnConstraint,
)

_INTERVAL_FIELDS = ("YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND")

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


class FlinkSchemaParser(HiveParser):
    """Flink's CREATE TABLE grammar, through sqlglot's PROPERTY_PARSERS and CONSTRAINT_PARSERS tables."""

    PROPERTY_PARSERS: ClassVar[dict[str, Callable[..., exp.Expr | list[exp.Expr]]]] = {
        "COMMENT": lambda self: self._parse_property_assignment(exp.SchemaCommentProperty),
        "LANGUAGE": HiveParser.PROPERTY_PARSERS["LANGUAGE"],
        "LIKE": lambda self: self._parse_flink_like(),
        # CREATE TEMPORARY SYSTEM FUNCTION: a temporary function outside any catalog, as a pipeline's functions are.
        "SYSTEM": lambda self: self.expression(exp.TemporaryProperty()),
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

    # --- types ---------------------------------------------------------------------------------------

    def _parse_types(
        self,
        check_func: bool = False,
        schema: bool = False,
        allow_identifiers: bool = True,
        with_collation: bool = False,
    ) -> exp.Expr | None:
        ahead = (self._curr.token_type, self._next.token_type) if self._curr and self._next else None
        if ahead == (TokenType.ARRAY, TokenType.L_BRACKET):
            # Flink has no `ARRAY[n]` type: this is the value constructor. sqlglot would parse its elements as
            # array sizes first and then again as values, twice per level of nested ARRAY[...].
            return None
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
        if not (
            self._curr
            and self._curr.token_type == TokenType.INTERVAL
            and self._next
            and self._next.text.upper() in _INTERVAL_FIELDS
        ):
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
