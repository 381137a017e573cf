"""The `kafka-sql` command line as a user runs it: template errors, output formats, render, and no Python
traceback for any mistake a user can make with a file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

from connector.entrypoints.cli import main

REPO = Path(__file__).resolve().parents[2]
MARK = "‸"
PRINT_SINK = "CREATE TABLE output (id BIGINT, amount DOUBLE) WITH ('connector' = 'print');\n"


class Result(NamedTuple):
    code: int
    out: str
    err: str


def run(capsys: pytest.CaptureFixture[str], *args: str) -> Result:
    code = main(list(args))
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    return Result(code, captured.out, captured.err)


def write_marked(path: Path, text: str) -> tuple[int, int]:
    """Writes `text` without its MARK; returns the 1-based line and column where the MARK was."""
    offset = text.index(MARK)
    path.write_text(text.replace(MARK, "", 1), encoding="utf-8")
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1


# -- template errors ---------------------------------------------------------------------------------------

IMPORT = "{% import 'kafka.sql' as kafka %}\n{% set unused = 1 %}\n"

TEMPLATE_ERRORS = [
    pytest.param(
        IMPORT
        + "CREATE TABLE output (id BIGINT) WITH ('connector' = 'print', "
        + f"'print-identifier' = '{{{{ {MARK}prefx }}}}');\n",
        "undefined",
        ("'prefx' is undefined", "var('NAME')"),
        id="undefined-name",
    ),
    pytest.param(
        IMPORT
        + "CREATE TABLE output (id BIGINT) WITH (\n"
        + f"  'connector' = 'print', 'print-identifier' = '{{{{ var({MARK}'prefix') }}}}');\n",
        "missing-var",
        ("Variable 'prefix' is not defined", "Did you mean 'prefiks'?", "Defined variables: brokers, prefiks."),
        id="missing-var",
    ),
    pytest.param(
        IMPORT
        + "CREATE TABLE output (id BIGINT) WITH ('connector' = 'print',\n"
        + f"  'print-identifier' = '{{{{ env_var({MARK}'KAFKA_SQL_TEST_UNSET') }}}}');\n",
        "missing-env-var",
        ("Environment variable 'KAFKA_SQL_TEST_UNSET' is not set", "env_var('KAFKA_SQL_TEST_UNSET', 'VALUE')"),
        id="missing-env-var",
    ),
    pytest.param(
        IMPORT + PRINT_SINK + "{% for n in [1, 2] %}\nINSERT INTO output SELECT n, 1.0;\n{% " + MARK + "endfo %}\n",
        "template-syntax",
        ("unknown tag 'endfo'", "'endfor'"),
        id="template-syntax",
    ),
    pytest.param(
        "-- shared macros\n" + IMPORT + "{% from " + MARK + "'my_macros.sql' import kafka_topic %}\n",
        "template-not-found",
        ("Template 'my_macros.sql' not found", "Macro files available: common.sql, kafka.sql."),
        id="missing-macro-file",
    ),
    pytest.param(
        IMPORT + "{{ kafka." + MARK + "kafka_sourc('orders', 'orders', {'id': 'BIGINT'}) }};\n",
        "undefined",
        ("No macro 'kafka_sourc'", "Did you mean 'kafka_source'?"),
        id="unknown-macro",
    ),
]


@pytest.mark.parametrize(("text", "code", "fragments"), TEMPLATE_ERRORS)
def test_template_error(
    text: str,
    code: str,
    fragments: tuple[str, ...],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("KAFKA_SQL_TEST_UNSET", raising=False)
    path = tmp_path / "pipeline.sql"
    line, column = write_marked(path, text)

    result = run(capsys, "validate", str(path), "--format", "json", "--var", "brokers=b:9092", "--var", "prefiks=x")

    assert result.code == 1
    [diagnostic] = json.loads(result.out)["diagnostics"]
    assert (diagnostic["file"], diagnostic["line"], diagnostic["column"]) == (str(path), line, column)
    assert (diagnostic["severity"], diagnostic["code"]) == ("error", code)
    for fragment in fragments:
        assert fragment in diagnostic["message"]


def test_error_in_sql_a_macro_generated_points_at_the_macro_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "pipeline.sql"
    line, column = write_marked(
        path,
        IMPORT
        + "-- the source\n"
        + MARK
        + "{{ kafka.kafka_source('orders', 'orders', {'id': 'BIGINT', 'amount': 'DOUBLE'}, group_id='etl',\n"
        + "                      extra={'scan.startup.mod': 'earliest-offset'}) }};\n"
        + PRINT_SINK
        + "INSERT INTO output SELECT id, amount FROM orders;\n",
    )

    result = run(capsys, "validate", str(path), "--var", "brokers=b:9092")

    assert result.code == 1
    assert f"{path}:{line}:{column}: error [unknown-option] Unsupported option 'scan.startup.mod'" in result.err


def test_macro_rejecting_its_arguments_points_into_the_macro_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "pipeline.sql"
    path.write_text(
        IMPORT + "{{ kafka.kafka_source('orders', 'orders', {'id': 'BIGINT'}, startup_mode='earliest') }};\n",
        encoding="utf-8",
    )

    result = run(capsys, "validate", str(path), "--format", "json", "--var", "brokers=b:9092")

    assert result.code == 1
    [diagnostic] = json.loads(result.out)["diagnostics"]
    assert diagnostic["file"].endswith("kafka.sql")
    assert diagnostic["code"] == "template"
    assert "startup_mode 'earliest' is not one of earliest-offset" in diagnostic["message"]
    assert f"(reached from {path}:3)" in diagnostic["message"]


def test_vars_file_and_var_arguments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "pipeline.sql"
    path.write_text(
        "CREATE TABLE output (id BIGINT) WITH ('connector' = 'print', 'print-identifier' = '{{ var('who') }}');\n",
        encoding="utf-8",
    )
    vars_file = tmp_path / "dev.env"
    vars_file.write_text("# dev settings\nwho=from-file\n", encoding="utf-8")

    assert "'print-identifier' = 'from-file'" in run(capsys, "render", str(path), "--vars-file", str(vars_file)).out
    from_args = run(capsys, "render", str(path), "--vars-file", str(vars_file), "--var", "who=from-args")
    assert "'print-identifier' = 'from-args'" in from_args.out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--var", "brokers"], "expected KEY=VALUE"),
        (["--vars-file", "missing.env"], "Cannot read vars file"),
    ],
)
def test_bad_variables_are_reported_not_raised(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("pipeline.sql").write_text(PRINT_SINK, encoding="utf-8")
    for verb in ("validate", "render", "explain"):
        result = run(capsys, verb, "pipeline.sql", *args)
        assert result.code == 1
        assert message in result.err


# -- output formats ----------------------------------------------------------------------------------------


def test_json_format_lists_the_diagnostics(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.sql"
    bad.write_text(
        "CREATE TABLE output (id BIGINT) WITH ('connector' = 'print');\nSELEC 1;\nINSERT INTO output SELECT 1 FROM;\n"
    )
    good = tmp_path / "good.sql"
    good.write_text(PRINT_SINK, encoding="utf-8")

    result = run(capsys, "validate", str(good), str(bad), "--format", "json")

    assert result.code == 1
    assert result.err == ""
    document = json.loads(result.out)
    assert (document["total"], document["omitted"]) == (2, {})
    diagnostics = document["diagnostics"]
    assert [(d["line"], d["code"]) for d in diagnostics] == [(2, "syntax"), (3, "syntax")]
    for d in diagnostics:
        assert set(d) == {"file", "line", "column", "severity", "code", "message"}
        assert (d["file"], d["severity"]) == (str(bad), "error")


def test_json_format_of_a_valid_file_lists_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "good.sql"
    path.write_text(PRINT_SINK, encoding="utf-8")

    result = run(capsys, "validate", str(path), "--format", "json")

    assert (result.code, json.loads(result.out), result.err) == (0, {"diagnostics": [], "total": 0, "omitted": {}}, "")


def test_a_file_repeating_one_mistake_lists_the_first_hundred(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A generated file can repeat one bad statement thousands of times; the listing shows the first 100 per
    file and counts the rest, in text and in JSON."""
    bad = tmp_path / "bad.sql"
    bad.write_text("SELEC 1;\n" * 10_000, encoding="utf-8")
    other = tmp_path / "other.sql"
    other.write_text("SELEC 1;\n" * 3, encoding="utf-8")

    text = run(capsys, "validate", str(bad), str(other))
    as_json = run(capsys, "validate", str(bad), str(other), "--format", "json")

    assert text.code == as_json.code == 1
    lines = text.err.splitlines()
    assert len([line for line in lines if line.startswith(f"{bad}:")]) == 100
    assert lines[99].startswith(f"{bad}:100:1: error [syntax]")
    assert len([line for line in lines if line.startswith(f"{other}:")]) == 3
    assert f"... and 9900 more in {bad}" in lines
    assert "10003 error(s) in 2 file(s)." in text.err
    document = json.loads(as_json.out)
    assert (document["total"], document["omitted"]) == (10_003, {str(bad): 9_900})
    assert [d["line"] for d in document["diagnostics"]] == [*range(1, 101), 1, 2, 3]


