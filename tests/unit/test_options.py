"""The option framework: value parsing, unknown keys, typed resolution, the generated reference."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from connector.catalog.model import Column, ColumnKind, Table
from connector.connectors import registry
from connector.connectors.kafka.options import KafkaOptions
from connector.connectors.registry import format_options, resolve, validate_table
from connector.diagnostics import PipelineError, Position
from connector.formats import registry as format_registry
from connector.formats.json import JsonOptions
from connector.options.metadata import castable, parse_flink_type
from connector.options.reference import render_markdown
from connector.options.types import BOOLEAN, CHAR, DURATION, ENUM, INT, LIST, LONG, MEMORY_SIZE

FILE = "pipeline.sql"
KAFKA = {
    "connector": "kafka",
    "topic": "orders",
    "properties.bootstrap.servers": "localhost:9092",
    "properties.group.id": "g1",
    "format": "json",
}


def make_table(options: dict[str, str]) -> Table:
    """Columns id BIGINT, name STRING on lines 2-3; then one option per line, keys at column 5."""
    table = Table("orders", Position(FILE, 1, 1))
    for line, (name, type_sql) in enumerate([("id", "BIGINT"), ("name", "STRING")], start=2):
        table.columns.append(Column(name, ColumnKind.PHYSICAL, Position(FILE, line, 3), type_sql=type_sql))
    for line, (key, value) in enumerate(options.items(), start=4):
        table.options[key] = value
        table.option_positions[key] = Position(FILE, line, 5)
    return table


# -- value parsing ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("5 min", timedelta(minutes=5)),
        ("30 s", timedelta(seconds=30)),
        ("30s", timedelta(seconds=30)),
        ("60sec", timedelta(seconds=60)),
        ("10 seconds", timedelta(seconds=10)),
        ("1 h", timedelta(hours=1)),
        ("2 hours", timedelta(hours=2)),
        ("500 ms", timedelta(milliseconds=500)),
        ("3 millis", timedelta(milliseconds=3)),
        ("0 ms", timedelta(0)),
        ("1min", timedelta(minutes=1)),
        ("2 d", timedelta(days=2)),
        ("1 day", timedelta(days=1)),
        ("250", timedelta(milliseconds=250)),
        (" 7 MIN ", timedelta(minutes=7)),
        ("1500 µs", timedelta(microseconds=1500)),
    ],
)
def test_flink_durations(text: str, expected: timedelta) -> None:
    assert DURATION.parse(text, "k") == expected


@pytest.mark.parametrize("text", ["5 minutes later", "-1 s", "1.5 s", "min", "", "5 mins"])
def test_invalid_durations_show_the_expected_form(text: str) -> None:
    with pytest.raises(ValueError, match="expected a duration") as error:
        DURATION.parse(text, "scan.topic-partition-discovery.interval")
    message = str(error.value)
    assert f"Invalid value '{text}' for option 'scan.topic-partition-discovery.interval'" in message
    assert "a bare number means milliseconds" in message and "min/m/minute/minutes" in message


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (timedelta(minutes=5), "5 min"),
        (timedelta(seconds=90), "90 s"),
        (timedelta(0), "0 ms"),
        (timedelta(days=1), "1 d"),
    ],
)
def test_durations_render_as_users_write_them(value: timedelta, text: str) -> None:
    assert DURATION.render(value) == text
    assert DURATION.parse(text, "k") == value


def test_enums_match_case_insensitively_and_list_choices_when_wrong() -> None:
    modes = ENUM("earliest-offset", "latest-offset")
    assert modes.parse("LATEST-OFFSET", "k") == "latest-offset"
    assert ENUM("ALL", "EXCEPT_KEY").parse("except-key", "k") == "EXCEPT_KEY"
    with pytest.raises(ValueError) as error:
        modes.parse("latest", "scan.startup.mode")
    assert str(error.value) == (
        "Invalid value 'latest' for option 'scan.startup.mode': expected one of earliest-offset, "
        "latest-offset. Did you mean 'latest-offset'?"
    )


def test_booleans() -> None:
    assert BOOLEAN.parse("TRUE", "k") is True
    assert BOOLEAN.parse("false", "k") is False
    with pytest.raises(ValueError, match="expected 'true' or 'false'"):
        BOOLEAN.parse("yes", "k")


def test_integers_and_longs() -> None:
    assert INT.parse(" 42 ", "k") == 42
    assert LONG.parse("1700000000000", "k") == 1_700_000_000_000
    with pytest.raises(ValueError, match=r"expected an integer \(Integer\)"):
        INT.parse("1.5", "k")
    with pytest.raises(ValueError, match="between -2147483648 and 2147483647"):
        INT.parse("1700000000000", "k")


def test_memory_sizes_lists_and_characters() -> None:
    assert MEMORY_SIZE.parse("128mb", "k") == 128 << 20
    assert MEMORY_SIZE.parse("1 GB", "k") == 1 << 30
    assert MEMORY_SIZE.parse("512", "k") == 512
    with pytest.raises(ValueError, match="expected a memory size"):
        MEMORY_SIZE.parse("12 parsecs", "k")
    assert LIST.parse("a; b;;c", "k") == ["a", "b", "c"]
    assert CHAR(unescape=True).parse("\\t", "k") == "\t"
    assert CHAR(unescape=True).parse("\\u0001", "k") == "\x01"
    with pytest.raises(ValueError, match="must be a string with single character"):
        CHAR().parse("\\t", "csv.quote-character")


# -- connectors and keys ----------------------------------------------------------------------------


def test_unknown_connector_suggests_and_lists_connectors() -> None:
    table = make_table({**KAFKA, "connector": "kafak"})
    [d] = validate_table(table)
    assert (d.code, d.line, d.column) == ("unknown-connector", 4, 5)
    assert d.message == (
        "Unknown connector 'kafak'. Did you mean 'kafka'? "
        "Available connectors: blackhole, datagen, delta, filesystem, iceberg, jdbc, kafka, print, upsert-kafka."
    )


def test_table_without_connector() -> None:
    [d] = validate_table(make_table({"topic": "x"}))
    assert (d.code, d.line, d.column) == ("missing-option", 1, 1)
    assert "no 'connector' option" in d.message and "kafka, print" in d.message


def test_unknown_key_is_reported_at_the_key_with_suggestion_and_valid_keys() -> None:
    table = make_table({**KAFKA, "scan.startup.mod": "earliest-offset"})
    [d] = validate_table(table)
    assert (d.code, d.line, d.column) == ("unknown-option", 9, 5)
    assert d.message.startswith(
        "Unsupported option 'scan.startup.mod' for connector 'kafka'. Did you mean 'scan.startup.mode'? "
        "Supported options: connector, format, "
    )
    assert "scan.topic-partition-discovery.interval" in d.message and d.message.endswith(
        "properties.*, json.*."
    )


def test_client_properties_pass_through_untyped() -> None:
    table = make_table(
        {**KAFKA, "properties.security.protocol": "SASL_SSL", "properties.sasl.mechanism": "PLAIN",
         "properties.sasl.jaas.config": 'org.apache.kafka.common.security.plain.PlainLoginModule required '
                                        'username="a" password="b";',
         "properties.max.poll.records": "50"}
    )
    assert validate_table(table) == []
    properties = resolve(table).properties
    assert properties["security.protocol"] == "SASL_SSL"
    assert properties["bootstrap.servers"] == "localhost:9092" and properties["max.poll.records"] == "50"


def test_an_old_scala_client_setting_is_a_warning_and_reaches_no_client() -> None:
    """Flink passes 'properties.zookeeper.connect' on and Kafka's Java clients ignore it; librdkafka would refuse
    it, so it is dropped, with a warning saying it does nothing."""
    table = make_table({**KAFKA, "properties.zookeeper.connect": "localhost:2181"})
    [d] = validate_table(table)
    assert (d.severity, d.code) == ("warning", "ignored-property")
    assert "'properties.zookeeper.connect' is a setting of Kafka's old Scala clients" in d.message
    from connector.connectors.kafka.settings import SourceSettings

    options = {**KAFKA, "properties.zookeeper.connect": "localhost:2181", "topic": "t"}
    assert "zookeeper.connect" not in SourceSettings.from_options(options).client_config("reader")


def test_a_sasl_mechanism_librdkafka_lacks_is_reported_at_validate() -> None:
    """Kafka's default mechanism is GSSAPI (Kerberos), which this librdkafka build does not have."""
    [d] = validate_table(make_table({**KAFKA, "properties.security.protocol": "SASL_SSL"}))
    assert d.code == "unknown-property"
    assert "'properties.sasl.mechanism': 'GSSAPI' is not a SASL mechanism" in d.message
    assert "PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER (Kafka's default, GSSAPI, is Kerberos)" in d.message
    [d] = validate_table(make_table({**KAFKA, "properties.security.protocol": "SASL_SSL",
                                     "properties.sasl.mechanism": "SCRAM-SHA-1"}))
    assert "'SCRAM-SHA-1' is not a SASL mechanism" in d.message


