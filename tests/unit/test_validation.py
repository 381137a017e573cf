"""Every validation rule through the real CLI: exit code 1, one diagnostic at the culprit's file:line:col in the
file as written (also when a Jinja template shifts lines and columns), and a message naming the culprit and the
valid choices.

Each case is a small pipeline with one mistake; `‸` marks where the diagnostic must point. Each case must produce
exactly one error, so the rules are also checked for false positives on the valid rest of the file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from connector.entrypoints.cli import main

MARK = "‸"
SERVERS = "'properties.bootstrap.servers' = 'localhost:9092'"
SOURCE_OPTIONS = ("'topic' = 'orders'", "'properties.group.id' = 'etl'", "'format' = 'json'")
SINK_OPTIONS = ("'topic' = 'totals'", "'format' = 'json'")
AVRO_OPTIONS = (*SOURCE_OPTIONS[:2], "'format' = 'avro'")
CONFLUENT_OPTIONS = (*SOURCE_OPTIONS[:2], "'format' = 'avro-confluent'", "'avro-confluent.url' = 'http://localhost:1'")
# id BIGINT, amount DOUBLE as a record whose 'amount' is a DECIMAL
CONFLUENT_WRONG_SCHEMA = (
    '{"type": "record", "name": "Order", "fields": [{"name": "id", "type": ["null", "long"]}, {"name": "amount", '
    '"type": ["null", {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}]}]}'
)
PRINT = "CREATE TABLE output (id BIGINT, amount DOUBLE) WITH ('connector' = 'print');\n"
READ = "INSERT INTO output SELECT id, amount FROM orders;\n"

# Jinja that vanishes from the output (import, set, comment) or expands on the line: every position below it
# moves in the rendered SQL, and every diagnostic must still point into the file as written.
TEMPLATE_HEADER = """{% import 'kafka.sql' as kafka %}
{% from 'common.sql' import column_list %}
{# The pipeline below is the plain case's, with the brokers from --var. #}
{% set unused = kafka %}
-- rendered by {{ 'Jinja' }} for {{ var('brokers') }}
"""


def kafka(
    columns: str = "id BIGINT, amount DOUBLE",
    options: tuple[str, ...] = SOURCE_OPTIONS,
    name: str = "orders",
    connector: str = "kafka",
) -> str:
    """A CREATE TABLE whose connector line also holds the bootstrap servers (a template variable in the
    templated cases, moving what follows it on that line) and the first option; then one option a line."""
    lines = ",\n  ".join(options)
    return f"CREATE TABLE {name} (\n  {columns}\n) WITH (\n  'connector' = '{connector}', {SERVERS}, {lines}\n);\n"


@dataclass(frozen=True)
class Case:
    id: str
    sql: str  # holds one MARK where the diagnostic must point
    code: str
    fragments: tuple[str, ...]  # each must be in the message


CASES = [
    Case("syntax", PRINT + f"{MARK}SELEC id FROM output;\n", "syntax", ("Unexpected 'SELEC'", "Did you mean 'SELECT'")),
    Case(
        "syntax-unterminated-string",
        f"CREATE TABLE output (id BIGINT) WITH ('connector' = {MARK}'print);\n",
        "syntax",
        ("Unterminated string literal",),
    ),
    Case(
        "syntax-missing-comma",
        f"CREATE TABLE output (id BIGINT {MARK}amount DOUBLE) WITH ('connector' = 'print');\n",
        "syntax",
        ("Unexpected 'amount'",),
    ),
    Case(
        "unknown-connector",
        kafka(connector="kafak").replace("'connector'", f"{MARK}'connector'"),
        "unknown-connector",
        ("'kafak'", "Did you mean 'kafka'?", "blackhole, datagen, delta, filesystem, iceberg, jdbc, kafka, print, "
         "upsert-kafka"),
    ),
    Case(
        "unknown-option",
        kafka(options=(f"{MARK}'scan.startup.mod' = 'earliest-offset'", *SOURCE_OPTIONS)) + PRINT + READ,
        "unknown-option",
        ("'scan.startup.mod'", "Did you mean 'scan.startup.mode'?", "Supported options: ", "topic-pattern"),
    ),
    Case(
        "jaas-that-does-not-parse",
        kafka(options=(f"{MARK}'properties.sasl.jaas.config' = 'username=alice'", *SOURCE_OPTIONS)) + PRINT + READ,
        "security",
        ("'properties.sasl.jaas.config' does not parse", "<LoginModule class> required"),
    ),
    Case(
        "jaas-module-that-needs-a-jvm",
        kafka(
            options=(
                f"{MARK}'properties.sasl.jaas.config' = 'software.amazon.msk.auth.iam.IAMLoginModule required;'",
                *SOURCE_OPTIONS,
            )
        )
        + PRINT
        + READ,
        "security",
        ("AWS MSK IAM authentication", "does not run", "'properties.sasl.mechanism' = 'SCRAM-SHA-512'", "mutual TLS"),
    ),
    Case(
        "jaas-kerberos-module",
        kafka(
            options=(
                f"{MARK}'properties.sasl.jaas.config' = 'com.sun.security.auth.module.Krb5LoginModule required;'",
                *SOURCE_OPTIONS,
            )
        )
        + PRINT
        + READ,
        "security",
        ("'com.sun.security.auth.module.Krb5LoginModule' cannot run outside a JVM", "SCRAM-SHA-512 or OAUTHBEARER"),
    ),
    Case(
        "invalid-enum",
        kafka(options=(f"{MARK}'scan.startup.mode' = 'earliest'", *SOURCE_OPTIONS)) + PRINT + READ,
        "invalid-option-value",
        (
            "'earliest'",
            "'scan.startup.mode'",
            "earliest-offset, latest-offset, group-offsets, timestamp, specific-offsets",
        ),
    ),
    Case(
        "invalid-duration",
        kafka(options=(*SOURCE_OPTIONS, f"{MARK}'scan.topic-partition-discovery.interval' = '5 minuts'"))
        + PRINT
        + READ,
        "invalid-option-value",
        ("'5 minuts'", "'scan.topic-partition-discovery.interval'", "a duration such as '30 s'"),
    ),
    Case(
        "topic-and-pattern",
        kafka(options=(*SOURCE_OPTIONS, f"{MARK}'topic-pattern' = 'orders_.*'")) + PRINT + READ,
        "option-conflict",
        ("Option 'topic' and 'topic-pattern' shouldn't be set together.",),
    ),
    Case(
        "neither-topic-nor-pattern",
        kafka(name=f"{MARK}orders", options=SOURCE_OPTIONS[1:]) + PRINT + READ,
        "missing-option",
        ("Either 'topic' or 'topic-pattern' must be set.",),
    ),
    Case(
        "timestamp-mode-without-millis",
        kafka(options=(*SOURCE_OPTIONS, f"{MARK}'scan.startup.mode' = 'timestamp'")) + PRINT + READ,
        "missing-option",
        ("'scan.startup.timestamp-millis' is required in 'timestamp' startup mode but missing.",),
    ),
    Case(
        "specific-offsets-missing",
        kafka(options=(*SOURCE_OPTIONS, f"{MARK}'scan.startup.mode' = 'specific-offsets'")) + PRINT + READ,
        "missing-option",
        ("'scan.startup.specific-offsets' is required in 'specific-offsets' startup mode but missing.",),
    ),
    Case(
        "specific-offsets-malformed",
        kafka(
            options=(
                *SOURCE_OPTIONS,
                "'scan.startup.mode' = 'specific-offsets'",
                f"{MARK}'scan.startup.specific-offsets' = 'partition:0, offset:42'",
            )
        )
        + PRINT
        + READ,
        "invalid-option-value",
        (
            "Invalid properties 'scan.startup.specific-offsets' should follow the format "
            "'partition:0,offset:42;partition:1,offset:300', but is 'partition:0, offset:42'.",
        ),
    ),
    Case(
        "specific-offsets-several-topics",
        kafka(
            options=(
                "'topic' = 'orders;refunds'",
                *SOURCE_OPTIONS[1:],
                f"{MARK}'scan.startup.mode' = 'specific-offsets'",
                "'scan.startup.specific-offsets' = 'partition:0,offset:42'",
            )
        )
        + PRINT
        + READ,
        "option-conflict",
        ("Currently Kafka source only supports specific offset for single topic.",),
    ),
    Case(
        "round-robin-with-key-fields",
        kafka(
            name="totals",
            options=(
                *SINK_OPTIONS,
                f"{MARK}'sink.partitioner' = 'round-robin'",
                "'key.format' = 'json'",
                "'key.fields' = 'id'",
            ),
        ),
        "option-conflict",
        ("Currently 'round-robin' partitioner only works when option 'key.fields' is not specified.",),
    ),
    Case(
        "exactly-once-without-prefix",
        kafka(name="totals", options=(*SINK_OPTIONS, f"{MARK}'sink.delivery-guarantee' = 'exactly-once'")),
        "missing-option",
        ("sink.transactional-id-prefix must be specified when using DeliveryGuarantee.EXACTLY_ONCE.",),
    ),
    Case(
        "key-prefix-without-except-key",
        kafka(
            columns="k_id BIGINT, amount DOUBLE",
            name="totals",
            options=(
                *SINK_OPTIONS,
                "'key.format' = 'json'",
                "'key.fields' = 'k_id'",
                f"{MARK}'key.fields-prefix' = 'k_'",
            ),
        ),
        "option-conflict",
        (
            "A key prefix is not allowed when option 'value.fields-include' is set to 'ALL'. "
            "Set it to 'EXCEPT_KEY' instead to avoid field overlaps.",
        ),
    ),
    Case(
        "upsert-kafka-without-primary-key",
        kafka(
            name=f"{MARK}totals",
            connector="upsert-kafka",
            options=("'topic' = 'totals'", "'key.format' = 'json'", "'value.format' = 'json'"),
        ),
        "primary-key",
        ("'upsert-kafka' tables require to define a PRIMARY KEY constraint.",),
    ),
    Case(
        "upsert-kafka-without-key-format",
        kafka(
            columns="id BIGINT, amount DOUBLE, PRIMARY KEY (id) NOT ENFORCED",
            name=f"{MARK}totals",
            connector="upsert-kafka",
            options=("'topic' = 'totals'", "'value.format' = 'json'"),
        ),
        "missing-option",
        ("Missing required option 'key.format'", "'upsert-kafka'", "json, csv, raw"),
    ),
    Case(
        "primary-key-on-kafka-json",
        kafka(
            columns="id BIGINT, amount DOUBLE, PRIMARY KEY (id) NOT ENFORCED",
            options=(*SOURCE_OPTIONS[:2], f"{MARK}'format' = 'json'"),
        ),
        "primary-key",
        ("The Kafka table 'orders' with 'json' format doesn't support defining PRIMARY KEY constraint", "upsert-kafka"),
    ),
    Case(
        "group-offsets-without-group-id",
        kafka(options=("'topic' = 'orders'", "'format' = 'json'", f"{MARK}'scan.startup.mode' = 'group-offsets'"))
        + PRINT
        + READ,
        "missing-option",
        ("Property group.id is required when using committed offset for offsets initializer", "properties.group.id"),
    ),
    Case(
        "group-offsets-by-default-without-group-id",
        kafka(name=f"{MARK}orders", options=("'topic' = 'orders'", "'format' = 'json'")) + PRINT + READ,
        "missing-option",
        ("Property group.id is required when using committed offset", "(Flink's default)"),
    ),
    Case(
        "auto-offset-reset-invalid",
        kafka(options=(*SOURCE_OPTIONS, f"{MARK}'properties.auto.offset.reset' = 'smallest'")) + PRINT + READ,
        "invalid-option-value",
        ("'smallest'", "'properties.auto.offset.reset'", "earliest, latest, none"),
    ),
    Case(
        "unsupported-format",
        kafka(options=(f"{MARK}'format' = 'jsonn'", *SOURCE_OPTIONS[:2])) + PRINT + READ,
        "unsupported-format",
        ("Unknown format 'jsonn'. Did you mean 'json'?", "json, csv, raw, avro"),
    ),
    Case(
        "avro-timestamp-precision",
        kafka(columns=f"id BIGINT, amount DOUBLE, {MARK}ts TIMESTAMP(6)", options=AVRO_OPTIONS) + PRINT + READ,
        "unsupported-type",
        ("Column 'ts': Avro does not support TIMESTAMP type with precision: 6",),
    ),
    Case(
        "avro-timestamp-ltz-legacy",
        kafka(columns=f"id BIGINT, amount DOUBLE, {MARK}lt TIMESTAMP_LTZ(3)", options=AVRO_OPTIONS) + PRINT + READ,
        "unsupported-type",
        ("Unsupported to derive Schema for type: TIMESTAMP_LTZ(3)", "'avro.timestamp_mapping.legacy' = 'false'"),
    ),
    Case(
        "avro-map-key",
        kafka(columns=f"id BIGINT, amount DOUBLE, {MARK}m MAP<INT, STRING>", options=AVRO_OPTIONS) + PRINT + READ,
        "unsupported-type",
        ("Avro format doesn't support non-string as key type of map. The key type is: INT",),
    ),
    Case(
        "avro-encoding-unknown",
        kafka(options=(*SOURCE_OPTIONS[:2], "'format' = 'avro'", f"{MARK}'avro.encoding' = 'xml'")) + PRINT + READ,
        "invalid-option-value",
        ("Invalid value 'xml' for option 'avro.encoding': expected one of binary, json.",),
    ),
    Case(
        "avro-confluent-url-missing",
        kafka(options=(*SOURCE_OPTIONS[:2], f"{MARK}'format' = 'avro-confluent'")) + PRINT + READ,
        "missing-option",
        ("'avro-confluent.url'",),
    ),
    Case(
        "avro-confluent-unknown-option",
        kafka(options=(*CONFLUENT_OPTIONS, f"{MARK}'avro-confluent.subjet' = 'orders-value'")) + PRINT + READ,
        "unknown-option",
        ("Did you mean 'avro-confluent.subject'?", "avro-confluent.properties.*"),
    ),
    Case(
        "avro-confluent-schema-mismatch",
        kafka(options=(*CONFLUENT_OPTIONS, f"{MARK}'avro-confluent.schema' = '{CONFLUENT_WRONG_SCHEMA}'"))
        + PRINT
        + READ,
        "invalid-option-value",
        ("'avro-confluent.schema' does not match the table's columns", '"type": ["null", "double"]'),
    ),
    Case(
        "jdbc-database-unsupported",
        kafka()
        + "CREATE TABLE output (id BIGINT, amount DOUBLE) WITH ('connector' = 'jdbc', "
        + f"{MARK}'url' = 'jdbc:mysql://db/x', "
        "'table-name' = 'out');\n" + READ,
        "unsupported-option",
        ("JDBC url 'jdbc:mysql://db/x': only PostgreSQL",),
    ),
    Case(
        "jdbc-type-unsupported",
        kafka() + f"CREATE TABLE output (id BIGINT, {MARK}amount MAP<STRING, DOUBLE>) WITH ('connector' = 'jdbc', "
        "'url' = 'jdbc:postgresql://db/x', 'table-name' = 'out');\n"
        + "INSERT INTO output SELECT id, MAP['a', amount] FROM orders;\n",
        "unsupported-type",
        ("The PostgreSQL dialect doesn't support type: MAP<STRING, DOUBLE> (column 'amount').",),
    ),
    Case(
        "jdbc-updates-without-primary-key",
        kafka()
        + "CREATE TABLE output (id BIGINT, n BIGINT) WITH ('connector' = 'jdbc', 'url' = 'jdbc:postgresql://db/x', "
        "'table-name' = 'out');\n" + f"INSERT INTO {MARK}output SELECT id, COUNT(*) FROM orders GROUP BY id;\n",
        "insert-changelog",
        ("doesn't support consuming update changes", "jdbc, delta or iceberg with a PRIMARY KEY"),
    ),
    Case(
        "delta-updates-without-primary-key",
        kafka()
        + "CREATE TABLE output (id BIGINT, n BIGINT) WITH ('connector' = 'delta', 'table-path' = '/lake/out');\n"
        + f"INSERT INTO {MARK}output SELECT id, COUNT(*) FROM orders GROUP BY id;\n",
        "insert-changelog",
        ("doesn't support consuming update changes", "jdbc, delta or iceberg with a PRIMARY KEY"),
    ),
    Case(
        "delta-type-unsupported",
        kafka() + f"CREATE TABLE output (id BIGINT, {MARK}at TIME(3)) WITH ('connector' = 'delta', "
        "'table-path' = '/lake/out');\n" + "INSERT INTO output SELECT id, TIME '10:00:00' FROM orders;\n",
        "unsupported-type",
        ("A delta table cannot store TIME(3) (column 'at'); cast it to STRING",),
    ),
    Case(
        "delta-path-missing",
        kafka() + f"CREATE TABLE {MARK}output (id BIGINT) WITH ('connector' = 'delta');\n"
        + "INSERT INTO output SELECT id FROM orders;\n",
        "missing-option",
        ("'table-path'",),
    ),
    Case(
        "iceberg-catalog-unsupported",
        kafka() + f"CREATE TABLE {MARK}output (id BIGINT) WITH ('connector' = 'iceberg', 'catalog-name' = 'prod', "
        "'uri' = 'thrift://metastore:9083');\n" + "INSERT INTO output SELECT id FROM orders;\n",
        "unsupported-option",
        ("Iceberg catalog 'catalog-type' = 'hive' is not supported yet", "'catalog-type' = 'hadoop'"),
    ),
    Case(
        "iceberg-warehouse-remote",
        kafka() + "CREATE TABLE output (id BIGINT) WITH ('connector' = 'iceberg', 'catalog-name' = 'c', "
        f"'catalog-type' = 'hadoop', {MARK}'warehouse' = 'hdfs://nn:8020/warehouse');\n"
        + "INSERT INTO output SELECT id FROM orders;\n",
        "unsupported-option",
        ("warehouse 'hdfs://nn:8020/warehouse': only a local directory",),
    ),
    Case(
        "metadata-key-unknown",
        kafka(columns=f"id BIGINT, amount DOUBLE, {MARK}part INT METADATA FROM 'partiton'"),
        "metadata",
        (
            "'partiton'",
            "Did you mean 'partition'?",
            "headers, leader-epoch, offset, partition, timestamp, timestamp-type, topic",
        ),
    ),
    Case(
        "metadata-not-castable",
        kafka(columns=f"id BIGINT, amount DOUBLE, {MARK}hdrs BIGINT METADATA FROM 'headers' VIRTUAL"),
        "metadata",
        ("'hdrs'", "'BIGINT'", "castable from metadata type 'MAP<STRING, BYTES> NOT NULL'"),
    ),
    Case(
        "read-only-metadata-in-sink",
        kafka()
        + kafka(
            name="totals",
            columns=f"id BIGINT, amount DOUBLE, {MARK}off BIGINT METADATA FROM 'offset'",
            options=SINK_OPTIONS,
        )
        + "INSERT INTO totals SELECT id, amount, id FROM orders;\n",
        "metadata",
        ("'off'", "read-only", "VIRTUAL", "headers, timestamp, topic"),
    ),
    Case(
        "watermark-on-missing-column",
        kafka(columns=f"id BIGINT, ts TIMESTAMP(3),\n  WATERMARK FOR {MARK}tss AS tss - INTERVAL '5' SECOND"),
        "unknown-column",
        ("WATERMARK FOR 'tss'", "Did you mean 'ts'?", "Columns: id, ts."),
    ),
    Case(
        "watermark-on-non-timestamp",
        kafka(columns=f"id BIGINT, ts STRING,\n  WATERMARK FOR {MARK}ts AS ts"),
        "watermark",
        ("WATERMARK FOR 'ts'", "TIMESTAMP(3) or TIMESTAMP_LTZ(3)", "STRING"),
    ),
    Case(
        "computed-column-missing-reference",
        kafka(columns=f"id BIGINT, amount DOUBLE, doubled AS {MARK}amout * 2"),
        "unknown-column",
        ("'amout'", "computed column 'doubled'", "Did you mean 'amount'?"),
    ),
    Case(
        "insert-into-unknown-table",
        kafka() + PRINT + f"INSERT INTO {MARK}outptu SELECT id, amount FROM orders;\n",
        "unknown-table",
        ("'outptu' is not defined", "Did you mean 'output'?", "Defined: orders, output."),
    ),
    Case(
        "insert-column-count",
        kafka() + PRINT + f"INSERT INTO {MARK}output SELECT id FROM orders;\n",
        "insert-columns",
        ("the query produces 1 columns (id) but the sink has 2 writable columns (id, amount)",),
    ),
    Case(
        "insert-type-mismatch",
        kafka(columns="id BIGINT, customer STRING, amount DOUBLE")
        + PRINT
        + f"INSERT INTO {MARK}output SELECT customer, amount FROM orders;\n",
        "insert-types",
        ("sink column 'id'", "the query gives STRING ('customer')", "the sink expects BIGINT"),
    ),
    Case(
        "select-unknown-column",
        kafka() + PRINT + f"INSERT INTO output SELECT id, {MARK}amout FROM orders;\n",
        "unknown-column",
        ("'amout'", "Did you mean 'amount'?", "Columns: id, amount."),
    ),
    Case(
        "column-of-two-joined-tables",
        kafka() + kafka(name="refunds") + PRINT
        + f"INSERT INTO output SELECT {MARK}id, refunds.amount FROM orders JOIN refunds ON orders.id = refunds.id;\n",
        "ambiguous-column",
        ("Column 'id' is ambiguous; qualify it: orders.id, refunds.id.",),
    ),
    Case(
        "window-column-a-window-tvf-adds-twice",
        kafka(columns="id BIGINT, amount DOUBLE, ts TIMESTAMP(3), WATERMARK FOR ts AS ts")
        + PRINT
        + "CREATE VIEW minutes AS SELECT window_start, window_time AS rt, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE "
        "orders, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end, window_time;\n"
        + "INSERT INTO output SELECT n, n * 1.5 FROM TABLE(TUMBLE(TABLE minutes, DESCRIPTOR(rt), INTERVAL '2' MINUTE)) "
        f"WHERE {MARK}window_start IS NOT NULL;\n",
        "ambiguous-column",
        ("Column 'window_start' is ambiguous: the window TVF adds it to an input that has it already",),
    ),
    Case(
        "create-table-as-select-of-a-type-not-evident",
        kafka()
        + f"CREATE TABLE {MARK}doubled WITH ('connector' = 'print') AS SELECT id, amount * 2 AS twice FROM orders;\n",
        "ctas-columns",
        (
            "CREATE TABLE doubled AS SELECT: kafka-sql cannot tell the type of twice from the query; declare the "
            "table's columns: CREATE TABLE doubled (id BIGINT, twice <type>) WITH (...) AS SELECT ...",
        ),
    ),
    Case(
        "aggregate-into-append-only-kafka",
        kafka()
        + kafka(name="totals", columns="id BIGINT, n BIGINT", options=SINK_OPTIONS)
        + f"INSERT INTO {MARK}totals SELECT id, COUNT(*) AS n FROM orders GROUP BY id;\n",
        "insert-changelog",
        ("'totals' (kafka) doesn't support consuming update changes", "upsert-kafka"),
    ),
    Case(
        "cast-flink-rejects",
        kafka(columns="id BIGINT, amount DOUBLE, paid BOOLEAN")
        + PRINT
        + f"INSERT INTO output SELECT id, amount FROM orders WHERE CAST({MARK}paid AS DATE) > DATE '2024-01-01';\n",
        "cast",
        ("Flink cannot cast BOOLEAN to DATE in 'CAST(paid AS DATE)'",),
    ),
    Case(
        "cast-number-to-timestamp-in-computed-column",
        kafka(columns=f"id BIGINT, amount DOUBLE, ms BIGINT, ts AS CAST({MARK}ms AS TIMESTAMP(3))") + PRINT + READ,
        "cast",
        ("Flink cannot cast BIGINT to TIMESTAMP(3)", "TO_TIMESTAMP_LTZ(value, precision)"),
    ),
    Case(
        "row-field-unknown",
        kafka(columns="id BIGINT, amount DOUBLE, info ROW<name STRING, age INT>")
        + PRINT
        + f"INSERT INTO output SELECT id, info.age FROM orders WHERE {MARK}orders.info.nam = 'x';\n",
        "unknown-column",
        ("Field 'nam' not found in ROW column 'info'", "Did you mean 'name'?", "Fields: name, age."),
    ),
    # The ROW field names Flink 2.3 refuses (each checked with its validator): a table's name after it is aliased,
    # a field deeper in a ROW that lacks it, a field of a value that is no ROW, a FROM alias whose table lacks the
    # column (even when another table has a ROW column of that name).
    Case(
        "row-field-of-a-table-renamed-by-its-alias",
        kafka(columns="id BIGINT, amount DOUBLE, info ROW<addr ROW<city STRING>>")
        + PRINT
        + f"INSERT INTO output SELECT id, amount FROM orders AS o WHERE {MARK}orders.info.addr.city = 'x';\n",
        "unknown-table",
        ("Unknown table alias or column 'orders' in 'orders.info.addr.city'",),
    ),
    Case(
        "row-field-unknown-nested",
        kafka(columns="id BIGINT, amount DOUBLE, info ROW<addr ROW<city STRING, zip STRING>>")
        + PRINT
        + f"INSERT INTO output SELECT id, amount FROM orders WHERE {MARK}info.addr.cty = 'x';\n",
        "unknown-column",
        ("Field 'cty' not found in ROW column 'info.addr'", "Did you mean 'city'?", "Fields: city, zip."),
    ),
    Case(
        "row-field-of-a-value-that-is-no-row",
        kafka(columns="id BIGINT, amount DOUBLE, info ROW<name STRING>")
        + PRINT
        + f"INSERT INTO output SELECT id, amount FROM orders WHERE {MARK}o.info.name.first = 'x';\n".replace(
            "FROM orders", "FROM orders AS o"
        ),
        "unknown-column",
        ("'info.name' is STRING, not a ROW: it has no field 'first'",),
    ),
    Case(
        "row-field-behind-an-alias-without-that-column",
        kafka(columns="id BIGINT, amount DOUBLE, addr ROW<city STRING>")
        + kafka(columns="id BIGINT, amount DOUBLE", name="other")
        + PRINT
        + f"INSERT INTO output SELECT o.id, o.amount FROM orders AS o JOIN other AS addr ON {MARK}addr.city.x = 'x';\n",
        "unknown-column",
        ("Column 'city' not found in table 'addr'", "Columns: id, amount."),
    ),
    Case(
        "aggregate-of-an-updating-aggregate",
        kafka(columns="id BIGINT, amount DOUBLE")
        + "CREATE TABLE output (id BIGINT, amount DOUBLE, PRIMARY KEY (id) NOT ENFORCED) "
        "WITH ('connector' = 'print');\n"
        + f"INSERT INTO {MARK}output SELECT id, AVG(m) FROM (SELECT id, MAX(amount) AS m FROM orders GROUP BY id) "
        "GROUP BY id;\n",
        "aggregate-input",
        ("which updates its rows", "Aggregate per window"),
    ),
    Case(
        "window-by-processing-time",
        kafka(columns="id BIGINT, amount DOUBLE, pt AS PROCTIME()")
        + "CREATE TABLE output (id BIGINT, amount DOUBLE) WITH ('connector' = 'print');\n"
        + f"INSERT INTO {MARK}output SELECT id, SUM(amount) FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(pt), "
        "INTERVAL '10' SECOND)) GROUP BY id, window_start, window_end;\n",
        "proctime-window",
        ("TUMBLE over DESCRIPTOR(pt), a processing-time attribute", "by event time only"),
    ),
    Case(
        "min-over-upsert-kafka-source",
        kafka(
            columns="id BIGINT, amount DOUBLE, PRIMARY KEY (id) NOT ENFORCED",
            options=("'topic' = 'orders'", "'key.format' = 'json'", "'value.format' = 'json'"),
            connector="upsert-kafka",
        )
        + PRINT
        + f"INSERT INTO {MARK}output SELECT id, MIN(amount) FROM orders GROUP BY id;\n",
        "changelog-source",
        ("aggregates the changelog table 'orders' with MIN", "COUNT, SUM and AVG retract"),
    ),
    Case(
        "regular-outer-join-of-streams",
        kafka()
        + kafka(name="customers", columns="cid BIGINT, name STRING")
        + PRINT
        + f"INSERT INTO {MARK}output SELECT o.id, o.amount FROM orders AS o "
        "LEFT JOIN customers AS c ON o.id = c.cid;\n",
        "unsupported",
        ("A regular LEFT JOIN of two streams is not supported", "interval joins"),
    ),
    Case(
        "match-recognize",
        kafka(columns="id BIGINT, amount DOUBLE, ts TIMESTAMP(3)")
        + PRINT
        + f"INSERT INTO output SELECT * FROM orders MATCH_RECOGNIZE (PARTITION BY {MARK}id ORDER BY ts "
        "MEASURES A.amount AS amount PATTERN (A B) DEFINE A AS A.amount > 0) AS T;\n",
        "unsupported",
        ("MATCH_RECOGNIZE (Flink's row pattern recognition) is not supported by kafka-sql", "OVER windows"),
    ),
    Case(
        "catalog-type-unsupported",
        f"CREATE CATALOG hms WITH ({MARK}'type' = 'hive', 'hive-conf-dir' = '/etc/hive');\n" + kafka() + PRINT + READ,
        "unsupported",
        ("Catalog 'hms': type 'hive' is not supported", "Supported types: generic_in_memory, iceberg, delta-catalog"),
    ),
    Case(
        "catalog-option-unknown",
        f"CREATE CATALOG lake WITH ('type' = 'iceberg', {MARK}'clients' = '4', 'warehouse' = '/tmp/lake');\n"
        + kafka() + PRINT + READ,
        "unsupported-option",
        ("Catalog 'lake' (iceberg): unsupported option(s) clients", "Valid options: cache-enabled", "warehouse"),
    ),
    Case(
        "delta-catalog-hive",
        f"CREATE CATALOG d WITH ('type' = 'delta-catalog', {MARK}'catalog-type' = 'hive');\n" + kafka() + PRINT + READ,
        "unsupported-option",
        ("Catalog 'd' (delta-catalog): 'catalog-type' = 'hive' is not supported; only 'in-memory'",),
    ),
    Case(
        "catalog-unknown",
        kafka() + PRINT + f"{MARK}USE CATALOG lakee;\n" + READ,
        "unknown-catalog",
        ("A catalog with name 'lakee' does not exist. Catalogs: default_catalog.",),
    ),
    Case(
        "database-unknown",
        "CREATE CATALOG lake WITH ('type' = 'generic_in_memory');\n" + kafka() + PRINT + f"{MARK}USE lake.shop;\n"
        + READ,
        "unknown-database",
        ("A database with name 'shop' does not exist in catalog 'lake'. Databases: default.",),
    ),
    Case(
        "kafka-table-in-iceberg-catalog",
        "CREATE CATALOG lake WITH ('type' = 'iceberg', 'catalog-type' = 'hadoop', 'warehouse' = '/tmp/lake');\n"
        "USE CATALOG lake;\n"
        + kafka().replace("'connector'", f"{MARK}'connector'", 1) + "USE CATALOG default_catalog;\n" + PRINT + READ,
        "unsupported-option",
        ("created in the iceberg catalog 'lake', whose tables are Iceberg tables",),
    ),
    Case(
        "drop-unknown-table",
        kafka() + f"DROP TABLE {MARK}ordrs;\n",
        "unknown-table",
        ("Cannot drop table 'ordrs'", "Defined: orders."),
    ),
    Case(
        "drop-a-table-an-earlier-insert-reads",
        kafka() + PRINT + READ + f"DROP TABLE {MARK}orders;\n",
        "in-use",
        ("Cannot drop table 'orders': the INSERT INTO 'output' at line", "remove this DROP"),
    ),
    Case(
        "drop-a-table-an-earlier-insert-reads-through-a-view",
        kafka()
        + "CREATE VIEW big AS SELECT * FROM orders WHERE amount > 100;\n"
        + PRINT
        + "INSERT INTO output SELECT id, amount FROM big;\n"
        + f"DROP TABLE IF EXISTS {MARK}orders;\n",
        "in-use",
        ("Cannot drop table 'orders': the INSERT INTO 'output' at line",),
    ),
    Case(
        "rename-the-table-an-earlier-insert-writes",
        kafka() + PRINT + READ + f"{MARK}ALTER TABLE output RENAME TO totals;\n",
        "in-use",
        ("Cannot rename 'output': the INSERT INTO 'output' at line", "rename it in its CREATE statement"),
    ),
]


def locate(text: str) -> tuple[str, int, int]:
    """`text` without its MARK, and the 1-based line and column where the MARK was."""
    offset = text.index(MARK)
    line = text.count("\n", 0, offset) + 1
    return text.replace(MARK, "", 1), line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def templated(sql: str) -> str:
    """The case as a template: a header of Jinja above it and the brokers from a variable, which renders
    the plain case's SQL with every line and some columns moved."""
    return TEMPLATE_HEADER + sql.replace("localhost:9092", "{{ var('brokers') }}")


@pytest.mark.parametrize("through_template", [False, True], ids=["plain", "templated"])
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_rule(case: Case, through_template: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text, line, column = locate(templated(case.sql) if through_template else case.sql)
    path = tmp_path / "pipeline.sql"
    path.write_text(text, encoding="utf-8")

    code = main(["validate", str(path), "--format", "json", "--var", "brokers=localhost:9092"])

    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    assert code == 1
    errors = [d for d in json.loads(captured.out)["diagnostics"] if d["severity"] == "error"]
    assert len(errors) == 1, errors
    [error] = errors
    assert (error["file"], error["line"], error["column"], error["code"]) == (str(path), line, column, case.code)
    for fragment in case.fragments:
        assert fragment in error["message"]


def test_every_error_of_a_file_is_reported_in_file_order(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "pipeline.sql"
    path.write_text(
        kafka(options=(*SOURCE_OPTIONS, "'scan.startup.mode' = 'earliest'", "'sink.partitioner' = 'none'"))
        + PRINT
        + "INSERT INTO output SELECT id, amout FROM orders;\n",
        encoding="utf-8",
    )

    assert main(["validate", str(path), "--format", "json"]) == 1

    found = [(d["line"], d["code"]) for d in json.loads(capsys.readouterr().out)["diagnostics"]]
    assert found == [(7, "invalid-option-value"), (8, "invalid-option-value"), (11, "unknown-column")]


def test_valid_pipeline_exits_0_and_says_ok(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "pipeline.sql"
    path.write_text(kafka() + PRINT + READ, encoding="utf-8")

    assert main(["validate", str(path)]) == 0

    assert "OK: 1 file(s) valid." in capsys.readouterr().err


def test_insert_values_is_checked_like_a_query(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "pipeline.sql"
    path.write_text(PRINT + "INSERT INTO output VALUES (1, 2.5), (2, 3.0);\nINSERT INTO output VALUES ('x', 1.0);\n")

    assert main(["validate", str(path), "--format", "json"]) == 1

    [error] = json.loads(capsys.readouterr().out)["diagnostics"]
    assert (error["line"], error["code"]) == (3, "insert-types")
    assert "the query gives STRING" in error["message"]


def test_repeated_output_names_are_positional(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`SELECT amount, amount` produces two columns (Flink names the second `amount0`), and CAST(...) is
    an unnamed expression, not the column it casts."""
    path = tmp_path / "pipeline.sql"
    path.write_text(
        kafka()
        + PRINT
        + "INSERT INTO output SELECT amount, amount FROM orders;\n"
        + "INSERT INTO output SELECT CAST(amount AS BIGINT), amount FROM orders;\n",
        encoding="utf-8",
    )

    assert main(["validate", str(path), "--format", "json"]) == 1

    [error] = json.loads(capsys.readouterr().out)["diagnostics"]
    assert (error["line"], error["code"]) == (9, "insert-types")
    assert "the query gives DOUBLE ('amount')" in error["message"]


def test_tables_no_earlier_insert_uses_can_be_dropped_after_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "pipeline.sql"
    path.write_text(
        kafka()
        + PRINT
        + "INSERT INTO output WITH orders AS (SELECT 1 AS id, 2.0 AS amount) SELECT id, amount FROM orders;\n"
        + "DROP TABLE orders;\n",
        encoding="utf-8",
    )
    assert main(["validate", str(path), "--format", "json", "--var", "brokers=localhost:9092"]) == 0
    assert json.loads(capsys.readouterr().out)["diagnostics"] == []


def test_dropped_objects_are_gone_and_if_exists_is_quiet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "pipeline.sql"
    path.write_text(
        kafka()
        + "CREATE VIEW big AS SELECT * FROM orders WHERE amount > 100;\n"
        + "DROP VIEW big;\nDROP TABLE IF EXISTS nothing;\nDROP TEMPORARY VIEW IF EXISTS nothing;\n"
        + PRINT
        + "INSERT INTO output SELECT id, amount FROM big;\n",
        encoding="utf-8",
    )

    assert main(["validate", str(path), "--format", "json"]) == 1

    [error] = json.loads(capsys.readouterr().out)["diagnostics"]
    assert (error["line"], error["column"], error["code"]) == (13, 43, "unknown-table")
    assert "Table or view 'big' is not defined" in error["message"]


def test_with_items_are_visible_in_their_own_query_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "pipeline.sql"
    path.write_text(
        kafka()
        + PRINT
        + "INSERT INTO output WITH orders AS (SELECT id FROM orders) SELECT id, 1.0 FROM orders;\n"
        + "INSERT INTO output SELECT id, amount FROM orders;\n"
        + "INSERT INTO output WITH big AS (SELECT id, amount FROM orders WHERE amount > 9) "
        "SELECT id, amount FROM big;\n"
        + "INSERT INTO output SELECT id, amount FROM big;\n",
        encoding="utf-8",
    )

    assert main(["validate", str(path), "--format", "json"]) == 1

    [error] = json.loads(capsys.readouterr().out)["diagnostics"]
    assert (error["line"], error["code"]) == (12, "unknown-table")
    assert "Table or view 'big' is not defined" in error["message"]


@pytest.mark.parametrize(
    ("query_type", "sink_type", "accepted"),
    [
        ("INT", "BIGINT", True),
        ("BIGINT", "INT", False),
        ("DOUBLE", "DECIMAL(10, 2)", True),
        ("DECIMAL(10, 2)", "FLOAT", True),
        ("DOUBLE", "FLOAT", False),
        ("DECIMAL(10, 2)", "BIGINT", False),
        ("TIMESTAMP_LTZ(3)", "TIMESTAMP(3)", True),
        ("TIMESTAMP(3)", "TIMESTAMP_LTZ(3)", True),
        ("TIMESTAMP(3)", "DATE", True),
        ("DATE", "TIMESTAMP(3)", False),
        ("STRING", "VARCHAR(10)", True),
        ("STRING", "BYTES", False),
        ("BOOLEAN", "STRING", False),
    ],
)
def test_insert_accepts_flinks_implicit_casts(
    query_type: str, sink_type: str, accepted: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "pipeline.sql"
    path.write_text(
        kafka(columns=f"id BIGINT, v {query_type}")
        + f"CREATE TABLE output (v {sink_type}) WITH ('connector' = 'print');\n"
        + "INSERT INTO output SELECT v FROM orders;\n",
        encoding="utf-8",
    )

    code = main(["validate", str(path), "--format", "json"])

    codes = [d["code"] for d in json.loads(capsys.readouterr().out)["diagnostics"]]
    assert (code, codes) == ((0, []) if accepted else (1, ["insert-types"]))


def test_alter_applies_in_order(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "pipeline.sql"
    path.write_text(
        "CREATE TABLE gen (id BIGINT, v STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '5');\n"
        "ALTER TABLE gen SET ('number-of-rows' = '7', 'rows-per-secnd' = '1');\n"
        "CREATE TABLE p (id BIGINT, v STRING) WITH ('connector' = 'print');\n"
        "ALTER TABLE p RENAME TO output;\n"
        "CREATE VIEW ids AS SELECT id FROM gen;\n"
        "ALTER VIEW ids AS SELECT id, v FROM gen;\n"
        "INSERT INTO output SELECT * FROM ids;\n",
        encoding="utf-8",
    )

    assert main(["validate", str(path), "--format", "json"]) == 1

    [error] = json.loads(capsys.readouterr().out)["diagnostics"]
    assert (error["line"], error["column"], error["code"]) == (2, 46, "unknown-option")
    assert "Did you mean 'rows-per-second'?" in error["message"]


def test_statements_without_effect_are_warned_about(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "pipeline.sql"
    path.write_text(
        PRINT + "SHOW TABLES;\nSHOW CATALOGS;\n  DESCRIBE output;\n",
        encoding="utf-8",
    )

    assert main(["validate", str(path), "--format", "json"]) == 0

    diagnostics = json.loads(capsys.readouterr().out)["diagnostics"]
    found = [(d["line"], d["column"], d["severity"], d["code"]) for d in diagnostics]
    assert found == [(line, column, "warning", "ignored-statement") for line, column in ((2, 1), (3, 1), (4, 3))]


def test_a_select_alone_is_checked_as_flink_checks_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Flink's SQL client runs a SELECT alone, so it refuses one that reads a table the file never created or
    calls an undeclared function; kafka-sql checks it likewise and warns that it does not run it."""
    path = tmp_path / "pipeline.sql"
    path.write_text(
        kafka() + "SELECT id FROM orders;\nSELECT * FROM clicks;\nSELECT id, nope(amount) FROM orders;\n",
        encoding="utf-8",
    )
    first = kafka().count("\n") + 1

    assert main(["validate", str(path), "--format", "json"]) == 1

    diagnostics = json.loads(capsys.readouterr().out)["diagnostics"]
    found = [(d["line"], d["severity"], d["code"]) for d in diagnostics]
    assert found == [
        (first, "warning", "select-not-run"),
        (first + 1, "warning", "select-not-run"),
        (first + 1, "error", "unknown-table"),
        (first + 2, "warning", "select-not-run"),
        (first + 2, "error", "unknown-function"),
    ]


def test_alter_table_reset_restores_defaults(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The misspelt key SET adds is removed by RESET, so the file validates; 'connector' cannot be reset."""
    path = tmp_path / "pipeline.sql"
    path.write_text(
        "CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-secnd' = '1');\n"
        "ALTER TABLE gen RESET ('rows-per-secnd');\n"
        "CREATE TABLE output (id BIGINT) WITH ('connector' = 'print');\n"
        "INSERT INTO output SELECT id FROM gen;\n",
        encoding="utf-8",
    )
    assert main(["validate", str(path), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["diagnostics"] == []

    path.write_text(
        path.read_text(encoding="utf-8") + "ALTER TABLE output RESET ('connector');\nALTER TABLE gen RESET ();\n",
        encoding="utf-8",
    )
    assert main(["validate", str(path), "--format", "json"]) == 1
    found = [(d["line"], d["column"], d["message"]) for d in json.loads(capsys.readouterr().out)["diagnostics"]]
    assert found == [
        (5, 27, "ALTER TABLE RESET does not support changing 'connector'."),
        (6, 1, "ALTER TABLE RESET does not support empty key."),
    ]


def test_reserved_words_as_unquoted_names_are_warned_about(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Flink's parser refuses its reserved words as unquoted names (checked with Flink 2.3: `user STRING` in CREATE
    TABLE, `AS value`, `src.value`); the file still validates, each one is a located warning, and what Flink
    accepts is not: quoted names, non-reserved keywords (`action`), and a bare `user`, which Flink reads as a column."""
    path = tmp_path / "pipeline.sql"
    path.write_text(
        "CREATE TABLE src (user STRING, `value` STRING, action INT) WITH ('connector' = 'datagen');\n"
        "CREATE TABLE output (u STRING, v STRING, a INT) WITH ('connector' = 'blackhole');\n"
        "INSERT INTO output SELECT user, src.value, action AS year FROM src;\n",
        encoding="utf-8",
    )

    assert main(["validate", str(path), "--format", "json"]) == 0

    diagnostics = json.loads(capsys.readouterr().out)["diagnostics"]
    found = [(d["line"], d["column"], d["severity"], d["code"]) for d in diagnostics]
    assert found == [(1, 19, "warning", "reserved-word"), (3, 37, "warning", "reserved-word"),
                     (3, 54, "warning", "reserved-word")]
    assert diagnostics[0]["message"].endswith("quote it: `user`")
    assert diagnostics[2]["message"].endswith("quote it: `year`")


def test_a_query_over_a_window_aggregate_reads_the_aggregates_columns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A derived table whose FROM is a window TVF has its SELECT's columns (a window Top-N ranks `total`, a window
    join reads `cnt`), not the TVF's; a column it lacks is named with the ones it has."""
    path = tmp_path / "pipeline.sql"
    windowed = (
        "(SELECT user_id, window_start, window_end, COUNT(*) AS cnt FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), "
        "INTERVAL '1' MINUTE)) GROUP BY user_id, window_start, window_end)"
    )
    source = (
        "CREATE TABLE src (user_id STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH ('connector' = 'datagen');\n"
        "CREATE TABLE output (u STRING, n BIGINT) WITH ('connector' = 'blackhole');\n"
    )
    path.write_text(
        source + f"INSERT INTO output SELECT L.user_id, R.cnt FROM {windowed} L JOIN {windowed} R "
        "ON L.user_id = R.user_id AND L.window_start = R.window_start AND L.window_end = R.window_end;\n",
        encoding="utf-8",
    )
    assert main(["validate", str(path), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["diagnostics"] == []

    path.write_text(source + f"INSERT INTO output SELECT user_id, cnts FROM {windowed};\n", encoding="utf-8")
    assert main(["validate", str(path), "--format", "json"]) == 1
    (diagnostic,) = json.loads(capsys.readouterr().out)["diagnostics"]
    assert diagnostic["message"] == (
        "Column 'cnts' not found in any table of the FROM clause. Did you mean 'cnt'? Columns: user_id, "
        "window_start, window_end, cnt."
    )
