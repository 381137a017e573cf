"""The `flink` sqlglot dialect: every statement form a pipeline file uses parses into the agreed tree
shape, and generating Flink SQL from a tree parses back to the same tree."""

from __future__ import annotations

import re

import pytest
import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError

import connector.sql.dialect.flink  # noqa: F401  (registers read="flink")
from connector.sql.dialect.expressions import Explain, MetadataColumnConstraint, Reset, StatementSet, WindowTVF
from connector.sql.dialect.statements import reset_of, setting_of, table_option_hints


def parse(sql: str) -> exp.Expr:
    tree = sqlglot.parse_one(sql, read="flink")
    assert tree is not None
    return tree


def assert_roundtrip(sql: str) -> exp.Expr:
    """parse -> generate Flink SQL -> parse gives the same tree, and the generated SQL is stable."""
    tree = parse(sql)
    generated = tree.sql(dialect="flink")
    again = parse(generated)
    assert again == tree, f"{sql}\n  generated: {generated}"
    assert again.sql(dialect="flink") == generated
    assert parse(tree.sql(dialect="flink", pretty=True)) == tree
    return tree


CREATE_ORDERS = """CREATE TEMPORARY TABLE IF NOT EXISTS cat.db.orders (
         `id` BIGINT NOT NULL COMMENT 'order id',
         `offset` BIGINT METADATA VIRTUAL,
         `timestamp` TIMESTAMP_LTZ(3) METADATA FROM 'timestamp',
         part INT METADATA FROM 'partition' VIRTUAL,
         price DECIMAL(10, 2),
         total AS price * 2,
         proc AS PROCTIME() COMMENT 'processing time',
         ts TIMESTAMP(3),
         WATERMARK FOR ts AS ts - INTERVAL '5' SECOND,
         PRIMARY KEY (id) NOT ENFORCED
       ) COMMENT 'orders' PARTITIONED BY (part, id) WITH ('connector' = 'kafka', 'topic' = 'orders')"""
COLUMN_KEY = "CREATE TABLE t (id INT PRIMARY KEY NOT ENFORCED, name STRING) WITH ('connector' = 'print')"
NAMED_KEY = "CREATE TABLE t (a INT, b INT, CONSTRAINT pk PRIMARY KEY (a, b) NOT ENFORCED) WITH ('k' = 'v')"
LIKE = "CREATE TABLE t2 (x INT) WITH ('a' = 'b') LIKE db.t (INCLUDING ALL EXCLUDING OPTIONS)"
VIEW_WITH_COLUMNS = "CREATE TEMPORARY VIEW IF NOT EXISTS v (x, y) COMMENT 'view' AS SELECT a, b FROM t"
STATEMENT_SET = (
    "EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT * FROM s; INSERT INTO b SELECT * FROM s; END"
)
WINDOW_JOIN = (
    "SELECT * FROM TABLE(TUMBLE(TABLE a, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) AS l JOIN "
    "TABLE(TUMBLE(TABLE b, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) AS r ON l.window_start = r.window_start"
)