def test_an_internal_error_in_json_format_is_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug still answers a `--format json` caller in JSON, naming the error, with a failing exit code."""
    from connector.sql import frontend

    def broken(*_: object, **__: object) -> None:
        raise ValueError("something unexpected")

    monkeypatch.delenv("KAFKA_SQL_DEBUG", raising=False)
    monkeypatch.setattr(frontend, "compile_file", broken)
    path = tmp_path / "good.sql"
    path.write_text(PRINT_SINK, encoding="utf-8")

    for verb in ("validate", "explain"):
        result = run(capsys, verb, str(path), "--format", "json")

        assert result.code == 1
        error = json.loads(result.out)["error"]
        assert (error["kind"], error["message"]) == ("ValueError", "something unexpected")
        assert "This is a bug in kafka-sql" in error["hint"]
    text = run(capsys, "validate", str(path))
    assert text.code == 1
    assert "internal error: ValueError: something unexpected" in text.err


def test_text_format_prints_sql_as_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Messages and explain quote the user's SQL: rich markup ([bold]) and emoji codes (:fire:) in it are printed
    as written."""
    path = tmp_path / "pipeline.sql"
    path.write_text("CREATE TABLE output (id BIGINT) WITH ('connector' = 'print', ':fire: [bold]x' = 'y');\n")
    assert (
        f"{path}:1:62: error [unknown-option] Unsupported option ':fire: [bold]x'"
        in run(capsys, "validate", str(path)).err
    )

    path.write_text(
        "CREATE TABLE output (id BIGINT) WITH ('connector' = 'print', 'print-identifier' = ':fire: [b]x\\');\n"
    )
    assert "'print-identifier' = ':fire: [b]x\\'" in run(capsys, "explain", str(path)).out


