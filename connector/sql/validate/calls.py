"""Which functions a query may call, so that `validate` refuses a call no engine would run, as Flink does ("No match
found for function signature"), instead of Spark failing the run with UNRESOLVED_ROUTINE, and warns about a call
that only Spark runs.

A call the parser leaves as a plain call (sqlglot's `Anonymous`) reaches Spark by its name unless the transpiler
maps it. Known: Spark's built-in functions, listed in `spark_functions.txt` beside this module from the pinned
Spark (`python -m connector.sql.validate.calls` writes it; a test compares it with the running Spark), the Flink
functions the transpiler maps (`connector.sql.rewrite.functions.builtins.MAPPED_CALLS`), the window functions it
rewrites, and the
pipeline's Python functions (CREATE FUNCTION).

A call of a Spark function that Flink lacks (NVL, LEN, DATEDIFF: none of `connector.sql.dialect.flink_functions`) is a
warning, not an error, as reserved words are (`connector.sql.dialect.reserved`): kafka-sql ran such files before it
checked,
and refusing them now would stop pipelines that run; the warning says Flink refuses the file, and which Flink
function does the same where there is one.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from sqlglot import exp

from connector.diagnostics import did_you_mean
from connector.sql.dialect.flink_functions import CALL_META, argument_counts, flink_functions, takes
from connector.sql.rewrite.functions.builtins import MAPPED_CALLS

SPARK_FUNCTIONS_FILE = Path(__file__).with_name("spark_functions.txt")
_WINDOWS = ("TUMBLE", "HOP", "SESSION", "CUMULATE")
# Rewritten by `connector.planning.operators.windows` and `connector.planning.transpile` (which refuses some with a
# reason of its own).
REWRITTEN = frozenset(
    {*_WINDOWS, "DESCRIPTOR", "CURRENT_WATERMARK", "SOURCE_WATERMARK"}
    | {f"{w}_{part}" for w in _WINDOWS for part in ("START", "END", "ROWTIME", "PROCTIME")}
)


@functools.cache
def spark_functions() -> frozenset[str]:
    """Spark's built-in SQL functions, upper-cased."""
    return frozenset(line.strip().upper() for line in SPARK_FUNCTIONS_FILE.read_text().splitlines() if line.strip())


# Spark functions Flink lacks -> the Flink function that does the same (or nearly: the warning says "instead").
FLINK_INSTEAD = {
    "NVL": "COALESCE",
    "NVL2": "IF",
    "LEN": "CHAR_LENGTH",
    "LENGTH": "CHAR_LENGTH",
    "SIZE": "CARDINALITY",
    "ARRAY_SIZE": "CARDINALITY",
    "DATEDIFF": "TIMESTAMPDIFF",
    "DATE_ADD": "TIMESTAMPADD",
    "DATE_SUB": "TIMESTAMPADD",
    "UCASE": "UPPER",
    "LCASE": "LOWER",
    "POW": "POWER",
    "SIGNUM": "SIGN",
    "RANDOM": "RAND",
    "COLLECT_LIST": "ARRAY_AGG",
    "GET_JSON_OBJECT": "JSON_VALUE",
    "TO_JSON": "JSON_STRING",
    "BASE64": "TO_BASE64",
    "UNBASE64": "FROM_BASE64",
    "WEEKOFYEAR": "WEEK",
    "TO_CHAR": "DATE_FORMAT",
}

# Flink functions whose Spark namesake gives another result that kafka-sql does not rewrite: refused, with why.
NOT_AS_IN_FLINK = {
    "TYPEOF": "Spark's typeof names Spark's types (int, string), not Flink's (INT NOT NULL, CHAR(1) NOT NULL)",
}