STATEMENTS = [
    # CREATE TABLE
    CREATE_ORDERS,
    COLUMN_KEY,
    NAMED_KEY,
    "CREATE TABLE t2 WITH ('topic' = 'other') LIKE t",
    LIKE,
    "CREATE TABLE t2 WITH ('a' = 'b') LIKE t (OVERWRITING OPTIONS EXCLUDING WATERMARKS)",
    "CREATE TABLE t2 WITH ('connector' = 'print') AS SELECT * FROM t",
    "CREATE TABLE t (s STRING) WITH ()",
    # CREATE VIEW
    "CREATE VIEW v AS SELECT a FROM t",
    VIEW_WITH_COLUMNS,
    # INSERT
    "INSERT INTO t SELECT * FROM s",
    "INSERT INTO cat.db.t (a, b) SELECT x, y FROM s",
    "INSERT INTO t VALUES (1, 'a'), (2, 'b')",
    "INSERT OVERWRITE t SELECT * FROM s",
    "INSERT INTO t /*+ OPTIONS('sink.parallelism' = '2') */ SELECT * FROM s",
    "INSERT INTO t PARTITION (dt = '2024-01-01') SELECT a FROM s",
    # statement sets
    STATEMENT_SET,
    # SET / RESET
    "SET 'execution.checkpointing.interval' = '10s'",
    "SET",
    "RESET 'pipeline.name'",
    "RESET",
    # ALTER
    "ALTER TABLE t SET ('scan.startup.mode' = 'latest-offset')",
    "ALTER TABLE t RESET ('scan.startup.mode', 'properties.group.id')",
    "ALTER TABLE t RENAME TO u",
    # DROP / SHOW / DESCRIBE / EXPLAIN / USE
    "DROP TABLE t",
    "DROP TEMPORARY TABLE IF EXISTS db.t",
    "DROP VIEW v",
    "DROP TEMPORARY VIEW IF EXISTS v",
    "SHOW TABLES",
    "SHOW VIEWS",
    "SHOW CURRENT DATABASE",
    "SHOW CREATE TABLE t",
    "SHOW COLUMNS FROM t",
    "DESCRIBE t",
    "EXPLAIN SELECT * FROM t",
    "EXPLAIN CHANGELOG_MODE, ESTIMATED_COST INSERT INTO t SELECT * FROM s",
    "USE CATALOG c",
    "USE c.db",
    "CREATE TEMPORARY FUNCTION parse_line AS 'com.example.ParseLine' LANGUAGE JAVA",
    "CREATE FUNCTION IF NOT EXISTS db.f AS 'com.example.F'",
    "ADD JAR '/opt/udfs.jar'",
    # hints and comments
    "SELECT * FROM t /*+ OPTIONS('scan.startup.mode' = 'latest-offset') */",
    "SELECT * FROM t /*+ OPTIONS('a' = 'b') */ AS x JOIN u /*+ OPTIONS('c' = 'd') */ AS y ON x.k = y.k",
    "SELECT /*+ BROADCAST(d) */ * FROM t JOIN d ON t.k = d.k",
    "SELECT a -- trailing\nFROM t /* block */",
    # window TVFs
    "SELECT window_start, window_end, SUM(price) FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(ts), "
    "INTERVAL '10' MINUTES)) GROUP BY window_start, window_end",
    "SELECT * FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(ts), INTERVAL '1' HOUR, INTERVAL '5' MINUTE)) AS w",
    "SELECT * FROM TABLE(HOP(TABLE bid, DESCRIPTOR(ts), INTERVAL '5' MINUTES, INTERVAL '10' MINUTES))",
    "SELECT * FROM TABLE(CUMULATE(TABLE bid, DESCRIPTOR(ts), INTERVAL '2' MINUTES, INTERVAL '10' MINUTES))",
    "SELECT * FROM TABLE(SESSION(TABLE bid PARTITION BY item, DESCRIPTOR(ts), INTERVAL '5' MINUTES))",
    "SELECT * FROM TABLE(SESSION(TABLE bid PARTITION BY (item, shop), DESCRIPTOR(ts), INTERVAL '5' MINUTE))",
    "SELECT * FROM TABLE(TUMBLE(DATA => TABLE bid, TIMECOL => DESCRIPTOR(ts), SIZE => INTERVAL '1' HOUR))",
    "SELECT * FROM TABLE(TUMBLE((SELECT * FROM bid WHERE price > 1), DESCRIPTOR(ts), INTERVAL '1' HOUR))",
    WINDOW_JOIN,
    # legacy group windows
    "SELECT TUMBLE_START(ts, INTERVAL '1' MINUTE), TUMBLE_END(ts, INTERVAL '1' MINUTE), COUNT(*) "
    "FROM t GROUP BY TUMBLE(ts, INTERVAL '1' MINUTE), k",
    "SELECT HOP_START(ts, INTERVAL '1' MINUTE, INTERVAL '5' MINUTE) FROM t "
    "GROUP BY HOP(ts, INTERVAL '1' MINUTE, INTERVAL '5' MINUTE)",
    "SELECT SESSION_END(ts, INTERVAL '1' MINUTE) FROM t GROUP BY SESSION(ts, INTERVAL '1' MINUTE)",
    # expressions and functions
    "SELECT INTERVAL '0.001' SECOND, INTERVAL '5' SECONDS, INTERVAL '2' HOURS, INTERVAL '3' DAYS",
    "SELECT INTERVAL '10 00:00:00.004' DAY TO SECOND, INTERVAL '1-2' YEAR TO MONTH",
    "SELECT PROCTIME(), TO_TIMESTAMP_LTZ(ms, 3), TO_TIMESTAMP(s), TO_TIMESTAMP(s, 'yyyy-MM-dd'), "
    "DATE_FORMAT(ts, 'yyyy-MM-dd HH:mm'), CURRENT_WATERMARK(ts) FROM t",
    "SELECT JSON_VALUE(j, '$.a'), JSON_VALUE(j, '$.a' RETURNING INT), JSON_QUERY(j, '$.b') FROM t",
    "SELECT JSON_VALUE(j, '$.a' RETURNING INT DEFAULT 0 ON EMPTY NULL ON ERROR) FROM t",
    "SELECT LISTAGG(a), LISTAGG(a, ';'), SPLIT_INDEX(s, ',', 1), IF(a > 1, 'x', 'y'), IFNULL(a, 0) FROM t",
    "SELECT REGEXP_EXTRACT(s, '(\\d+)-(\\d+)', 2), REGEXP_EXTRACT(s, 'a+'), REGEXP(s, '\\w+') FROM t",
    "SELECT CAST(a AS VARCHAR(10)), TRY_CAST(a AS INT), CAST(a AS TIMESTAMP(3)), CAST(r AS ROW<x INT>)",
    "SELECT x FROM t CROSS JOIN UNNEST(arr) AS u(x)",
    "SELECT o.id FROM orders AS o LEFT JOIN LATERAL TABLE(split(s)) AS w(word) ON TRUE",
    "SELECT o.id, d.name FROM orders AS o JOIN dim FOR SYSTEM_TIME AS OF o.proc AS d ON o.k = d.k",
    "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY id ORDER BY proc DESC) AS rn FROM t) "
    "WHERE rn = 1",
    "SELECT SUM(x) OVER (PARTITION BY k ORDER BY ts RANGE BETWEEN INTERVAL '1' HOUR PRECEDING AND "
    "CURRENT ROW) FROM t",
    "WITH c AS (SELECT a FROM t) SELECT * FROM c UNION ALL SELECT a FROM u",
    "SELECT TIMESTAMPDIFF(SECOND, a, b), TIMESTAMPADD(HOUR, 1, ts), EXTRACT(HOUR FROM ts), "
    "FLOOR(ts TO HOUR), CEIL(ts TO MINUTE), CURRENT_TIMESTAMP, UNIX_TIMESTAMP(), CHAR_LENGTH(s) FROM t",
    "SELECT JSON_OBJECT(KEY 'a' VALUE b), ARRAY[1, 2], MAP['a', 1], arr[1], m['k'], r.a.b, a || b FROM t",
    "SELECT `timestamp`, `offset`, 'it''s', '\\d', '' FROM t WHERE s LIKE 'a%' AND b IS NOT NULL",
    "SELECT * FROM t MATCH_RECOGNIZE (PARTITION BY a ORDER BY ts MEASURES A.p AS p ONE ROW PER MATCH "
    "AFTER MATCH SKIP PAST LAST ROW PATTERN (A B+) DEFINE B AS B.p > A.p) AS m",
]


