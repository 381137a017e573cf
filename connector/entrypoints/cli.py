"""`kafka-sql`: the command line. Verbs read like the work: validate, render, explain, run, broker, registry, produce.

Exit codes: 0 success; 1 the file has errors (or a query failed); 2 bad command line; 3 a data-quality gate
stopped a query; 130 interrupted before anything started.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from connector import __version__
from connector.diagnostics import SHOWN_PER_FILE, Diagnostic, PipelineError, diagnostics_json, print_diagnostics
from connector.errors import KafkaSqlError
from connector.sql.template import templating
from connector.sql.template.variables import load_vars_file, parse_var_args

EXIT_OK = 0
EXIT_ERRORS = 1
EXIT_USAGE = 2
EXIT_QUALITY = 3

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


def _template_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--var",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="set a template variable, read with {{ var('KEY') }} (repeatable)",
    )
    parser.add_argument(
        "--vars-file",
        type=Path,
        metavar="FILE",
        help="template variables from a JSON object or KEY=VALUE lines; --var wins over the file",
    )


def _variables(args: argparse.Namespace) -> dict[str, str]:
    variables: dict[str, str] = {}
    if args.vars_file is not None:
        variables.update(load_vars_file(args.vars_file))
    variables.update(parse_var_args(args.var))
    return variables


def _print_json(document: object) -> None:
    # Plain stdout, not rich: machine-readable output must be exactly json.dumps (no wrapping, no emoji codes).
    sys.stdout.write(json.dumps(document, indent=2) + "\n")


def _print_diagnostics(diagnostics: Sequence[Diagnostic], fmt: str) -> None:
    if fmt == "json":
        _print_json(diagnostics_json(diagnostics))
    else:
        print_diagnostics(err, diagnostics)


def _print_setup_error(error: Exception, fmt: str) -> None:
    """An error kafka-sql raised on purpose (the installation, a plugin, a server), not in the pipeline file."""
    if fmt == "json":
        _print_json({"error": {"kind": "setup", "message": str(error)}})
    else:
        err.print(f"error: {error}", markup=False)


def _print_internal_error(error: Exception, fmt: str) -> None:
    """A bug, reported in the output format asked for: a `--format json` caller reads JSON whatever happened."""
    hint = "This is a bug in kafka-sql; set KAFKA_SQL_DEBUG=1 to see the traceback and report it."
    if fmt == "json":
        _print_json({"error": {"kind": type(error).__name__, "message": str(error), "hint": hint}})
    else:
        err.print(f"internal error: {type(error).__name__}: {error}\n{hint}", markup=False)


def cmd_validate(args: argparse.Namespace) -> int:
    from connector.sql.frontend import compile_file, plan_diagnostics

    variables = _variables(args)
    diagnostics: list[Diagnostic] = []
    for path in args.files:
        compiled = compile_file(path, variables)
        diagnostics += compiled.diagnostics + plan_diagnostics(compiled)
    _print_diagnostics(diagnostics, args.format)
    errors = sum(1 for d in diagnostics if d.severity == "error")
    if args.format == "text":
        if errors:
            err.print(f"[red]{errors} error(s)[/red] in {len(args.files)} file(s).")
        else:
            err.print(f"[green]OK[/green]: {len(args.files)} file(s) valid.")
    return EXIT_ERRORS if errors else EXIT_OK


def cmd_render(args: argparse.Namespace) -> int:
    from connector.secrets import mask_sql, mask_text

    rendered = templating.render(args.file, _variables(args))
    text = rendered.text if args.show_secrets else mask_text(mask_sql(rendered.text), rendered.secrets)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return EXIT_OK


def cmd_explain(args: argparse.Namespace) -> int:
    from connector.planning.explain import explain, render_text
    from connector.secrets import mask_text
    from connector.sql.frontend import compile_file

    compiled = compile_file(args.file, _variables(args))
    if compiled.errors:
        _print_diagnostics(compiled.diagnostics, args.format)
        return EXIT_ERRORS
    if args.format == "text":
        _print_diagnostics(compiled.diagnostics, "text")  # warnings, on stderr
    plan = explain(compiled.require(), args.file.stem)
    # Option values are masked by key; values of secret var()s / env_var()s are masked wherever they ended up.
    secrets = compiled.rendered.secrets if compiled.rendered else frozenset()
    text = json.dumps(plan, indent=2) if args.format == "json" else render_text(plan)
    sys.stdout.write(mask_text(text, secrets) + "\n")
    return EXIT_OK


def cmd_run(args: argparse.Namespace) -> int:
    from connector.runtime.session import JvmLaunch

    # Spark's JVM starts while the rest of kafka-sql is imported and the file compiles (connector.runtime.session).
    launch = JvmLaunch.start(args.master, args.file.stem) if args.file.is_file() else None
    from connector.runtime.runner import RunOptions, run_file

    return run_file(
        args.file,
        RunOptions(
            variables=_variables(args),
            master=args.master,
            checkpoint_dir=args.checkpoint_dir,
            max_batches=args.max_batches,
            timeout=args.timeout,
            launch=launch,
        ),
    )


def cmd_broker(args: argparse.Namespace) -> int:
    from connector.dev import broker

    if args.action == "start":
        info = broker.start(args.data_dir, port=args.port, on_progress=lambda m: err.print(f"[dim]{m}[/dim]"))
        out.print(info.bootstrap)
        err.print(f"broker running (pid {info.pid}, data {info.data_dir}, log {info.log_file})")
        return EXIT_OK
    if args.action == "stop":
        stopped = broker.stop(args.data_dir)
        err.print("broker stopped" if stopped else "no broker was running")
        return EXIT_OK
    info_or_none = broker.status(args.data_dir)
    if info_or_none is None:
        err.print("no broker running")
        return EXIT_ERRORS
    out.print(info_or_none.bootstrap)
    return EXIT_OK


def cmd_registry(args: argparse.Namespace) -> int:
    from connector.dev import schema_registry_server as registry

    if args.action == "start":
        err.print(f"[dim]Apicurio Registry {registry.VERSION} (built from Maven Central on first start)...[/dim]")
        info = registry.start(args.dir, port=args.port)
        out.print(info.url)
        err.print(f"schema registry running (pid {info.pid}, log {info.log_file})")
        return EXIT_OK
    found = registry.status(args.dir)
    if args.action == "stop":
        if found is not None:
            registry.stop(found)
        err.print("schema registry stopped" if found else "no schema registry was running")
        return EXIT_OK
    if found is None:
        err.print("no schema registry running")
        return EXIT_ERRORS
    out.print(found.url)
    return EXIT_OK


def cmd_dq_report(args: argparse.Namespace) -> int:
    from connector.quality.report import write_report

    try:
        path, batches = write_report(args.directory, args.output)
    except FileNotFoundError as error:
        err.print(f"dq-report: {error}", markup=False)
        return EXIT_ERRORS
    err.print(f"wrote {path} ({batches} micro-batch(es))", markup=False)
    return EXIT_OK


def cmd_produce(args: argparse.Namespace) -> int:
    from connector.connectors.kafka.java_properties import client_properties
    from connector.dev.produce import ProduceError, produce_file

    try:
        count = produce_file(
            args.bootstrap, args.topic, args.file, partitions=args.partitions, key_field=args.key_field,
            recreate=args.recreate, properties=client_properties(args.client_config, args.property),
        )
    except (ProduceError, ValueError) as error:
        err.print(f"produce: {error}", markup=False)
        return EXIT_ERRORS
    err.print(f"produced {count} record(s) to '{args.topic}'")
    return EXIT_OK


def cmd_nexmark(args: argparse.Namespace) -> int:
    """Nexmark's events (its generator's rules, deterministic from --seed) into a topic, as ddl_kafka.sql reads."""
    from connector.dev.nexmark import NexmarkConfig, produce
    from connector.dev.produce import ProduceError, ensure_topic

    try:
        config = NexmarkConfig(seed=args.seed, first_event_rate=args.rate, base_time_ms=args.base_time)
        ensure_topic(args.bootstrap, args.topic, args.partitions, args.recreate)
        count = produce(
            args.bootstrap, args.topic, args.events, config, partitions=args.partitions,
            on_progress=lambda n: err.print(f"{n:,} / {args.events:,} event(s)"),
        )
    except (ProduceError, ValueError) as error:
        err.print(f"nexmark: {error}", markup=False)
        return EXIT_ERRORS
    err.print(f"produced {count} Nexmark event(s) to '{args.topic}'")
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kafka-sql",
        description="Run Flink-SQL pipeline files over Kafka on Apache Spark, with Flink's offset semantics.",
        epilog="Run 'kafka-sql VERB --help' for the options of a verb.",
    )
    parser.add_argument("--version", action="version", version=f"kafka-sql {__version__}")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")

    p = verbs.add_parser(
        "validate",
        help="check files without Spark or a broker",
        description="Render, parse and validate pipeline files: syntax, options, columns, types. "
        "Needs neither Spark nor Kafka. Exit code 1 when any file has an error.",
    )
    p.add_argument("files", nargs="+", type=Path, metavar="FILE")
    p.add_argument(
        "--format",
        choices=["text", "json"],
        default="text",
        help="json prints {diagnostics: [{file, line, column, severity, code, message}, ...], total, omitted}: "
        f"at most {SHOWN_PER_FILE} diagnostics per file, total counts them all, omitted the ones left out per file",
    )
    _template_args(p)
    p.set_defaults(func=cmd_validate)

    p = verbs.add_parser(
        "render",
        help="print the SQL after Jinja templating",
        description="Print the file after Jinja rendering; secret option values are masked.",
    )
    p.add_argument("file", type=Path, metavar="FILE")
    p.add_argument("--show-secrets", action="store_true", help="do not mask secret option values")
    _template_args(p)
    p.set_defaults(func=cmd_render)

    p = verbs.add_parser(
        "explain",
        help="show the catalog and the Spark plan of each INSERT",
        description="Show tables, views and settings, and per INSERT: its sources with their resolved start "
        "and stop behaviour, its sink, and the Spark SQL it runs. Secrets are masked.",
    )
    p.add_argument("file", type=Path, metavar="FILE")
    p.add_argument("--format", choices=["text", "json"], default="text")
    _template_args(p)
    p.set_defaults(func=cmd_explain)

    p = verbs.add_parser(
        "run",
        help="run a pipeline on Spark",
        description="Compile every INSERT (and statement set) into Spark Structured Streaming queries and run "
        "them until Ctrl-C, or until every bounded source is finished. Ctrl-C stops cleanly: the current "
        "micro-batch completes and its offsets are committed.",
    )
    p.add_argument("file", type=Path, metavar="FILE")
    p.add_argument("--master", default="local[*]", help="Spark master URL (default local[*]; e.g. spark://host:7077)")
    p.add_argument(
        "--checkpoint-dir",
        type=Path,
        default=Path("checkpoints"),
        help="root of the checkpoint locations; one per INSERT, stable across runs (default ./checkpoints)",
    )
    p.add_argument("--max-batches", type=int, default=None, help="stop after this many micro-batches per query")
    p.add_argument("--timeout", type=float, default=None, help="stop cleanly after this many seconds")
    _template_args(p)
    p.set_defaults(func=cmd_run)

    p = verbs.add_parser(
        "broker",
        help="start, stop or inspect the embedded Kafka broker",
        description="A single-node KRaft Apache Kafka broker for development; jars come from "
        "Maven Central through mvn and are cached.",
    )
    p.add_argument("action", choices=["start", "stop", "status"])
    p.add_argument("--data-dir", type=Path, default=None, help="broker data directory (default ./.kafka-sql/broker)")
    p.add_argument("--port", type=int, default=9092, help="client port for start (default 9092; 0 = any free port)")
    p.set_defaults(func=cmd_broker)

    p = verbs.add_parser(
        "registry",
        help="start, stop or inspect a Confluent-compatible schema registry",
        description="Apicurio Registry's Confluent API on loopback, in memory, for the avro-confluent format in "
        "development and tests; built from Maven Central through mvn on first start and cached. start prints the "
        "URL to give 'avro-confluent.url'.",
    )
    p.add_argument("action", choices=["start", "stop", "status"])
    p.add_argument("--dir", type=Path, default=None, help="its log and state (default ./.kafka-sql/registry)")
    p.add_argument("--port", type=int, default=0, help="HTTP port for start (default: any free port)")
    p.set_defaults(func=cmd_registry)

    p = verbs.add_parser(
        "produce",
        help="produce JSON lines from a file to a topic",
        description="Produce each line of FILE (JSON) as one record; creates the topic if missing.",
    )
    p.add_argument("topic")
    p.add_argument("file", type=Path, metavar="FILE")
    p.add_argument("--bootstrap", default="127.0.0.1:9092", help="bootstrap servers (default 127.0.0.1:9092)")
    p.add_argument("--partitions", type=int, default=1, help="partitions when creating the topic")
    p.add_argument("--key-field", default=None, help="use this JSON field's value as the record key")
    p.add_argument("--recreate", action="store_true", help="delete and recreate the topic first")
    p.add_argument(
        "--client-config", type=Path, default=None, metavar="FILE",
        help="Kafka client properties file, Java names as in 'properties.*' (security.protocol, sasl.jaas.config, "
        "ssl.truststore.location, ...), as Kafka's tools take with --command-config",
    )
    p.add_argument(
        "--property", action="append", default=[], metavar="KEY=VALUE",
        help="a Kafka client property (repeatable; wins over --client-config)",
    )
    p.set_defaults(func=cmd_produce)

    p = verbs.add_parser(
        "nexmark",
        help="produce Nexmark benchmark events to a topic",
        description="Write N events of the Nexmark benchmark's generator (persons, auctions and bids in its "
        "proportions, hot ids, event times at --rate events per second from --base-time) as the JSON that "
        "Nexmark's ddl_kafka.sql table reads, round-robin over the partitions; creates the topic if missing. "
        "The same --seed gives the same events.",
    )
    p.add_argument("topic")
    p.add_argument("--events", type=int, default=1_000_000, help="how many events (default 1000000)")
    p.add_argument("--seed", type=int, default=0, help="the generator's seed (default 0)")
    p.add_argument("--rate", type=int, default=10_000, help="events per second of event time (default 10000)")
    p.add_argument(
        "--base-time", type=int, default=1_700_000_000_000, help="epoch ms of the first event (default 1700000000000)"
    )
    p.add_argument("--bootstrap", default="127.0.0.1:9092", help="bootstrap servers (default 127.0.0.1:9092)")
    p.add_argument("--partitions", type=int, default=1, help="partitions when creating the topic (default 1)")
    p.add_argument("--recreate", action="store_true", help="delete and recreate the topic first")
    p.set_defaults(func=cmd_nexmark)

    p = verbs.add_parser(
        "dq-report",
        help="render the data-quality gate's results as an HTML page",
        description="Read the per-batch data-quality results (batch-*.json) under DIR, a results directory "
        "('quality.results.path') or a checkpoint root, and write one static HTML report.",
    )
    p.add_argument("directory", type=Path, metavar="DIR")
    p.add_argument("--output", type=Path, default=None, help="the HTML file (default DIR/quality-report.html)")
    p.set_defaults(func=cmd_dq_report)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code: int = args.func(args)
        return code
    except PipelineError as error:
        _print_diagnostics(error.diagnostics, getattr(args, "format", "text"))
        return EXIT_ERRORS
    except KeyboardInterrupt:
        err.print("interrupted")
        return 130
    except Exception as error:
        from connector.dev.broker import BrokerError
        from connector.sql.dialect.script import CompiledSqlglotError

        if isinstance(error, BrokerError):
            err.print(f"broker: {error}", markup=False)
            return EXIT_ERRORS
        if isinstance(error, CompiledSqlglotError):
            _print_setup_error(error, getattr(args, "format", "text"))
            return EXIT_ERRORS
        if isinstance(error, KafkaSqlError) and not os.environ.get("KAFKA_SQL_DEBUG"):
            # raised on purpose, its message says what happened: an error, not a bug
            _print_setup_error(error, getattr(args, "format", "text"))
            return EXIT_ERRORS
        if os.environ.get("KAFKA_SQL_DEBUG"):
            raise
        _print_internal_error(error, getattr(args, "format", "text"))
        return EXIT_ERRORS


if __name__ == "__main__":
    sys.exit(main())