def test_an_oidc_login_without_its_token_endpoint_is_reported_at_validate() -> None:
    """OAUTHBEARER with a client id and secret is librdkafka's OpenID Connect client-credentials flow, which needs
    the provider's token endpoint; without it the run could not log in."""
    jaas = ('org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="kafka-sql" '
            'clientSecret="s3cret-value";')  # fmt: skip
    [d] = validate_table(make_table({**KAFKA, "properties.security.protocol": "SASL_SSL",
                                     "properties.sasl.mechanism": "OAUTHBEARER", "properties.sasl.jaas.config": jaas}))
    assert d.code == "unknown-property"
    assert d.message == (
        "'properties.sasl.oauthbearer.token.endpoint.url': `sasl.oauthbearer.token.endpoint.url` is mandatory when "
        "`sasl.oauthbearer.method=oidc` is set."
    )


def test_invalid_value_is_reported_at_its_key() -> None:
    table = make_table({**KAFKA, "scan.topic-partition-discovery.interval": "5 minz"})
    [d] = validate_table(table)
    assert (d.code, d.line, d.column) == ("invalid-option-value", 9, 5)
    assert "'5 minz'" in d.message and "'scan.topic-partition-discovery.interval'" in d.message


# -- typed resolution -------------------------------------------------------------------------------