@pytest.mark.parametrize("sql", STATEMENTS)
def test_statement_roundtrips(sql: str) -> None:
    assert_roundtrip(sql)


TYPES = [
    ("CHAR(5)", "CHAR(5)"),
    ("VARCHAR(10)", "VARCHAR(10)"),
    ("STRING", "STRING"),
    ("BOOLEAN", "BOOLEAN"),
    ("BINARY(3)", "BINARY(3)"),
    ("VARBINARY(4)", "VARBINARY(4)"),
    ("BYTES", "BYTES"),
    ("DECIMAL(10, 2)", "DECIMAL(10, 2)"),
    ("DEC(10, 2)", "DECIMAL(10, 2)"),
    ("NUMERIC(5)", "DECIMAL(5)"),
    ("TINYINT", "TINYINT"),
    ("SMALLINT", "SMALLINT"),
    ("INT", "INT"),
    ("INTEGER", "INT"),
    ("BIGINT", "BIGINT"),
    ("FLOAT", "FLOAT"),
    ("DOUBLE", "DOUBLE"),
    ("DOUBLE PRECISION", "DOUBLE"),
    ("DATE", "DATE"),
    ("TIME(3)", "TIME(3)"),
    ("TIMESTAMP(3)", "TIMESTAMP(3)"),
    ("TIMESTAMP(3) WITHOUT TIME ZONE", "TIMESTAMP(3)"),
    ("TIMESTAMP_LTZ(3)", "TIMESTAMP_LTZ(3)"),
    ("TIMESTAMP(3) WITH LOCAL TIME ZONE", "TIMESTAMP_LTZ(3)"),
    ("INTERVAL DAY TO SECOND", "INTERVAL DAY TO SECOND"),
    ("INTERVAL YEAR TO MONTH", "INTERVAL YEAR TO MONTH"),
    ("ARRAY<INT>", "ARRAY<INT>"),
    ("ARRAY<INT NOT NULL>", "ARRAY<INT NOT NULL>"),
    ("MAP<STRING, BIGINT>", "MAP<STRING, BIGINT>"),
    ("MULTISET<STRING>", "MULTISET<STRING>"),
    ("ROW<a INT, b STRING>", "ROW<a INT, b STRING>"),
    ("ROW(a INT, b STRING)", "ROW<a INT, b STRING>"),
    ("ROW<>", "ROW<>"),
    ("ARRAY<STRING> NOT NULL", "ARRAY<STRING>"),
    ("MAP<STRING NOT NULL, ROW<a INT>>", "MAP<STRING NOT NULL, ROW<a INT>>"),
    ("TIMESTAMP_LTZ", "TIMESTAMP_LTZ"),
    ("VARCHAR", "VARCHAR"),
    ("ROW<a INT NOT NULL 'the a', `b` ARRAY<ROW<c MAP<STRING, INT>>>>", None),
    ("RAW('java.lang.Object', 'AAA=')", "RAW('java.lang.Object', 'AAA=')"),
]


