"""Nexmark's own Flink SQL as conformance cases: each query q0-q23 over the events of Nexmark's generator.

The queries are read from the Nexmark sources beside the project (`../shared/nexmark/queries`, or NEXMARK_DIR),
never copied: `ddl_kafka.sql` (its topic and brokers templated, bounded at the latest offset so that a run ends),
`ddl_views.sql` over it, then `q<N>.sql` whose blackhole (or filesystem) sink is replaced by a sink that can be
read back: kafka json for an appending query, upsert-kafka with the query's key for an updating one. The input is
`EVENTS` events of `connector.dev.nexmark` (seed 0, `RATE` events per second of event time, so that 10-second
windows, joins and Top-N fill). Where Flink 2.3 refuses a query as published for a word it reserves, the same
one-word fix (quoting) is applied for both engines (`FIXES`); other refusals stay, and kafka-sql must fail too.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from connector.dev.nexmark import NexmarkConfig, events

REPO = Path(__file__).resolve().parents[2]
QUERIES = Path(os.environ.get("NEXMARK_DIR") or REPO.parent / "shared" / "nexmark") / "queries"
EVENTS = 5_000
RATE = 100  # events per second of event time: 5,000 events span 50 s
NAMES = [f"nexmark_q{n}" for n in range(24)]

# The primary key of each updating query's sink (Flink's upsert key of the query); the others append.
KEYS = {
    "q4": "id",
    "q9": "id",
    "q15": "`day`",
    "q16": "channel, `day`",
    "q17": "auction, `day`",
    "q18": "bidder, auction",
    "q19": "auction, rank_number",
}
# Words Flink 2.3 reserves that the published queries use unquoted: (query, pattern, replacement).
FIXES: list[tuple[str, str, str]] = [
    ("q23", r"A\.dateTime\b", "A.`dateTime`"),  # "Encountered \". dateTime\"": Flink's parser reserves it
]

# What kafka-sql cannot give as Flink does: its `validate` refuses these, saying these words (`Case.refused`).
REFUSED = {
    "q4": "[aggregate-input]",  # an AVG of MAX results that a regular join updates: Flink retracts them
    "q12": "[proctime-window]",  # a TUMBLE by PROCTIME(): Spark's windows close by a watermark
}

_SINK = re.compile(r"\)\s*(?:PARTITIONED BY \([^)]*\)\s*)?WITH \((?:[^;])*?\);", re.DOTALL)


def available() -> bool:
    return (QUERIES / "ddl_kafka.sql").exists()


def _source() -> str:
    ddl = (QUERIES / "ddl_kafka.sql").read_text()
    ddl = ddl.replace("${BOOTSTRAP_SERVERS}", '{{ var("brokers") }}')
    ddl = ddl.replace("'topic' = 'nexmark'", "'topic' = '{{ var(\"nexmark\") }}'")
    ddl = ddl.replace(
        "'scan.startup.mode' = 'earliest-offset',",
        "'scan.startup.mode' = 'earliest-offset',\n    'scan.bounded.mode' = 'latest-offset',",
    )
    views = (QUERIES / "ddl_views.sql").read_text().replace("${NEXMARK_TABLE}", "kafka")
    return ddl.rstrip().rstrip(";") + ";\n\n" + views.rstrip().rstrip(";") + ";\n"


def _sink(query: str, name: str) -> str:
    """The WITH clause of the query's sink table `name`: a topic variable of that name."""
    key = KEYS.get(query)
    options = (
        f"'connector' = 'upsert-kafka',\n  'topic' = '{{{{ var(\"{name}\") }}}}',\n"
        "  'properties.bootstrap.servers' = '{{ var(\"brokers\") }}',\n  'key.format' = 'json',\n"
        "  'value.format' = 'json'"
        if key
        else f"'connector' = 'kafka',\n  'topic' = '{{{{ var(\"{name}\") }}}}',\n"
        "  'properties.bootstrap.servers' = '{{ var(\"brokers\") }}',\n  'format' = 'json'"
    )
    primary = f",\n  PRIMARY KEY ({key}) NOT ENFORCED\n" if key else "\n"
    return f"{primary}) WITH (\n  {options}\n);"


def sinks(text: str) -> list[str]:
    """The sink tables of a query's text, which are also its sink topics' variables."""
    return re.findall(r"CREATE TABLE (nexmark_\w+)", text)


def sql(name: str) -> str:
    """The case's Flink SQL (a template over `brokers`, `nexmark` and one variable per sink)."""
    query = name.removeprefix("nexmark_")
    text = (QUERIES / f"{query}.sql").read_text()
    for fixed, pattern, replacement in FIXES:
        if fixed == query:
            text = re.sub(pattern, replacement, text)
    for sink in sinks(text):
        start = text.index(f"CREATE TABLE {sink}")
        found = _SINK.search(text, start)
        assert found is not None, f"{query}: no WITH clause for {sink}"
        text = text[: found.start()].rstrip() + _sink(query, sink) + text[found.end() :]
    header = f"-- Nexmark {query} as published (../shared/nexmark/queries/{query}.sql), sinks read back.\n"
    if query in REFUSED:
        header += f"-- refused: {REFUSED[query]}\n"
    return header + _source() + "\n" + text.strip() + "\n"


def inputs() -> list[dict[str, object]]:
    """The case's input records: Nexmark's events, one partition."""
    return [{"topic": "nexmark", "value": event} for event in events(EVENTS, NexmarkConfig(first_event_rate=RATE))]
