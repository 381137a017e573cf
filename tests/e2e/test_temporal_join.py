"""Event-time temporal joins (`FOR SYSTEM_TIME AS OF` the stream's rowtime, against a versioned table): what
`validate` refuses of them, with Flink's reasons. Their results are compared with Flink's in the conformance case
`temporal_join`."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from support.commands import run
from support.topics import read_topic

from connector.sql.frontend import compile_file

PIPELINE = """
CREATE TABLE orders (id INT, currency STRING, amount DOUBLE, order_time TIMESTAMP(3),
  WATERMARK FOR order_time AS order_time) WITH (
  'connector' = 'kafka', 'topic' = 'o', 'properties.bootstrap.servers' = 'x', 'format' = 'json',
  'scan.startup.mode' = 'earliest-offset');
CREATE TABLE rates (currency STRING, rate DOUBLE, update_time TIMESTAMP(3){rates_key}{rates_watermark}) WITH (
  'connector' = 'upsert-kafka', 'topic' = 'r', 'properties.bootstrap.servers' = 'x',
  'key.format' = 'json', 'value.format' = 'json');
CREATE TABLE converted (id INT, amount DOUBLE) WITH ('connector' = 'print');
INSERT INTO converted SELECT {selected} FROM orders AS o {join} rates FOR SYSTEM_TIME AS OF {as_of} AS r ON {on};
"""
GOOD = {
    "rates_key": ", PRIMARY KEY (currency) NOT ENFORCED",
    "rates_watermark": ", WATERMARK FOR update_time AS update_time",
    "selected": "o.id, o.amount * r.rate", "join": "JOIN", "as_of": "o.order_time", "on": "o.currency = r.currency",
}  # fmt: skip


def _errors(tmp_path: Path, **parts: str) -> list[str]:
    path = tmp_path / "p.sql"
    path.write_text(PIPELINE.format(**{**GOOD, **parts}))
    return [d.message for d in compile_file(path).errors]


def test_validate_accepts_a_temporal_join_as_flink_writes_it_and_explain_shows_it(tmp_path: Path) -> None:
    from connector.planning.explain import explain, render_text

    assert _errors(tmp_path) == []
    assert _errors(tmp_path, join="LEFT JOIN", on="r.currency = o.currency") == []
    compiled = compile_file(tmp_path / "p.sql")
    assert compiled.pipeline is not None
    text = render_text(explain(compiled.pipeline, "p"))
    assert (
        "temporal join view __temporal_1: orders AS o LEFT JOIN the versions of rates AS r ON o.currency = "
        "r.currency, as of order_time (versions by update_time; rows wait for the watermark)" in text
    )
    assert 'spark sql: SELECT `o__id`, `o__amount` * `r__rate` FROM __temporal_1' in text


@pytest.mark.parametrize(
    ("parts", "expected"),
    [
        ({"rates_key": ""}, "The versioned table 'rates' of a temporal join needs a PRIMARY KEY and a WATERMARK"),
        ({"rates_watermark": ""}, "needs a PRIMARY KEY and a WATERMARK"),
        ({"as_of": "o.id"}, "is AS OF the rowtime (the WATERMARK column) of 'orders'"),
        ({"on": "o.currency = r.currency AND r.rate > 1"}, "equalities between the two tables' columns"),
        ({"on": "o.id = r.rate"}, "that cover the PRIMARY KEY of 'rates' (currency)"),
        ({"selected": "id, amount"}, "Name the columns of a temporal join with their table's alias"),
        ({"join": "RIGHT JOIN"}, "a temporal join is a JOIN or LEFT JOIN ... ON"),
    ],
)
def test_validate_refuses_what_is_no_temporal_join_flink_runs(
    tmp_path: Path, parts: dict[str, str], expected: str
) -> None:
    messages = _errors(tmp_path, **parts)
    assert any(expected in m for m in messages), messages


RUN = """
CREATE TABLE orders (id INT, currency STRING, order_time TIMESTAMP(3), WATERMARK FOR order_time AS order_time) WITH (
  'connector' = 'kafka', 'topic' = '{{ var("orders") }}', 'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset',
  'scan.bounded.end-watermark' = 'false', 'format' = 'json');
CREATE TABLE rates (currency STRING, rate DOUBLE, update_time TIMESTAMP(3), PRIMARY KEY (currency) NOT ENFORCED,
  WATERMARK FOR update_time AS update_time) WITH (
  'connector' = 'upsert-kafka', 'topic' = '{{ var("rates") }}', 'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.bounded.mode' = 'latest-offset', 'scan.bounded.end-watermark' = 'false',
  'key.format' = 'json', 'value.format' = 'json');
CREATE TABLE converted (id INT, rate DOUBLE) WITH (
  'connector' = 'kafka', 'topic' = '{{ var("converted") }}', 'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json');
INSERT INTO converted SELECT o.id, r.rate
FROM orders AS o JOIN rates FOR SYSTEM_TIME AS OF o.order_time AS r ON o.currency = r.currency;
"""


def test_rows_waiting_for_the_watermark_are_joined_after_a_restart(
    spark: Any,
    kafka_bootstrap: str,
    topic_factory: Callable[..., str],
    produce: Callable[[str, Sequence[Any]], None],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    orders, rates, converted = topic_factory(), topic_factory(), topic_factory()
    path = tmp_path / "convert.sql"
    path.write_text(RUN)
    names = {"orders": orders, "rates": rates, "converted": converted, "brokers": kafka_bootstrap}

    def order(key: int, at: str) -> tuple[Any, ...]:
        return (None, json.dumps({"id": key, "currency": "EUR", "order_time": at}).encode(), None, None, None)

    def rate(value: float, at: str) -> tuple[Any, ...]:
        record = {"currency": "EUR", "rate": value, "update_time": at}
        return (b'{"currency": "EUR"}', json.dumps(record).encode(), None, None, None)

    produce(rates, [rate(1.1, "2024-05-06 10:00:00")])
    produce(orders, [order(1, "2024-05-06 10:10:00"), order(2, "2024-05-06 10:40:00")])
    assert run(capsys, path, tmp_path / "cp", **names).code == 0
    assert read_topic(kafka_bootstrap, converted) == []  # the watermark (10:00, the rates') has not passed them

    produce(rates, [rate(1.2, "2024-05-06 10:30:00"), rate(2.0, "2024-05-06 12:00:00")])
    produce(orders, [order(3, "2024-05-06 12:00:00")])
    assert run(capsys, path, tmp_path / "cp", **names).code == 0
    # Both waiting rows took the version valid at their time, though 1.2 arrived after them, in the next run.
    assert sorted(read_topic(kafka_bootstrap, converted), key=lambda r: r["id"]) == [
        {"id": 1, "rate": 1.1}, {"id": 2, "rate": 1.2}, {"id": 3, "rate": 2.0},
    ]  # fmt: skip