@pytest.mark.parametrize(("flink_type", "generated"), TYPES)
def test_column_types_parse_and_generate(flink_type: str, generated: str | None) -> None:
    tree = assert_roundtrip(f"CREATE TABLE t (c {flink_type}) WITH ('connector' = 'datagen')")
    column = tree.this.expressions[0]
    assert isinstance(column, exp.ColumnDef)
    assert isinstance(column.args["kind"], exp.DataType)
    assert column.args["kind"].sql(dialect="flink") == (generated or flink_type)


def test_nested_row_fields_keep_nullability_and_description() -> None:
    tree = parse("CREATE TABLE t (r ROW<a INT NOT NULL 'the a', b STRING>) WITH ('k' = 'v')")
    row = tree.this.expressions[0].args["kind"]
    assert row.is_type(exp.DType.STRUCT)
    a, b = row.expressions
    assert [a.name, b.name] == ["a", "b"]
    kinds = [c.args["kind"] for c in a.args["constraints"]]
    assert isinstance(kinds[0], exp.NotNullColumnConstraint)
    assert isinstance(kinds[1], exp.CommentColumnConstraint) and kinds[1].this.name == "the a"


def test_create_table_shape() -> None:
    create = parse(CREATE_ORDERS)
    assert isinstance(create, exp.Create)
    assert create.args["kind"] == "TABLE"
    assert create.args["exists"] is True
    schema = create.this
    assert isinstance(schema, exp.Schema)
    table = schema.this
    assert isinstance(table, exp.Table)
    assert (table.catalog, table.db, table.name) == ("cat", "db", "orders")

    columns = {e.name: e for e in schema.expressions if isinstance(e, exp.ColumnDef)}
    assert list(columns) == ["id", "offset", "timestamp", "part", "price", "total", "proc", "ts"]

    physical = columns["id"]
    assert isinstance(physical.this, exp.Identifier) and physical.this.quoted
    assert physical.args["kind"] == exp.DataType.build("BIGINT")
    kinds = [c.args["kind"] for c in physical.args["constraints"]]
    assert isinstance(kinds[0], exp.NotNullColumnConstraint)
    assert isinstance(kinds[1], exp.CommentColumnConstraint)
    assert kinds[1].this == exp.Literal.string("order id")

    def metadata(name: str) -> MetadataColumnConstraint:
        (constraint,) = columns[name].args["constraints"]
        assert isinstance(constraint, exp.ColumnConstraint)
        kind = constraint.args["kind"]
        assert isinstance(kind, MetadataColumnConstraint)
        return kind

    assert metadata("offset").this is None and metadata("offset").args["virtual"] is True
    assert metadata("timestamp").this == exp.Literal.string("timestamp")
    assert metadata("timestamp").args.get("virtual") is None
    assert metadata("part").this == exp.Literal.string("partition") and metadata("part").args["virtual"]
    assert columns["timestamp"].args["kind"].sql(dialect="flink") == "TIMESTAMP_LTZ(3)"

    total = columns["total"]
    assert total.args.get("kind") is None
    (computed,) = total.args["constraints"]
    assert isinstance(computed.args["kind"], exp.ComputedColumnConstraint)
    assert computed.args["kind"].this.sql(dialect="flink") == "price * 2"
    proc_kinds = [c.args["kind"] for c in columns["proc"].args["constraints"]]
    assert isinstance(proc_kinds[0], exp.ComputedColumnConstraint)
    assert isinstance(proc_kinds[1], exp.CommentColumnConstraint)

    (watermark,) = [e for e in schema.expressions if isinstance(e, exp.WatermarkColumnConstraint)]
    assert isinstance(watermark.this, exp.Column) and watermark.this.name == "ts"
    assert watermark.expression.sql(dialect="flink") == "ts - INTERVAL '5' SECOND"

    (key,) = [e for e in schema.expressions if isinstance(e, exp.PrimaryKey)]
    assert key.expressions == [exp.to_identifier("id")]
    assert key.args["options"] == ["NOT ENFORCED"]

    properties = create.args["properties"].expressions
    options = [p for p in properties if type(p) is exp.Property]
    assert [(p.this, p.args["value"]) for p in options] == [
        (exp.Literal.string("connector"), exp.Literal.string("kafka")),
        (exp.Literal.string("topic"), exp.Literal.string("orders")),
    ]
    (partitioned,) = [p for p in properties if isinstance(p, exp.PartitionedByProperty)]
    assert isinstance(partitioned.this, exp.Schema)
    assert partitioned.this.expressions == [exp.to_identifier("part"), exp.to_identifier("id")]
    (comment,) = [p for p in properties if isinstance(p, exp.SchemaCommentProperty)]
    assert comment.this == exp.Literal.string("orders")
    assert any(isinstance(p, exp.TemporaryProperty) for p in properties)


