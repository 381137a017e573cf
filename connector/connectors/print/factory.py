"""The `print` connector's factory."""

from __future__ import annotations

from connector.catalog.model import Table
from connector.options import shared
from connector.options.declarations import ConfigOption, ResolvedOptions
from connector.options.factory import Factory
from connector.options.types import BOOLEAN, STRING
from connector.quality.options import QUALITY_OPTIONS


class PrintOptions:
    """Options of the `print` connector."""

    PRINT_IDENTIFIER = ConfigOption("print-identifier", STRING, "Prefix of every printed row.")
    STANDARD_ERROR = ConfigOption(
        "standard-error", BOOLEAN, "Print to standard error instead of standard output.", default=False
    )
    SINK_PARALLELISM = shared.SINK_PARALLELISM


def _describe_sink(table: Table, opts: ResolvedOptions) -> dict[str, str]:
    ident = opts.get(PrintOptions.PRINT_IDENTIFIER)
    err = opts.get(PrintOptions.STANDARD_ERROR)
    return {"to": ("stderr" if err else "stdout") + (f", prefix '{ident}> '" if ident else "")}


FACTORY = Factory(
    "print",
    "Prints every row, with its change kind (+I, -U, +U, -D), to standard output.",
    options=(*(v for v in vars(PrintOptions).values() if isinstance(v, ConfigOption)), *QUALITY_OPTIONS),
    writer="connector.connectors.print.writing",
    describe_sink=_describe_sink,
    updates="all",
    shows_row_kinds=True,
)