def unknown_calls(tree: exp.Expr, declared: Iterable[str]) -> Iterator[tuple[exp.Anonymous, str]]:
    """Each call in `tree` of a function that is none of the known ones or of `declared` (the pipeline's Python
    functions), with the error's message."""
    own = {name.upper() for name in declared}
    known = spark_functions() | MAPPED_CALLS | REWRITTEN | own
    for call in tree.find_all(exp.Anonymous):
        name = call.name.upper()
        if name in NOT_AS_IN_FLINK and name not in own:
            yield call, f"Flink's function '{call.name}' is not supported by kafka-sql: {NOT_AS_IN_FLINK[name]}."
        elif name and name not in known and call.arg_key != "hints":  # a table's OPTIONS(...) hint is no call
            declare = f"Declare a Python function: CREATE FUNCTION {call.name} AS 'module.function' LANGUAGE PYTHON."
            if name in flink_functions():
                yield call, f"Flink's function '{call.name}' is not supported by kafka-sql yet. {declare}"
            else:
                hint = did_you_mean(name.lower(), sorted({n.lower() for n in known}))
                yield call, (
                    f"No match found for function '{call.name}': it is no built-in function of Flink SQL, nor a "
                    f"function the pipeline declares.{hint} {declare}"
                )


def spark_only_calls(tree: exp.Expr, declared: Iterable[str]) -> Iterator[tuple[exp.Func, str]]:
    """Each call in `tree` of a Spark function that Flink SQL lacks (and the pipeline does not declare), with the
    warning's message; calls of reserved words are typed nodes (CORR, DATE_TRUNC), found by `_calls` too."""
    own = {name.upper() for name in declared}
    flink = flink_functions() | MAPPED_CALLS | REWRITTEN | own
    for call, written, _ in _calls(tree):
        name = written.upper()
        if name and name not in flink and name in spark_functions() and call.arg_key != "hints":
            instead = f" Flink's {FLINK_INSTEAD[name]} does this instead." if name in FLINK_INSTEAD else ""
            yield call, (
                f"'{written}' is no function of Flink SQL: Flink refuses this call (\"No match found for function "
                f"signature\"), and kafka-sql runs it as Spark's {name.lower()}.{instead}"
            )


def main() -> None:
    """Write `spark_functions.txt` from the Spark this project pins."""
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.master("local[1]").appName("kafka-sql-functions").getOrCreate()
    try:
        SPARK_FUNCTIONS_FILE.write_text("\n".join(listed(spark)) + "\n")
    finally:
        spark.stop()


def miscounted_calls(tree: exp.Expr, declared: Iterable[str]) -> Iterator[tuple[exp.Func, str]]:
    """Each call in `tree` of a Flink built-in function (not one the pipeline declares) with more or fewer arguments
    than Flink's signatures take, with the error's message: Flink refuses it ("Invalid number of arguments to
    function"), and Spark's namesake would fail at start, or take the call for one of its own."""
    own = {name.upper() for name in declared}
    for call, written, given in _calls(tree):
        name = written.upper()
        counts = argument_counts(name)
        # REWRITTEN: TUMBLE(ts, INTERVAL ...) is also a legacy group window, which Flink's operator table lacks
        if counts is not None and not takes(name, given) and name not in own | REWRITTEN and call.arg_key != "hints":
            yield call, (
                f"Invalid number of arguments to function '{name}': Flink's {name} takes {_arguments(*counts)}, "
                f"the call gives {given}."
            )


def _calls(tree: exp.Expr) -> Iterator[tuple[exp.Func, str, int]]:
    """Each function call in `tree` whose written name the dialect's parser kept: (call, name, argument count).
    Typed nodes (CORR, SHA2) keep them in `CALL_META`; a plain call is its own name and arguments."""
    for call in tree.find_all(exp.Func):
        if isinstance(call, exp.Anonymous):
            yield call, call.name, len(call.expressions)
        elif CALL_META in call.meta:
            name, given = call.meta[CALL_META]
            yield call, name, given


def _arguments(fewest: int, most: int | None) -> str:
    if most is None:
        return f"at least {fewest} argument{'s' * (fewest != 1)}"
    if fewest == most:
        return f"{fewest} argument{'s' * (fewest != 1)}"
    return f"{fewest} to {most} arguments"


def listed(spark: object) -> list[str]:
    """The names of the session's built-in SQL functions that are callable by name, sorted."""
    rows = spark.sql("SHOW SYSTEM FUNCTIONS").collect()  # type: ignore[attr-defined]
    return sorted({str(r[0]) for r in rows if re.fullmatch(r"[a-z_][a-z0-9_]*", str(r[0]))})


if __name__ == "__main__":
    main()
