"""The kafka-sql pytest plugin: loaded through its entry point, runs pipelines in bounded mode, and fails
with a readable message naming the expectation, the observed value and sample rows."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import pytest
from confluent_kafka import Consumer, TopicPartition

from connector.entrypoints.pytest_plugin import PipelineResult, PipelineRunError, SinkOutput

pytest_plugins = ["pytester"]

ORDERS_SQL = Path(__file__).resolve().parents[2] / "sql" / "examples" / "orders.sql"
RunPipeline = Callable[..., PipelineResult]


@pytest.mark.slow
def test_a_failing_expectation_fails_the_test_with_a_readable_message(
    pytester: pytest.Pytester, kafka_bootstrap: str
) -> None:
    pytester.makepyfile(
        test_orders=f"""
        import great_expectations.expectations as gxe

        def test_clean_orders(run_pipeline):
            rows = [
                {{"id": 1, "customer": "ann", "amount": 20.0, "currency": "EUR", "order_time": "2026-01-01 10:00:00"}},
                {{"id": 2, "customer": "bo", "amount": 150.0, "currency": "USD", "order_time": "2026-01-01 10:00:07"}},
            ]
            result = run_pipeline({str(ORDERS_SQL)!r}, inputs={{"orders": rows}})
            result.expect(
                "clean_orders",
                gxe.ExpectColumnValuesToNotBeNull(column="id"),
                gxe.ExpectColumnValuesToBeBetween(column="amount_eur", max_value=100),
            )
        """
    )
    # a fresh interpreter: the plugin comes from its entry point, with its own SparkSession
    outcome = pytester.runpytest_subprocess(
        "--kafka-sql-bootstrap", kafka_bootstrap, "-p", "no:cacheprovider", timeout=600
    )

    outcome.assert_outcomes(failed=1)
    reported = [line[1:].strip() for line in outcome.outlines if line.startswith("E ")]
    assert reported[: reported.index("unexpected rows:") + 2] == [
        f"connector.entrypoints.pytest_plugin.ExpectationFailed: Sink 'clean_orders' of {ORDERS_SQL} (2 rows) "
        "does not meet 1 of 2 expectation(s):",
        "expect_column_values_to_be_between(column='amount_eur', max_value=100.0)",
        "observed: 1 of 2 rows unexpected (50.0%), e.g. [138.0]",
        "unexpected rows:",
        "{id: 2, customer: 'BO', amount_eur: 138.0, order_time: 2026-01-01 10:00:07}",
    ]
    assert "pytest_plugin.py" not in outcome.stdout.str()  # the plugin's own frames are hidden


def test_expectation_messages_name_the_expectation_the_observed_value_and_rows() -> None:
    import great_expectations.expectations as gxe

    rows = [{"id": i, "amount": float(i * 10), "at": datetime(2026, 1, 1, 10, 0, i)} for i in range(1, 8)]
    result = PipelineResult(Path("p.sql"), {"out": SinkOutput("out", ["id", "amount", "at"], rows)})

    assert result.expect("OUT", gxe.ExpectColumnValuesToNotBeNull(column="id")) is result
    with pytest.raises(AssertionError) as failed:
        result.expect(
            "out",
            gxe.ExpectColumnMaxToBeBetween(column="amount", max_value=50),
            gxe.ExpectColumnValuesToBeUnique(column="missing"),
        )
    assert str(failed.value) == "\n".join(
        [
            "Sink 'out' of p.sql (7 rows) does not meet 2 of 2 expectation(s):",
            "  expect_column_max_to_be_between(column='amount', max_value=50.0)",
            "    observed value: 70.0",
            "    rows:",
            *[f"      {{id: {i}, amount: {i * 10.0}, at: 2026-01-01 10:00:0{i}}}" for i in range(1, 6)],
            "  expect_column_values_to_be_unique(column='missing')",
            '    error: Error: The column "missing" in BatchData does not exist.',
            "    columns: id, amount, at",
        ]
    )
    with pytest.raises(KeyError, match=r"'ot' is not a sink of p\.sql\. Did you mean 'out'"):
        result.rows("ot")


def test_mistakes_in_a_run_are_reported_before_anything_runs(run_pipeline: RunPipeline, tmp_path: Path) -> None:
    with pytest.raises(PipelineRunError, match=r"has no table 'order'\. Did you mean 'orders'"):
        run_pipeline(ORDERS_SQL, inputs={"order": []})
    with pytest.raises(PipelineRunError, match="table 'rejected_orders' uses connector 'print'"):
        run_pipeline(ORDERS_SQL, inputs={"rejected_orders": []})
    with pytest.raises(PipelineRunError, match=r"table 'orders' has no column\(s\) amout to set"):
        run_pipeline(ORDERS_SQL, inputs={"orders": [{"id": 1, "amout": 2.0}]})
    wrong = [{"id": 1, "amount": 2.0}, {"id": 2, "amount": "two"}]
    with pytest.raises(PipelineRunError) as refused:
        run_pipeline(ORDERS_SQL, inputs={"orders": wrong})
    assert str(refused.value) == "inputs: table 'orders' row 2: column 'amount' (DOUBLE) cannot hold 'two'."
    endless = tmp_path / "endless.sql"
    endless.write_text(
        "CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen');\n"
        "CREATE TABLE output (id BIGINT) WITH ('connector' = 'blackhole');\n"
        "INSERT INTO output SELECT id FROM gen;\n"
    )
    with pytest.raises(PipelineRunError, match="reads unbounded table\\(s\\) gen; a test run needs bounded sources"):
        run_pipeline(endless)


@pytest.mark.slow
def test_an_upsert_kafka_sink_yields_the_last_row_per_key(
    run_pipeline: RunPipeline, kafka_bootstrap: str, tmp_path: Path
) -> None:
    pipeline = tmp_path / "totals.sql"
    pipeline.write_text(
        """
        CREATE TABLE payments (customer STRING, amount DOUBLE, ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp')
        WITH ('connector' = 'kafka', 'topic' = 'payments', 'properties.bootstrap.servers' = 'prod:9093',
              'properties.security.protocol' = 'SASL_SSL', 'properties.sasl.mechanism' = 'SCRAM-SHA-512',
              'properties.sasl.jaas.config' = 'org.apache.kafka.common.security.scram.ScramLoginModule required
                 username="etl" password="{{ env_var('PROD_PASSWORD', 'unset') }}";',
              'scan.startup.mode' = 'earliest-offset',
              'scan.max-records-per-batch' = '1', 'format' = 'json');
        CREATE TABLE totals (customer STRING, total DOUBLE, payments BIGINT, PRIMARY KEY (customer) NOT ENFORCED)
        WITH ('connector' = 'upsert-kafka', 'topic' = 'totals', 'properties.bootstrap.servers' = 'prod:9093',
              'key.format' = 'json', 'value.format' = 'json');
        INSERT INTO totals SELECT customer, SUM(amount), COUNT(*) FROM payments GROUP BY customer;
        """
    )
    payments = [
        {"customer": "ann", "amount": 5.0, "ts": datetime(2026, 1, 1, 9, 0)},
        {"customer": "bo", "amount": 2.5, "ts": "2026-01-01 09:01:00"},
        {"customer": "ann", "amount": 1.0, "ts": "2026-01-01 09:02:00"},
    ]
    result = run_pipeline(pipeline, inputs={"payments": payments})

    consumer = Consumer({"bootstrap.servers": kafka_bootstrap, "group.id": "check-totals"})
    try:  # one micro-batch per payment: the topic holds every update, the result the last one per key
        written = consumer.get_watermark_offsets(TopicPartition(result.output("totals").topic, 0), timeout=30)[1]
    finally:
        consumer.close()
    assert written == 3
    assert sorted(result.rows("totals"), key=lambda r: r["customer"]) == [
        {"customer": "ann", "total": 6.0, "payments": 2},
        {"customer": "bo", "total": 2.5, "payments": 1},
    ]


@pytest.mark.slow
def test_a_keyed_table_sink_yields_the_table_it_would_hold(run_pipeline: RunPipeline, tmp_path: Path) -> None:
    """A delta (or jdbc, iceberg) sink with a PRIMARY KEY: the result is its final table, deletes applied."""
    pipeline = tmp_path / "prices.sql"
    pipeline.write_text(
        """
        CREATE TABLE prices (sku STRING, price INT, PRIMARY KEY (sku) NOT ENFORCED)
        WITH ('connector' = 'upsert-kafka', 'topic' = 'prices', 'properties.bootstrap.servers' = 'prod:9093',
              'key.format' = 'json', 'value.format' = 'json');
        CREATE TABLE latest (sku STRING, price INT, PRIMARY KEY (sku) NOT ENFORCED)
        WITH ('connector' = 'delta', 'table-path' = 's3://lake/latest');
        INSERT INTO latest SELECT sku, price FROM prices;
        """
    )
    prices = [{"sku": "a", "price": 1}, {"sku": "b", "price": 2}, {"sku": "a", "price": 3}]

    result = run_pipeline(pipeline, inputs={"prices": prices})

    assert sorted(result.rows("latest"), key=lambda r: r["sku"]) == [{"sku": "a", "price": 3}, {"sku": "b", "price": 2}]