def test_explain_of_an_invalid_file_prints_its_diagnostics(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "pipeline.sql"
    path.write_text("CREATE TABLE output (id BIGINT) WITH ('connector' = 'prnt');\n", encoding="utf-8")

    text = run(capsys, "explain", str(path))
    as_json = run(capsys, "explain", str(path), "--format", "json")

    assert text.code == as_json.code == 1
    assert "error [unknown-connector] Unknown connector 'prnt'. Did you mean 'print'?" in text.err
    [diagnostic] = json.loads(as_json.out)["diagnostics"]
    assert diagnostic["code"] == "unknown-connector"


def test_validate_reports_plan_warnings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "pipeline.sql"
    path.write_text("SET 'table.exec.mini-batch.enabled' = 'true';\n" + PRINT_SINK, encoding="utf-8")

    result = run(capsys, "validate", str(path), "--format", "json")

    assert result.code == 0
    [warning] = json.loads(result.out)["diagnostics"]
    assert (warning["line"], warning["severity"], warning["code"]) == (1, "warning", "ignored-setting")


def test_validate_reports_what_spark_cannot_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`validate` plans the queries too, so a file it accepts is one `run` accepts."""
    path = tmp_path / "pipeline.sql"
    path.write_text(
        "CREATE TABLE gen (id BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH ('connector' = 'datagen');\n"
        "CREATE TABLE output (window_start TIMESTAMP(3), n BIGINT) WITH ('connector' = 'print');\n"
        "INSERT INTO output SELECT window_start, COUNT(*) AS n\n"
        "FROM TABLE(TUMBLE(TABLE gen, DESCRIPTOR(ts), INTERVAL '0' MINUTE)) GROUP BY window_start, window_end;\n",
        encoding="utf-8",
    )

    result = run(capsys, "validate", str(path), "--format", "json")

    assert result.code == 1
    [error] = json.loads(result.out)["diagnostics"]
    assert (error["line"], error["code"]) == (3, "unsupported")
    assert "Window durations must be positive" in error["message"]


# -- files that are not pipelines ----------------------------------------------------------------------------


@pytest.mark.parametrize("verb", ["validate", "render", "explain"])
@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("missing.sql", None, "No such file or directory"),
        ("directory.sql", "<dir>", "Is a directory"),
        ("binary.sql", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "can't decode"),
    ],
    ids=["missing", "directory", "binary"],
)
def test_unreadable_file(
    verb: str,
    name: str,
    content: bytes | str | None,
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / name
    if content == "<dir>":
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)

    result = run(capsys, verb, str(path))

    assert result.code == 1
    assert f"{path}:1:1: error [io] Cannot read {path}" in result.err
    assert message in result.err


@pytest.mark.parametrize(
    "content",
    ["", "\n\n", "-- only a comment\n/* and a\n   block comment */\n", "\x00\x01\x02 NUL bytes\n"],
    ids=["empty", "blank", "comments", "nul-bytes"],
)
@pytest.mark.parametrize("verb", ["validate", "render", "explain"])
def test_file_without_statements_never_crashes(
    verb: str, content: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "pipeline.sql"
    path.write_text(content, encoding="utf-8")

    result = run(capsys, verb, str(path))

    if "\x00" in content and verb != "render":
        assert result.code == 1
        assert "error [syntax]" in result.err
    else:
        assert result.code == 0


def test_command_line_mistakes_are_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["validate"])
    assert exit_info.value.code == 2
    with pytest.raises(SystemExit) as exit_info:
        main(["explain", "x.sql", "--format", "yaml"])
    assert exit_info.value.code == 2
    assert "invalid choice: 'yaml'" in capsys.readouterr().err


# -- render ---------------------------------------------------------------------------------------------------

SECRET_TABLE = """CREATE TABLE orders (id BIGINT, amount DOUBLE) WITH (
  'connector' = 'kafka', 'topic' = 'orders', 'format' = 'json',
  'properties.bootstrap.servers' = 'b:9092', 'properties.group.id' = 'etl',
  'properties.security.protocol' = 'SASL_SSL', 'properties.sasl.mechanism' = 'PLAIN',
  'properties.sasl.jaas.config' =
    'org.apache.kafka.common.security.plain.PlainLoginModule required username="etl" password="hunter2-sasl";',
  'properties.ssl.key.password' = '{{ env_var('SSL_KEY_PASSWORD') }}'
);
CREATE TABLE output (id BIGINT, amount DOUBLE) WITH ('connector' = 'print');
INSERT INTO output SELECT id, amount FROM orders /*+ OPTIONS('properties.ssl.key.password' = 'hint-secret-3') */;
"""
SECRETS = ("hunter2-sasl", "ssl-key-secret-2", "hint-secret-3")


@pytest.mark.parametrize(
    "args", [["render"], ["explain"], ["explain", "--format", "json"], ["validate", "--format", "json"]]
)
def test_secrets_are_masked(
    args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SSL_KEY_PASSWORD", "ssl-key-secret-2")
    path = tmp_path / "secure.sql"
    path.write_text(SECRET_TABLE, encoding="utf-8")

    result = run(capsys, args[0], str(path), *args[1:])

    assert result.code == 0
    for secret in SECRETS:
        assert secret not in result.out + result.err
    if args[0] != "validate":
        # The JAAS login module and user stay readable, only the password is masked.
        jaas = 'PlainLoginModule required username="etl" password="******";'
        if "json" in args:
            assert json.loads(result.out)["tables"][0]["options"]["properties.sasl.jaas.config"].endswith(jaas)
        else:
            assert jaas in result.out


def test_render_show_secrets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SSL_KEY_PASSWORD", "ssl-key-secret-2")
    path = tmp_path / "secure.sql"
    path.write_text(SECRET_TABLE, encoding="utf-8")

    result = run(capsys, "render", str(path), "--show-secrets")

    assert "'properties.ssl.key.password' = 'ssl-key-secret-2'" in result.out


def test_render_prints_the_sql_after_templating(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "pipeline.sql"
    path.write_text(
        "{% import 'kafka.sql' as kafka %}\n{{ kafka.kafka_sink('totals', 'totals', {'id': 'BIGINT'}) }};\n",
        encoding="utf-8",
    )

    result = run(capsys, "render", str(path), "--var", "brokers=b:9092")

    assert result.code == 0
    assert result.out.startswith("CREATE TABLE totals (\n  id BIGINT\n) WITH (\n  'connector' = 'kafka',")
    assert "'properties.bootstrap.servers' = 'b:9092'" in result.out


# -- the installed command -----------------------------------------------------------------------------------


def kafka_sql(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "connector.entrypoints.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_subprocess_validate_reports_an_error(tmp_path: Path) -> None:
    (tmp_path / "pipeline.sql").write_text("CREATE TABLE output (id BIGINT) WITH ('connector' = 'print');\nSELEC 1;\n")

    done = kafka_sql("validate", "pipeline.sql", cwd=tmp_path)

    assert done.returncode == 1
    assert "Traceback" not in done.stdout + done.stderr
    assert "pipeline.sql:2:1: error [syntax] Unexpected 'SELEC'" in done.stderr


def test_subprocess_explain_json(tmp_path: Path) -> None:
    done = kafka_sql("explain", str(REPO / "sql/examples/quickstart.sql"), "--format", "json", cwd=tmp_path)

    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    assert [q["query"] for q in plan["queries"]] == ["quickstart.refunds", "quickstart.revenue_per_minute"]


@pytest.mark.parametrize(
    ("verb", "expected"),
    [
        ("validate", ["--format", "--var", "--vars-file"]),
        ("render", ["--show-secrets", "--var"]),
        ("explain", ["--format", "--var"]),
        ("run", ["--master", "--checkpoint-dir", "--var", "--timeout"]),
        ("broker", ["start", "stop", "status", "--data-dir", "--port"]),
        ("produce", ["--bootstrap", "--partitions", "--key-field"]),
        ("dq-report", ["--output", "DIR"]),
    ],
)
def test_every_verb_has_help(verb: str, expected: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([verb, "--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    assert f"kafka-sql {verb}" in text
    for option in expected:
        assert option in text


@pytest.mark.slow
def test_sqlglots_compiled_build_is_reported_as_a_setup_error(tmp_path: Path) -> None:
    """`pip install sqlglot[c]` adds sqlglot's compiled build, which refuses the Flink dialect's parser: the user is
    told what to remove, not shown an internal error."""
    import importlib.metadata

    version = importlib.metadata.version("sqlglot")
    target = tmp_path / "compiled"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), f"sqlglot=={version}",
         f"sqlglotc=={version}"],
        check=True, capture_output=True, timeout=600,
    )  # fmt: skip
    pipeline = tmp_path / "p.sql"
    pipeline.write_text(PRINT_SINK)
    done = subprocess.run(
        [sys.executable, "-m", "connector.entrypoints.cli", "validate", str(pipeline)],
        env={**os.environ, "PYTHONPATH": str(target)}, capture_output=True, text=True, timeout=120, cwd=REPO,
    )  # fmt: skip
    assert done.returncode == 1
    assert done.stderr.startswith("error: sqlglot's compiled build (the 'sqlglotc' package"), done.stderr
    assert "pip uninstall sqlglotc" in done.stderr and "internal error" not in done.stderr