def test_named_and_column_primary_keys() -> None:
    schema = parse(NAMED_KEY).this
    (key,) = [e for e in schema.expressions if isinstance(e, exp.PrimaryKey)]
    assert key.this == exp.to_identifier("pk")
    assert key.expressions == [exp.to_identifier("a"), exp.to_identifier("b")]

    column = parse(COLUMN_KEY).this.expressions[0]
    (constraint,) = column.args["constraints"]
    assert isinstance(constraint.args["kind"], exp.PrimaryKeyColumnConstraint)
    assert constraint.args["kind"].args["options"] == ["NOT ENFORCED"]


def test_like_clause_shape() -> None:
    properties = parse(LIKE).args["properties"].expressions
    (like,) = [p for p in properties if isinstance(p, exp.LikeProperty)]
    assert isinstance(like.this, exp.Table) and (like.this.db, like.this.name) == ("db", "t")
    assert [(o.this, o.args["value"]) for o in like.expressions] == [
        (exp.var("INCLUDING"), exp.var("ALL")),
        (exp.var("EXCLUDING"), exp.var("OPTIONS")),
    ]


def test_create_view_shapes() -> None:
    plain = parse("CREATE VIEW v AS SELECT a FROM t")
    assert plain.args["kind"] == "VIEW"
    assert isinstance(plain.this, exp.Table) and plain.this.name == "v"
    assert isinstance(plain.expression, exp.Select)

    with_columns = parse(VIEW_WITH_COLUMNS)
    assert isinstance(with_columns.this, exp.Schema)
    assert with_columns.this.this.name == "v"
    assert with_columns.this.expressions == [exp.to_identifier("x"), exp.to_identifier("y")]
    assert with_columns.args["exists"] is True


