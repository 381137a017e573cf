"""What SET, RESET and `/*+ OPTIONS(...) */` hints say, read off the parsed tree.

The loader, the planner and the session extension all read these, so the reading is written once.
"""

from __future__ import annotations

from types import EllipsisType

from sqlglot import exp

from connector.sql.dialect.expressions import Reset


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
