"""Jinja templating of pipeline files: rendering, macros, variables, errors, original positions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sqlglot
from sqlglot.errors import ParseError

import connector.sql.dialect.flink  # noqa: F401  (registers read="flink")
from connector.diagnostics import Diagnostic, PipelineError
from connector.sql.template.templating import BUNDLED_TEMPLATES, RenderedFile, render, render_string
from connector.sql.template.variables import load_vars_file, parse_var_args

VARS = {"brokers": "localhost:9092", "topic": "orders"}


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def render_file(
    tmp_path: Path, text: str, variables: dict[str, str] = VARS, **kwargs: object
) -> RenderedFile:
    return render(write(tmp_path / "pipeline.sql", text), variables, env={}, **kwargs)  # type: ignore[arg-type]


def error_of(tmp_path: Path, text: str, variables: dict[str, str] = VARS, **kwargs: object) -> Diagnostic:
    with pytest.raises(PipelineError) as info:
        render_file(tmp_path, text, variables, **kwargs)
    [diagnostic] = info.value.diagnostics
    return diagnostic


def position_of(text: str, needle: str, occurrence: int = 1) -> tuple[int, int]:
    """1-based line and column of the `occurrence`-th `needle` in `text`."""
    offset = -1
    for _ in range(occurrence):
        offset = text.index(needle, offset + 1)
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def maps(rendered: RenderedFile, needle: str, expected: str | tuple[int, int], occurrence: int = 1) -> None:
    """`needle` in the rendered text maps to `expected` (a position, or the same text in the source)."""
    at = position_of(rendered.text, needle, occurrence)
    want = position_of(rendered.source, expected) if isinstance(expected, str) else expected
    assert rendered.original_position(*at) == want, (needle, at)


# --- rendering ---------------------------------------------------------------------------------------


def test_file_without_template_code_renders_unchanged_and_maps_one_to_one(tmp_path: Path) -> None:
    text = "-- orders\nSELECT a,\n       b\nFROM t;\n"
    rendered = render_file(tmp_path, text)
    assert rendered.text == text
    assert rendered.file == str(tmp_path / "pipeline.sql")
    for line, content in enumerate(text.split("\n"), 1):
        for column in range(1, len(content) + 2):
            assert rendered.original_position(line, column) == (line, column)


def test_var_and_env_var_are_substituted(tmp_path: Path) -> None:
    rendered = render(
        write(
            tmp_path / "p.sql",
            "'{{ var('brokers') }}' '{{ var('missing', 'dflt') }}' '{{ env_var('HOME_X') }}'",
        ),
        VARS,
        env={"HOME_X": "/home/x"},
    )
    assert rendered.text == "'localhost:9092' 'dflt' '/home/x'"


def test_env_var_reads_the_process_environment_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KSQL_TEST_GROUP", "billing")
    rendered = render(write(tmp_path / "p.sql", "{{ env_var('KSQL_TEST_GROUP') }}"), {})
    assert rendered.text == "billing"


def test_sql_string_filter_escapes_quotes(tmp_path: Path) -> None:
    rendered = render_file(tmp_path, "SELECT {{ var('name') | sql_string }};", {"name": "it's"})
    assert rendered.text == "SELECT 'it''s';"


def test_block_tags_on_their_own_lines_leave_no_blank_lines(tmp_path: Path) -> None:
    text = "a\n{% if var('x', '') %}\nb\n{% endif %}\n{% for i in [1, 2] %}\nc{{ i }}\n{% endfor %}\nd\n"
    assert render_file(tmp_path, text).text == "a\nc1\nc2\nd\n"


def test_secret_values_from_secret_named_variables_are_reported(tmp_path: Path) -> None:
    rendered = render(
        write(
            tmp_path / "p.sql", "{{ var('sasl_password') }} {{ env_var('KAFKA_API_KEY') }} {{ var('topic') }}"
        ),
        {"sasl_password": "pw-1", "topic": "orders"},
        env={"KAFKA_API_KEY": "key-2"},
    )
    assert rendered.secrets == {"pw-1", "key-2"}


def test_render_string_resolves_imports_next_to_the_named_file(tmp_path: Path) -> None:
    write(tmp_path / "helpers.sql", "{% macro hello() %}hi{% endmacro %}")
    rendered = render_string(
        "{% from 'helpers.sql' import hello %}{{ hello() }}", str(tmp_path / "x.sql"), {}, env={}
    )
    assert rendered.text == "hi"


# --- position mapping --------------------------------------------------------------------------------


def test_columns_after_a_var_expansion_shift_and_inside_it_map_to_the_expression(tmp_path: Path) -> None:
    text = "SELECT {{ var('cols') }} FRM t WHERE {{ var('cond') }} AND y;\n"
    rendered = render_file(tmp_path, text, {"cols": "a, bb, ccc", "cond": "x > 1"})
    assert rendered.text == "SELECT a, bb, ccc FRM t WHERE x > 1 AND y;\n"
    maps(rendered, "FRM", "FRM")  # the expansion is longer than the expression
    maps(rendered, "AND y", "AND y")
    maps(rendered, "bb", "{{ var('cols')")  # inside the expansion: the expression's start
    maps(rendered, "> 1", "{{ var('cond')")


def test_shorter_expansion_shifts_columns_left(tmp_path: Path) -> None:
    rendered = render_file(
        tmp_path, "SELECT {{ var('a_long_variable_name') }} + oops FROM t", {"a_long_variable_name": "1"}
    )
    assert rendered.text == "SELECT 1 + oops FROM t"
    maps(rendered, "oops", "oops")


def test_macro_expanding_to_many_lines_maps_every_line_to_the_call(tmp_path: Path) -> None:
    text = (
        "{% macro cols(n) %}\n"
        "a INT,\n"
        "  b INT,\n"
        "  c{{ n }} INT\n"
        "{%- endmacro %}\n"
        "CREATE TABLE t (\n"
        "  {{ cols(3) }}\n"
        ") WITH ('connector' = 'kafka')\n"
        "SELECT oops FROM t;\n"
    )
    rendered = render_file(tmp_path, text)
    assert rendered.text == (
        "CREATE TABLE t (\n  a INT,\n  b INT,\n  c3 INT\n"
        ") WITH ('connector' = 'kafka')\nSELECT oops FROM t;\n"
    )
    call = position_of(text, "{{ cols(3)")
    for needle in ("a INT", "b INT", "c3 INT"):
        maps(rendered, needle, call)
    maps(rendered, ") WITH", ") WITH")
    maps(rendered, "oops", "oops")  # the line after the expansion


def test_if_block_that_drops_lines_maps_later_lines_to_their_source(tmp_path: Path) -> None:
    text = (
        "SELECT a\n"
        "{% if var('with_b', '') %}\n"
        "     , b\n"
        "     , c\n"
        "{% else %}\n"
        "     , z\n"
        "{% endif %}\n"
        "FROM t WHER x;\n"
    )
    rendered = render_file(tmp_path, text)
    assert rendered.text == "SELECT a\n     , z\nFROM t WHER x;\n"
    maps(rendered, "z", "z")
    maps(rendered, "WHER", "WHER")


def test_for_loop_repeats_map_to_the_loop_body(tmp_path: Path) -> None:
    text = "SELECT\n{% for c in ['a', 'bbbb'] %}\n  {{ c }} AS x{{ loop.index }},\n{% endfor %}\n  1\n"
    rendered = render_file(tmp_path, text)
    assert rendered.text == "SELECT\n  a AS x1,\n  bbbb AS x2,\n  1\n"
    body = position_of(text, "  {{ c }}")[0]
    assert rendered.original_position(2, 5) == (body, 11)  # "AS" after a short value
    assert rendered.original_position(3, 8) == (body, 11)  # "AS" after a long value
    maps(rendered, "  1", "  1")


def test_call_and_include_output_maps_to_the_tag(tmp_path: Path) -> None:
    write(tmp_path / "part.sql", "x INT,\ny INT\n")
    text = (
        "{% macro wrap() %}\n"
        "({{ caller() }})\n"
        "{% endmacro %}\n"
        "{% call wrap() %}\n"
        "inner\n"
        "{% endcall %}\n"
        "{% include 'part.sql' %}\n"
        "done\n"
    )
    rendered = render_file(tmp_path, text)
    assert rendered.text == "(inner\n)\nx INT,\ny INT\ndone\n"
    maps(rendered, "inner", "{% call")
    maps(rendered, ")", "{% call")
    maps(rendered, "y INT", "{% include")
    maps(rendered, "done", "done")


def test_windows_newlines_keep_lines_apart(tmp_path: Path) -> None:
    rendered = render_string("SELECT {{ var('topic') }}\r\nFROM x\r\n", "p.sql", VARS, env={})
    assert rendered.text == "SELECT orders\nFROM x\n"
    assert rendered.original_position(2, 6) == (2, 6)


def test_sqlglot_parse_error_in_rendered_sql_maps_back_to_the_source_line(tmp_path: Path) -> None:
    text = (
        "{% import 'kafka.sql' as kafka %}\n"
        "{{ kafka.kafka_source('orders', var('topic'), {'id': 'BIGINT'}, group_id='g') }};\n"
        "\n"
        "SELECT id FROM orders WHERE id = = 1;\n"
    )
    rendered = render_file(tmp_path, text)
    with pytest.raises(ParseError) as info:
        sqlglot.parse(rendered.text, read="flink")
    error = info.value.errors[0]
    line, column = rendered.original_position(error["line"], error["col"])
    assert (line, column) == position_of(text, "= 1")


# --- macro search path and bundled templates ---------------------------------------------------------


def test_search_order_pipeline_dir_then_templates_dir_then_bundled_then_extra(tmp_path: Path) -> None:
    write(tmp_path / "templates" / "kafka.sql", "{% macro who() %}local templates/{% endmacro %}")
    write(tmp_path / "extra" / "more.sql", "{% macro who() %}extra{% endmacro %}")
    write(tmp_path / "extra" / "common.sql", "{% macro who() %}extra common{% endmacro %}")
    text = (
        "{% import 'kafka.sql' as k %}{% import 'more.sql' as m %}{% import 'common.sql' as c %}"
        "{{ k.who() }}|{{ m.who() }}|{{ c.metadata_columns(partition=none, offset=none) }}"
    )
    rendered = render_file(tmp_path, text, templates_dirs=[tmp_path / "extra"])
    assert (
        rendered.text
        == "local templates/|extra|event_time TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL"
    )
    write(tmp_path / "more.sql", "{% macro who() %}pipeline dir{% endmacro %}")
    rendered = render_file(tmp_path, text, templates_dirs=[tmp_path / "extra"])
    assert rendered.text.startswith("local templates/|pipeline dir|")


def test_bundled_templates_directory_is_the_repository_one() -> None:
    assert (BUNDLED_TEMPLATES / "kafka.sql").is_file()
    assert (BUNDLED_TEMPLATES / "common.sql").is_file()


def test_kafka_source_renders_flink_kafka_table(tmp_path: Path) -> None:
    text = (
        "{% import 'kafka.sql' as kafka %}\n"
        "{{ kafka.kafka_source('orders', ['orders-eu', 'orders-us'], {'id': 'BIGINT', 'amount': 'DOUBLE'},\n"
        "    group_id='billing', startup_mode='earliest-offset', metadata=true,\n"
        "    watermark=\"event_time AS event_time - INTERVAL '5' SECOND\",\n"
        "    extra={'json.ignore-parse-errors': 'true', 'format': 'csv'}) }};\n"
    )
    rendered = render_file(tmp_path, text)
    assert rendered.text == (
        "CREATE TABLE orders (\n"
        "  id BIGINT,\n"
        "  amount DOUBLE,\n"
        "  event_time TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL,\n"
        "  kafka_partition INT METADATA FROM 'partition' VIRTUAL,\n"
        "  kafka_offset BIGINT METADATA FROM 'offset' VIRTUAL,\n"
        "  WATERMARK FOR event_time AS event_time - INTERVAL '5' SECOND\n"
        ") WITH (\n"
        "  'connector' = 'kafka',\n"
        "  'topic' = 'orders-eu;orders-us',\n"
        "  'properties.bootstrap.servers' = 'localhost:9092',\n"
        "  'properties.group.id' = 'billing',\n"
        "  'scan.startup.mode' = 'earliest-offset',\n"
        "  'json.ignore-parse-errors' = 'true',\n"
        "  'format' = 'csv'\n"
        ");\n"
    )


def test_kafka_sink_and_metadata_columns_render(tmp_path: Path) -> None:
    text = (
        "{% import 'kafka.sql' as kafka %}\n"
        "{% from 'common.sql' import metadata_columns %}\n"
        "{{ kafka.kafka_sink('totals', 'totals', ['id BIGINT', 'total DOUBLE'], brokers='b:9092',\n"
        "    delivery_guarantee='exactly-once', transactional_id_prefix='totals-tx') }};\n"
        "CREATE TABLE raw (\n"
        "  v STRING,\n"
        "  {{ metadata_columns(topic='src_topic') }}\n"
        ") WITH ('connector' = 'kafka', 'topic' = 'raw', 'properties.bootstrap.servers' = 'b:9092',"
        " 'format' = 'raw');\n"
    )
    rendered = render_file(tmp_path, text, {})
    assert rendered.text == (
        "CREATE TABLE totals (\n"
        "  id BIGINT,\n"
        "  total DOUBLE\n"
        ") WITH (\n"
        "  'connector' = 'kafka',\n"
        "  'topic' = 'totals',\n"
        "  'properties.bootstrap.servers' = 'b:9092',\n"
        "  'format' = 'json',\n"
        "  'sink.delivery-guarantee' = 'exactly-once',\n"
        "  'sink.transactional-id-prefix' = 'totals-tx'\n"
        ");\n"
        "CREATE TABLE raw (\n"
        "  v STRING,\n"
        "  event_time TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL,\n"
        "  kafka_partition INT METADATA FROM 'partition' VIRTUAL,\n"
        "  kafka_offset BIGINT METADATA FROM 'offset' VIRTUAL,\n"
        "  src_topic STRING METADATA FROM 'topic' VIRTUAL\n"
        ") WITH ('connector' = 'kafka', 'topic' = 'raw', 'properties.bootstrap.servers' = 'b:9092',"
        " 'format' = 'raw');\n"
    )


def test_bundled_macros_render_sql_that_sqlglot_parses(tmp_path: Path) -> None:
    text = (
        "{% import 'kafka.sql' as kafka %}\n"
        "{{ kafka.kafka_source('orders', var('topic'), \"id BIGINT, note STRING\",\n"
        "    group_id='g', metadata=true,\n"
        "    watermark=\"event_time AS event_time - INTERVAL '1' SECOND\",\n"
        "    extra={'properties.sasl.jaas.config': 'x required password=\"it''s\";'}) }};\n"
        "{{ kafka.kafka_source('any', none, {'v': 'STRING'}, startup_mode='latest-offset', format='raw',\n"
        "    extra={'topic-pattern': 'orders-.*'}) }};\n"
        "{{ kafka.kafka_sink('out', 'out', {'id': 'BIGINT'}, delivery_guarantee='none') }};\n"
        "INSERT INTO output SELECT id FROM orders;\n"
    )
    sql = render_file(tmp_path, text).text
    assert len(sqlglot.tokenize(sql, read="spark")) > 50
    statements = [s for s in sqlglot.parse(sql, read="flink") if s is not None]
    assert [type(s).__name__ for s in statements] == ["Create", "Create", "Create", "Insert"]
    with_options = {p.name: p.text("value") for p in statements[1].find_all(sqlglot.exp.Property) if p.name}
    assert with_options["topic-pattern"] == "orders-.*"
    assert "topic" not in with_options


# --- errors ------------------------------------------------------------------------------------------


def test_missing_var_names_it_and_lists_defined_vars(tmp_path: Path) -> None:
    d = error_of(tmp_path, "SELECT 1;\nSELECT * FROM {{ var('topik') }};\n")
    assert (d.file, d.line, d.column, d.code) == (str(tmp_path / "pipeline.sql"), 2, 22, "missing-var")
    assert "'topik'" in d.message
    assert "Did you mean 'topic'?" in d.message
    assert "Defined variables: brokers, topic." in d.message


def test_missing_env_var_names_it(tmp_path: Path) -> None:
    d = error_of(tmp_path, "-- x\n\n  '{{ env_var('KAFKA_SECRET_X') }}'\n")
    assert (d.line, d.column, d.code) == (3, 15, "missing-env-var")
    assert "'KAFKA_SECRET_X'" in d.message


def test_error_in_a_multi_line_expression_points_at_the_culprit_line(tmp_path: Path) -> None:
    text = (
        "{% import 'kafka.sql' as kafka %}\n"
        "{{ kafka.kafka_source('t', 't', 'a INT', group_id='g',\n"
        "      extra={'properties.sasl.password': env_var('KAFKA_PASSWORD')}) }}\n"
    )
    d = error_of(tmp_path, text)
    assert (d.line, d.column, d.code) == (*position_of(text, "'KAFKA_PASSWORD'"), "missing-env-var")


def test_undefined_name_suggests_var(tmp_path: Path) -> None:
    d = error_of(tmp_path, "SELECT 1\n  FROM {{ topic }}\n")
    assert (d.line, d.column, d.code) == (2, 11, "undefined")
    assert "'topic' is undefined" in d.message
    assert "var('topic')" in d.message


def test_syntax_error_points_at_the_tag(tmp_path: Path) -> None:
    d = error_of(tmp_path, "SELECT 1;\n\nSELECT {% frobnicate %} FROM t;\n")
    assert (d.line, d.column, d.code) == (3, 11, "template-syntax")
    assert "unknown tag 'frobnicate'" in d.message


def test_lexer_error_points_at_the_character(tmp_path: Path) -> None:
    d = error_of(tmp_path, "SELECT 1;\nSELECT {{ 1 ! 2 }};\n")
    assert (d.line, d.column, d.code) == (2, 13, "template-syntax")
    assert "'!'" in d.message


def test_unclosed_block_is_a_syntax_error(tmp_path: Path) -> None:
    d = error_of(tmp_path, "SELECT 1\n{% if true %}\nFROM t\n")
    assert d.code == "template-syntax"
    assert "endif" in d.message


def test_missing_import_lists_search_dirs_and_available_files(tmp_path: Path) -> None:
    d = error_of(tmp_path, "-- x\n{% import 'kafak.sql' as kafka %}\n")
    assert (d.line, d.column, d.code) == (2, 11, "template-not-found")
    assert "'kafak.sql'" in d.message
    assert "Did you mean 'kafka.sql'?" in d.message
    assert str(BUNDLED_TEMPLATES) in d.message
    assert "kafka.sql" in d.message.split("available:")[1]


def test_template_path_escaping_the_search_dirs_is_not_found(tmp_path: Path) -> None:
    write(tmp_path / "secret.txt", "nope")
    d = error_of(tmp_path / "sub", "{% include '../secret.txt' %}")
    assert d.code == "template-not-found"


def test_unknown_macro_lists_the_macros_of_the_imported_files(tmp_path: Path) -> None:
    d = error_of(
        tmp_path, "{% import 'kafka.sql' as kafka %}\n\n{{ kafka.kafka_sorce('t', 't', 'a INT') }}\n"
    )
    assert (d.line, d.column, d.code) == (3, 10, "undefined")
    assert "'kafka_sorce'" in d.message
    assert "kafka_sink, kafka_source" in d.message
    assert "Did you mean 'kafka_source'?" in d.message


def test_sandbox_refuses_python_internals(tmp_path: Path) -> None:
    d = error_of(tmp_path, "SELECT\n  {{ var.__globals__ }}\n")
    assert (d.line, d.column, d.code) == (2, 10, "template-security")
    assert "__globals__" in d.message


def test_runtime_error_is_a_template_diagnostic(tmp_path: Path) -> None:
    d = error_of(tmp_path, "SELECT 1;\n  SELECT {{ 1 // 0 }};\n")
    assert (d.line, d.column, d.code) == (2, 10, "template")
    assert "division" in d.message


def test_raise_error_in_the_pipeline_file(tmp_path: Path) -> None:
    d = error_of(
        tmp_path,
        "x\n{% if not var('brokers') %}{{ raise_error('brokers must be set') }}{% endif %}\n",
        {"brokers": ""},
    )
    assert (d.line, d.code, d.message) == (2, "template", "brokers must be set")


def test_error_inside_a_macro_file_points_at_it_and_names_the_calling_line(tmp_path: Path) -> None:
    macros = write(
        tmp_path / "templates" / "mine.sql",
        "{# my macros #}\n{% macro table(name) %}\n"
        "CREATE TABLE {{ name }} (\n  {{ column_defs }}\n)\n{% endmacro %}\n",
    )
    d = error_of(tmp_path, "{% import 'mine.sql' as m %}\n\n{{ m.table('t') }};\n")
    assert (d.file, d.line, d.column, d.code) == (str(macros), 4, 6, "undefined")
    assert "'column_defs'" in d.message
    assert f"reached from {tmp_path / 'pipeline.sql'}:3" in d.message


def test_syntax_error_in_an_imported_file_points_at_it(tmp_path: Path) -> None:
    macros = write(tmp_path / "broken.sql", "{% macro m() %}\n  {{ 1 + }}\n{% endmacro %}\n")
    d = error_of(tmp_path, "-- header\n{% import 'broken.sql' as b %}\n")
    assert (d.file, d.line, d.column, d.code) == (str(macros), 2, 3, "template-syntax")
    assert f"reached from {tmp_path / 'pipeline.sql'}:2" in d.message


def test_bundled_macro_rejects_bad_startup_mode_listing_valid_choices(tmp_path: Path) -> None:
    d = error_of(
        tmp_path,
        "{% import 'kafka.sql' as kafka %}\n"
        "{{ kafka.kafka_source('t', 't', 'a INT', startup_mode='earliest') }}\n",
    )
    assert d.code == "template"
    assert d.file == str(BUNDLED_TEMPLATES / "kafka.sql")
    assert "startup_mode 'earliest' is not one of earliest-offset, latest-offset, group-offsets" in d.message
    assert f"reached from {tmp_path / 'pipeline.sql'}:2" in d.message


def test_bundled_macro_requires_group_id_for_group_offsets(tmp_path: Path) -> None:
    d = error_of(tmp_path, "{% import 'kafka.sql' as kafka %}\n{{ kafka.kafka_source('t', 't', 'a INT') }}\n")
    assert "needs group_id" in d.message


def test_bundled_macro_default_brokers_needs_the_var(tmp_path: Path) -> None:
    d = error_of(
        tmp_path, "{% import 'kafka.sql' as kafka %}\n{{ kafka.kafka_sink('t', 't', 'a INT') }}\n", {}
    )
    assert d.code == "missing-var"
    assert "'brokers'" in d.message
    assert "reached from" in d.message


def test_exactly_once_sink_needs_a_transactional_id_prefix(tmp_path: Path) -> None:
    d = error_of(
        tmp_path,
        "{% import 'kafka.sql' as k %}"
        "{{ k.kafka_sink('t', 't', 'a INT', delivery_guarantee='exactly-once') }}",
    )
    assert "transactional_id_prefix" in d.message


def test_unreadable_pipeline_file_is_an_io_diagnostic(tmp_path: Path) -> None:
    with pytest.raises(PipelineError) as info:
        render(tmp_path / "absent.sql", {})
    assert info.value.diagnostics[0].code == "io"


# --- variables ---------------------------------------------------------------------------------------


def test_parse_var_args() -> None:
    assert parse_var_args(["a=1", "b=x=y", "c=", " d =v"]) == {"a": "1", "b": "x=y", "c": "", "d": "v"}


def test_parse_var_args_rejects_items_without_equals() -> None:
    with pytest.raises(PipelineError) as info:
        parse_var_args(["ok=1", "brokers", "=x"])
    assert [d.code for d in info.value.diagnostics] == ["bad-var", "bad-var"]
    assert "'brokers'" in info.value.diagnostics[0].message
    assert "KEY=VALUE" in info.value.diagnostics[0].message


def test_vars_file_json(tmp_path: Path) -> None:
    path = write(tmp_path / "vars.json", json.dumps({"brokers": "b:9092", "parallelism": 2, "strict": True}))
    assert load_vars_file(path) == {"brokers": "b:9092", "parallelism": "2", "strict": "true"}


def test_vars_file_env_style(tmp_path: Path) -> None:
    path = write(
        tmp_path / "vars.env",
        "# kafka\nbrokers=b:9092\n\nexport group = 'billing'\nquery=\"a = b\"\nempty=\n",
    )
    assert load_vars_file(path) == {"brokers": "b:9092", "group": "billing", "query": "a = b", "empty": ""}


def test_vars_file_errors_point_at_the_line(tmp_path: Path) -> None:
    path = write(tmp_path / "vars.env", "brokers=b\n  brokers: yaml\n")
    with pytest.raises(PipelineError) as info:
        load_vars_file(path)
    [d] = info.value.diagnostics
    assert (d.file, d.line, d.column, d.code) == (str(path), 2, 3, "bad-var")
    assert "YAML is not supported" in d.message


def test_vars_file_bad_json(tmp_path: Path) -> None:
    path = write(tmp_path / "vars.json", '{\n  "a": "1",\n  "b": [1]\n}\n')
    with pytest.raises(PipelineError) as info:
        load_vars_file(path)
    [d] = info.value.diagnostics
    assert (d.line, d.code) == (3, "bad-var")
    assert "'b'" in d.message
    path = write(tmp_path / "vars.json", '{\n  "a": "1",\n}\n')
    with pytest.raises(PipelineError) as info:
        load_vars_file(path)
    assert (info.value.diagnostics[0].line, info.value.diagnostics[0].code) == (3, "bad-var")


def test_missing_vars_file(tmp_path: Path) -> None:
    with pytest.raises(PipelineError) as info:
        load_vars_file(tmp_path / "none.json")
    assert info.value.diagnostics[0].code == "io"