def test_insert_shapes() -> None:
    plain = parse("INSERT INTO t SELECT * FROM s")
    assert isinstance(plain, exp.Insert)
    assert isinstance(plain.this, exp.Table) and plain.this.name == "t"
    assert isinstance(plain.expression, exp.Select)
    assert not plain.args.get("overwrite")

    columns = parse("INSERT INTO t (a, b) SELECT x, y FROM s")
    assert isinstance(columns.this, exp.Schema)
    assert columns.this.expressions == [exp.to_identifier("a"), exp.to_identifier("b")]

    values = parse("INSERT INTO t VALUES (1, 'a')")
    assert isinstance(values.expression, exp.Values)

    assert parse("INSERT OVERWRITE t SELECT * FROM s").args["overwrite"] is True


def test_statement_set_holds_its_inserts() -> None:
    statement_set = parse(STATEMENT_SET)
    assert isinstance(statement_set, StatementSet)
    assert [i.this.name for i in statement_set.expressions] == ["a", "b"]
    assert all(isinstance(i, exp.Insert) for i in statement_set.expressions)


def test_legacy_statement_set_parses_into_the_same_node() -> None:
    legacy = sqlglot.parse(
        "BEGIN STATEMENT SET;\nINSERT INTO a SELECT * FROM s;\nINSERT INTO b SELECT * FROM s;\nEND;",
        read="flink",
    )
    assert legacy == [parse(STATEMENT_SET)]


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SET 'execution.checkpointing.interval' = '10s'", ("execution.checkpointing.interval", "10s")),
        ("SET execution.checkpointing.interval = 10s", ("execution.checkpointing.interval", "10s")),
        ("SET table.exec.mini-batch.size=5000", ("table.exec.mini-batch.size", "5000")),
        ("SET pipeline.name = my job", ("pipeline.name", "my job")),
        ("SET pipeline.name = 'quoted'", ("pipeline.name", "quoted")),
        ("SET 'k' = 'it''s'", ("k", "it's")),
        ("SET", None),
        ("SELECT 1", None),
    ],
)
def test_setting_of(sql: str, expected: tuple[str, str] | None) -> None:
    tree = parse(sql)
    assert setting_of(tree) == expected
    assert setting_of(parse(tree.sql(dialect="flink"))) == expected


def test_set_shape() -> None:
    tree = parse("SET 'a.b' = 'c'")
    assert isinstance(tree, exp.Set)
    (item,) = tree.expressions
    assert isinstance(item, exp.SetItem)
    assert item.this == exp.EQ(this=exp.Literal.string("a.b"), expression=exp.Literal.string("c"))


@pytest.mark.parametrize(
    ("sql", "key"),
    [("RESET 'pipeline.name'", "pipeline.name"), ("RESET pipeline.name", "pipeline.name"), ("RESET", ...)],
)
def test_reset_of(sql: str, key: object) -> None:
    tree = parse(sql)
    assert isinstance(tree, Reset)
    assert reset_of(tree) == key
    assert reset_of(parse("SET 'a' = 'b'")) is None


def test_drop_show_describe_explain_shapes() -> None:
    drop = parse("DROP TEMPORARY TABLE IF EXISTS db.t")
    assert isinstance(drop, exp.Drop)
    assert (drop.args["kind"], drop.args["exists"], drop.args["temporary"]) == ("TABLE", True, True)
    assert drop.args["tables"][0].name == "t"
    assert parse("DROP VIEW v").args["kind"] == "VIEW"
    assert parse("SHOW TABLES") == exp.Show(this="TABLES")
    assert isinstance(parse("DESC t"), exp.Describe) and parse("DESC t") == parse("DESCRIBE t")
    explain = parse("EXPLAIN PLAN FOR SELECT * FROM t")
    assert isinstance(explain, Explain) and isinstance(explain.this, exp.Select)


def window(sql: str) -> WindowTVF:
    tvf = parse(sql).args["from_"].this
    assert isinstance(tvf, WindowTVF)
    return tvf


