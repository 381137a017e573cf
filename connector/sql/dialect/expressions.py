"""The sqlglot nodes for the Flink SQL that sqlglot's own nodes do not cover.

They live apart from the parser and generator because the loader, the validator and the transpiler match
on them too. Importing this module does not register the `flink` dialect: `connector.sql.dialect.flink` does.
"""

from __future__ import annotations

from typing import ClassVar

from sqlglot import exp

# The window TVFs, as WindowTVF `kind`s.
WINDOW_TVF_KINDS = ("TUMBLE", "HOP", "CUMULATE", "SESSION")

# Positional parameters after DATA and TIMECOL, per window kind, in Flink's order.
WINDOW_TVF_POSITIONAL_ARGS = {
    "TUMBLE": ("size", "offset"),
    "HOP": ("slide", "size", "offset"),
    "CUMULATE": ("step", "size", "offset"),
    "SESSION": ("gap",),
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
