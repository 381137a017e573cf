"""The pipelines of sql/examples/, run on their sample data with the kafka-sql pytest plugin (`run_pipeline`)
and checked with Great Expectations expectations."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from connector.entrypoints.pytest_plugin import PipelineResult

EXAMPLES = Path(__file__).resolve().parents[2] / "sql" / "examples"
RunPipeline = Callable[..., PipelineResult]


@pytest.fixture(scope="module")
def gxe() -> ModuleType:
    """great_expectations.expectations, imported by the tests that use it (the import takes seconds)."""
    import great_expectations.expectations as expectations

    return expectations


def sample(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (EXAMPLES / name).read_text().splitlines() if line.strip()]


@pytest.mark.slow
def test_orders_keeps_valid_orders_in_eur_and_rejects_the_rest(run_pipeline: RunPipeline, gxe: ModuleType) -> None:
    result = run_pipeline(EXAMPLES / "orders.sql", inputs={"orders": sample("orders.jsonl")})

    result.expect(
        "clean_orders",
        gxe.ExpectTableRowCountToEqual(value=5),
        gxe.ExpectColumnValuesToNotBeNull(column="id"),
        gxe.ExpectColumnValuesToBeUnique(column="id"),
        gxe.ExpectColumnValuesToMatchRegex(column="customer", regex=r"^[A-Z]+$"),
        gxe.ExpectColumnValuesToBeBetween(column="amount_eur", min_value=0, strict_min=True),
    )
    result.expect(
        "rejected_orders",
        gxe.ExpectTableRowCountToEqual(value=3),
        gxe.ExpectColumnValuesToBeInSet(column="id", value_set=[3, 6]),  # and one without an id
    )
    amounts = {row["id"]: row["amount_eur"] for row in result.rows("clean_orders")}
    assert amounts == {1: 42.5, 2: 9.2, 4: 99.99, 7: 230.0, 8: 18.4}  # USD at 0.92


@pytest.mark.slow
def test_quickstart_totals_revenue_per_customer_and_minute(run_pipeline: RunPipeline, gxe: ModuleType) -> None:
    orders = sample("quickstart_orders.jsonl")
    result = run_pipeline(EXAMPLES / "quickstart.sql", inputs={"orders": orders})

    result.expect(
        "refunds",
        gxe.ExpectTableRowCountToEqual(value=sum(1 for o in orders if o["amount"] <= 0)),
        gxe.ExpectColumnValuesToBeBetween(column="amount", max_value=0),
    )
    result.expect(
        "revenue_per_minute",
        gxe.ExpectColumnValuesToBeBetween(column="revenue", min_value=0, strict_min=True),
        gxe.ExpectColumnValuesToBeBetween(column="orders", min_value=1),
        gxe.ExpectCompoundColumnsToBeUnique(column_list=["window_start", "customer"]),
        gxe.ExpectColumnValuesToBeInSet(column="customer", value_set=["alice", "bob", "carol"]),
    )
    windows: dict[tuple[datetime, str], tuple[int, float]] = {}
    for order in orders:
        if order["amount"] > 0:
            start = datetime.fromisoformat(order["order_time"]).replace(second=0)
            count, total = windows.get((start, order["customer"]), (0, 0.0))
            windows[(start, order["customer"])] = (count + 1, round(total + order["amount"], 2))
    emitted = {(r["window_start"], r["customer"]): (r["orders"], round(r["revenue"], 2))
               for r in result.rows("revenue_per_minute")}
    # Every window is emitted with its exact totals: the end of the bounded input fires the ones the data's own
    # watermark (5 s after the last order time) left open, as Flink's final watermark does.
    assert emitted == windows