def test_tumble_window_shape() -> None:
    tvf = window(
        "SELECT * FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(ts), INTERVAL '10' MINUTES, INTERVAL '1' MINUTE)) w"
    )
    assert tvf.args["kind"] == "TUMBLE"
    assert isinstance(tvf.this, exp.Table) and tvf.this.name == "bid"
    assert tvf.args["timecol"] == exp.column("ts")
    assert tvf.args["size"] == exp.Interval(this=exp.Literal.string("10"), unit=exp.var("MINUTE"))
    assert tvf.args["offset"] == exp.Interval(this=exp.Literal.string("1"), unit=exp.var("MINUTE"))
    assert tvf.alias == "w"


def test_hop_cumulate_session_window_shapes() -> None:
    hop = window(
        "SELECT * FROM TABLE(HOP(TABLE t, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '1' MINUTE))"
    )
    assert (hop.args["kind"], hop.args["slide"].name, hop.args["size"].name) == ("HOP", "5", "1")
    cumulate = window(
        "SELECT * FROM TABLE(CUMULATE(TABLE t, DESCRIPTOR(ts), INTERVAL '2' MINUTE, INTERVAL '10' MINUTE))"
    )
    assert (cumulate.args["step"].name, cumulate.args["size"].name) == ("2", "10")
    session = window(
        "SELECT * FROM TABLE(SESSION(TABLE t PARTITION BY (a, b), DESCRIPTOR(ts), INTERVAL '5' MINUTE))"
    )
    assert session.args["gap"].name == "5"
    assert session.args["partition_by"] == [exp.column("a"), exp.column("b")]


def test_named_window_arguments_equal_positional_ones() -> None:
    named = window(
        "SELECT * FROM TABLE(HOP(DATA => TABLE t, TIMECOL => DESCRIPTOR(ts), "
        "SIZE => INTERVAL '1' MINUTE, SLIDE => INTERVAL '5' SECONDS))"
    )
    positional = window(
        "SELECT * FROM TABLE(HOP(TABLE t, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '1' MINUTE))"
    )
    assert named == positional


def test_window_over_a_subquery_and_in_a_join() -> None:
    subquery = window("SELECT * FROM TABLE(TUMBLE((SELECT * FROM t), DESCRIPTOR(ts), INTERVAL '1' HOUR))")
    assert isinstance(subquery.this, exp.Subquery)
    joined = parse(WINDOW_JOIN).args["joins"][0].this
    assert isinstance(joined, WindowTVF) and joined.alias == "r" and joined.this.name == "b"


def test_window_errors_name_the_problem() -> None:
    with pytest.raises(ParseError, match="DESCRIPTOR"):
        parse("SELECT * FROM TABLE(TUMBLE(TABLE t, ts, INTERVAL '1' MINUTE))")
    with pytest.raises(ParseError, match="Unknown TUMBLE parameter 'WIDTH'"):
        parse("SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), WIDTH => INTERVAL '1' MINUTE))")


def test_table_option_hints() -> None:
    tree = parse(
        "SELECT * FROM k /*+ OPTIONS('scan.startup.mode'='latest-offset', 'properties.group.id'='g') */ AS x "
        "JOIN d ON x.a = d.a"
    )
    table = tree.args["from_"].this
    assert table.alias == "x"
    assert table_option_hints(table) == {
        "scan.startup.mode": "latest-offset",
        "properties.group.id": "g",
    }
    (hint,) = table.args["hints"]
    assert isinstance(hint, exp.Anonymous) and hint.name == "OPTIONS"
    assert table_option_hints(tree.args["joins"][0].this) == {}
    insert = parse("INSERT INTO t /*+ OPTIONS('sink.parallelism'='2') */ SELECT 1")
    assert table_option_hints(insert.this) == {"sink.parallelism": "2"}


def test_plural_interval_units_become_singular() -> None:
    assert parse("SELECT INTERVAL '5' MINUTES") == parse("SELECT INTERVAL '5' MINUTE")
    assert parse("SELECT INTERVAL '0.001' SECOND").expressions[0].name == "0.001"