def test_resolution_applies_defaults_and_types() -> None:
    resolved = resolve(make_table({**KAFKA, "scan.topic-partition-discovery.interval": "30 s"}))
    assert resolved.get(KafkaOptions.SCAN_STARTUP_MODE) == "group-offsets"
    assert resolved.get(KafkaOptions.SCAN_BOUNDED_MODE) == "unbounded"
    assert resolved.get(KafkaOptions.PARTITION_DISCOVERY_INTERVAL) == timedelta(seconds=30)
    assert resolved.get(KafkaOptions.TOPIC) == ["orders"]
    assert resolved.get(KafkaOptions.KEY_FIELDS) == []
    assert resolved.get(KafkaOptions.VALUE_FORMAT) == "json"
    assert resolved.get(KafkaOptions.SCAN_STARTUP_TIMESTAMP_MILLIS) is None
    assert resolved.require(KafkaOptions.DELIVERY_GUARANTEE) == "at-least-once"
    assert resolved.is_set(KafkaOptions.VALUE_FORMAT) and not resolved.is_set(KafkaOptions.SCAN_STARTUP_MODE)
    assert resolved.spelling(KafkaOptions.VALUE_FORMAT.key) == "format"


def test_asking_a_connector_for_an_option_it_does_not_have_is_a_programming_error() -> None:
    resolved = resolve(make_table({"connector": "print"}))
    with pytest.raises(KeyError, match="'topic' is not an option of connector 'print'"):
        resolved.get(KafkaOptions.TOPIC)