def test_functions_map_to_sqlglot_expressions() -> None:
    select = parse(
        "SELECT JSON_VALUE(j, '$.a' RETURNING INT), TRY_CAST(a AS INT), IF(a, 1, 2), "
        "REGEXP_EXTRACT(s, 'x'), LISTAGG(a, ';'), TIMESTAMPDIFF(SECOND, t1, t2), DATE_FORMAT(ts, 'yyyy')"
    )
    json_value, try_cast, if_, regexp, listagg, diff, date_format = select.expressions
    assert isinstance(json_value, exp.JSONValue)
    assert json_value.args["returning"] == exp.DataType.build("INT")
    assert isinstance(try_cast, exp.TryCast)
    assert isinstance(if_, exp.If)
    # Flink's REGEXP_EXTRACT without an index returns the whole match.
    assert isinstance(regexp, exp.RegexpExtract) and regexp.args["group"].name == "0"
    assert isinstance(listagg, exp.GroupConcat)
    assert isinstance(diff, exp.TimestampDiff)
    assert diff.unit is not None and (diff.this.name, diff.expression.name, diff.unit.name) == ("t2", "t1", "SECOND")
    assert isinstance(date_format, exp.TimeToStr)


def test_unnest_and_user_defined_functions() -> None:
    tree = parse("SELECT x, my_udf(x, 1) FROM t CROSS JOIN UNNEST(arr) AS u(x)")
    unnest = tree.args["joins"][0].this
    assert isinstance(unnest, exp.Unnest)
    assert unnest.args["alias"].columns == [exp.to_identifier("x")]
    assert isinstance(tree.expressions[1], exp.Anonymous)


def test_strings_keep_backslashes_and_doubled_quotes() -> None:
    literals = parse("SELECT 'it''s', '\\d+\\n', 'a\nb'").expressions
    assert [lit.name for lit in literals] == ["it's", "\\d+\\n", "a\nb"]


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("CREATE TABLE t (a INT) STORED AS PARQUET", "Unexpected 'STORED'"),
        ("CREATE TABLE t (a INT) WITH (connector = 'kafka')", "quoted option key"),
        ("CREATE TABLE t (a INT) WITH ('connector' = kafka)", "quoted option value"),
        ("CREATE TABLE t (a INT) WITH ('connector' 'kafka')", "Expected '='"),
        ("SELEC * FROM t", "Did you mean 'SELECT'"),
        ("EXECUTE STATEMENT SET BEGIN SELECT 1; END", "Expected INSERT or END"),
        ("EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT 1;", "END to close the statement set"),
        ("SHOW TABELS", "Expected TABLES"),
        ("CREATE VIEW v AS", "Expected AS followed by the view's query"),
        ("SELECT * FROM t /*+ OPTIONS('k') */", "'key' = 'value' pairs in OPTIONS"),
        ("SELECT * FROM t /*+ OPTIONS('k'=) */", "Expected a hint like"),
        ("INSERT INTO t", "Expected the query to insert"),
    ],
)
def test_non_flink_syntax_is_rejected(sql: str, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        sqlglot.parse(sql, read="flink")


@pytest.mark.parametrize(
    ("literal", "message"),
    [
        # Flink 2.3's (Calcite's) messages for each, from its SQL parser
        (r"U&'\004'", "Unicode escape sequence starting at character 0 is not exactly four hex digits"),
        (r"U&'\00G1'", "Unicode escape sequence starting at character 0 is not exactly four hex digits"),
        (r"U&'a\'", "Unicode escape sequence starting at character 1 is not exactly four hex digits"),
        (r"U&'x' UESCAPE '+'", "UESCAPE '+' may not be hex digit, whitespace, plus sign, or double quote"),
        (r"U&'x' UESCAPE 'ab'", "UESCAPE 'ab' must be exactly one character"),
    ],
)
def test_a_unicode_literal_flink_refuses_is_a_parse_error_with_its_words(literal: str, message: str) -> None:
    with pytest.raises(ParseError, match=re.escape(message)):
        sqlglot.parse_one(f"SELECT {literal}", read="flink")


def test_a_unicode_literal_is_the_text_it_stands_for() -> None:
    select = sqlglot.parse_one(r"SELECT U&'\0041\00e9', U&'!0041!!' UESCAPE '!', U&'\D83D\DE00'", read="flink")
    assert [e.name for e in select.expressions] == ["Aé", "A!", "\U0001f600"]