def test_resolve_refuses_invalid_values_and_unknown_connectors() -> None:
    with pytest.raises(PipelineError) as error:
        resolve(make_table({**KAFKA, "scan.startup.mode": "earliest"}))
    assert [d.code for d in error.value.diagnostics] == ["invalid-option-value"]
    with pytest.raises(PipelineError) as error:
        resolve(make_table({"connector": "kafka2"}))
    assert [d.code for d in error.value.diagnostics] == ["unknown-connector"]


def test_format_options_for_value_and_key() -> None:
    table = make_table(
        {
            **KAFKA,
            "key.format": "csv",
            "key.fields": "id",
            "key.csv.field-delimiter": "|",
            "json.fail-on-missing-field": "true",
        }
    )
    assert validate_table(table) == []
    fmt, values = format_options(table, "value") or ("", {})
    assert fmt == "json"
    assert values[JsonOptions.FAIL_ON_MISSING_FIELD.key] is True
    assert values[JsonOptions.MAP_NULL_KEY_LITERAL.key] == "null"
    key_fmt, key_values = format_options(table, "key") or ("", {})
    assert (key_fmt, key_values["field-delimiter"], key_values["quote-character"]) == ("csv", "|", '"')
    assert format_options(make_table(KAFKA), "key") is None


# -- metadata type compatibility --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "target", "ok"),
    [
        ("TIMESTAMP_LTZ(3) NOT NULL", "BIGINT", True),
        ("TIMESTAMP(3) WITH LOCAL TIME ZONE", "TIMESTAMP(3)", True),
        ("INT NOT NULL", "MAP<STRING, BYTES>", False),
        ("MAP<STRING, BYTES> NOT NULL", "MAP<VARBINARY, BYTES>", True),
        ("MAP<STRING, BYTES>", "STRING", True),
        ("BIGINT", "TIMESTAMP(3)", False),
        ("BIGINT", "TIMESTAMP_LTZ(3)", True),
        ("ARRAY<ROW<key STRING, value BYTES>>", "ARRAY<ROW<k STRING, v STRING>>", True),
        ("ARRAY<ROW<key STRING, value BYTES>>", "ARRAY<ROW<k STRING>>", False),
        ("STRING", "DECIMAL(10, 2)", True),
        ("DATE", "BOOLEAN", False),
    ],
)
def test_castability_follows_flink(source: str, target: str, ok: bool) -> None:
    parsed_source, parsed_target = parse_flink_type(source), parse_flink_type(target)
    assert parsed_source is not None and parsed_target is not None
    assert castable(parsed_source, parsed_target) is ok


def test_unknown_type_text_is_not_parsed() -> None:
    assert parse_flink_type("GEOMETRY") is None
    assert parse_flink_type("MAP<STRING") is None


# -- the generated reference ------------------------------------------------------------------------


def test_committed_options_reference_is_up_to_date() -> None:
    committed = Path(__file__).resolve().parents[2] / "docs" / "options.md"
    assert committed.read_text(encoding="utf-8") == render_markdown(), (
        "docs/options.md is stale: run `python -m connector.options.reference > docs/options.md`"
    )


def test_reference_documents_every_declared_option() -> None:
    text = render_markdown()
    for factory in registry.factories().values():
        assert f"### `{factory.identifier}`" in text
        for option in factory.options:
            assert f"`{option.key}`" in text
    for fmt in format_registry.formats():
        for option in fmt.options:
            assert f"`{fmt.identifier}.{option.key}`" in text
    assert "when 'scan.startup.mode' = 'timestamp'" in text
    assert "**Spark-only.** Spark's maxOffsetsPerTrigger" in text
    assert "`sink.delivery-guarantee` (deprecated: `sink.semantic`)" in text
