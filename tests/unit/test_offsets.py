"""Flink's Kafka offset rules (`connectors.kafka.offsets` and `.commit`), without Kafka or Spark."""

from __future__ import annotations

import json

import pytest

from connector.connectors.kafka.commit import CommitMode, commit_mode
from connector.connectors.kafka.errors import DataLossError, KafkaSourceError
from connector.connectors.kafka.offsets import (
    OffsetRange,
    batch_ranges,
    from_json,
    from_spark,
    needs_earliest,
    next_offsets,
    proportional_split,
    resolve_bounds,
    resolve_startup,
    split_ranges,
    to_json,
    to_spark,
)
from connector.connectors.kafka.planner import require_known_offsets
from connector.connectors.kafka.retries import retrying
from connector.connectors.kafka.settings import BoundedMode, SourceSettings, StartupMode, Subscription, is_bounded

BASE = {"properties.bootstrap.servers": "localhost:9092", "topic": "orders"}


def parse(options: dict[str, str]) -> SourceSettings:
    return SourceSettings.from_options({**BASE, **options})


# ---- canonical offsets -----------------------------------------------------------------------------


def test_offsets_are_canonical_sorted_topics_numeric_partitions_string_keys() -> None:
    offsets = {("b", 10): 5, ("b", 2): 7, ("a", 0): 1}
    assert to_json(offsets) == '{"a": {"0": 1}, "b": {"2": 7, "10": 5}}'
    # Spark hands offsets back with string keys, in whatever order; the canonical form is the same
    back = from_spark(json.loads('{"b": {"10": 5, "2": 7}, "a": {"0": 1}}'))
    assert back == offsets
    assert json.dumps(to_spark(back)) == to_json(offsets)


def test_offsets_not_written_by_this_source_are_rejected_clearly() -> None:
    with pytest.raises(KafkaSourceError, match=r"new checkpoint location"):
        from_spark({"offset": 10})  # type: ignore[dict-item]
    with pytest.raises(KafkaSourceError, match=r"not valid JSON"):
        from_json("{nope")


# ---- options -----------------------------------------------------------------------------------------


def test_defaults_follow_flink() -> None:
    s = parse({"properties.group.id": "g"})
    assert s.startup_mode is StartupMode.GROUP_OFFSETS
    assert s.bounded_mode is BoundedMode.UNBOUNDED
    assert s.discovery_interval_ms == 5 * 60 * 1000
    assert s.fail_on_data_loss is True
    assert s.max_records_per_batch is None
    assert s.read_committed is False  # Java clients default to read_uncommitted
    assert commit_mode(s) is CommitMode.ON_CHECKPOINTS


def test_group_offsets_default_needs_a_group_id() -> None:
    with pytest.raises(KafkaSourceError, match=r"'properties.group.id' is not set"):
        parse({})


def test_subscription_by_list_and_pattern() -> None:
    s = parse({"topic": "a;b; c", "scan.startup.mode": "earliest-offset"})
    assert s.subscription.topics == ("a", "b", "c")
    p = SourceSettings.from_options(
        {
            "properties.bootstrap.servers": "k:9092",
            "topic-pattern": "orders-.*",
            "scan.startup.mode": "earliest-offset",
        }
    )
    assert p.subscription.matches("orders-eu")
    assert not p.subscription.matches("xorders-eu")  # whole-name match, like Java's matches()
    assert not p.subscription.matches("orders")


def test_topic_and_pattern_are_exclusive_and_one_is_required() -> None:
    with pytest.raises(KafkaSourceError, match=r"shouldn't be set together"):
        parse({"topic-pattern": "x.*", "scan.startup.mode": "earliest-offset"})
    with pytest.raises(KafkaSourceError, match=r"Either 'topic' or 'topic-pattern' must be set"):
        SourceSettings.from_options({"properties.bootstrap.servers": "k:9092"})
    with pytest.raises(KafkaSourceError, match=r"Invalid 'topic-pattern'"):
        SourceSettings.from_options(
            {
                "properties.bootstrap.servers": "k:9092",
                "topic-pattern": "(",
                "scan.startup.mode": "earliest-offset",
            }
        )


def test_mode_companions_are_required_and_parsed_with_flinks_syntax() -> None:
    with pytest.raises(KafkaSourceError, match=r"'scan.startup.timestamp-millis' is required in 'timestamp'"):
        parse({"scan.startup.mode": "timestamp"})
    with pytest.raises(KafkaSourceError, match=r"'scan.bounded.specific-offsets' is required"):
        parse({"scan.startup.mode": "earliest-offset", "scan.bounded.mode": "specific-offsets"})
    with pytest.raises(
        KafkaSourceError, match=r"should follow the format 'partition:0,offset:42;partition:1,offset:300'"
    ):
        parse(
            {
                "scan.startup.mode": "specific-offsets",
                "scan.startup.specific-offsets": "partition:0, offset:4",
            }
        )
    with pytest.raises(KafkaSourceError, match=r"only supports specific offset for single topic"):
        parse(
            {
                "topic": "a;b",
                "scan.startup.mode": "specific-offsets",
                "scan.startup.specific-offsets": "partition:0,offset:4",
            }
        )
    s = parse(
        {
            "scan.startup.mode": "specific-offsets",
            "scan.startup.specific-offsets": "partition:0,offset:42;partition:1,offset:300",
        }
    )
    assert s.startup_specific_offsets == {0: 42, 1: 300}


def test_invalid_values_name_the_option() -> None:
    with pytest.raises(KafkaSourceError, match=r"scan.startup.mode"):
        parse({"scan.startup.mode": "beginning"})
    with pytest.raises(KafkaSourceError, match=r"scan.topic-partition-discovery.interval"):
        parse({"scan.startup.mode": "earliest-offset", "scan.topic-partition-discovery.interval": "soon"})
    with pytest.raises(KafkaSourceError, match=r"scan.max-records-per-batch"):
        parse({"scan.startup.mode": "earliest-offset", "scan.max-records-per-batch": "0"})
    with pytest.raises(KafkaSourceError, match=r"auto.offset.reset can not be set to smallest"):
        parse({"properties.group.id": "g", "properties.auto.offset.reset": "smallest"})
    with pytest.raises(KafkaSourceError, match=r"properties.commit.offsets.on.checkpoint"):
        parse({"properties.group.id": "g", "properties.commit.offsets.on.checkpoint": "yes"})


def test_discovery_interval_zero_disables_and_bounded_sources_never_discover() -> None:
    assert (
        parse(
            {"scan.startup.mode": "earliest-offset", "scan.topic-partition-discovery.interval": "0"}
        ).discovery_interval_ms
        == 0
    )
    assert (
        parse(
            {"scan.startup.mode": "earliest-offset", "scan.topic-partition-discovery.interval": "1 s"}
        ).discovery_interval_ms
        == 1000
    )
    bounded = parse({"scan.startup.mode": "earliest-offset", "scan.bounded.mode": "latest-offset"})
    assert bounded.discovery_interval_ms == 0


def test_flink_only_and_managed_properties_are_not_passed_to_the_kafka_client() -> None:
    s = parse(
        {
            "properties.group.id": "g",
            "properties.commit.offsets.on.checkpoint": "false",
            "properties.enable.auto.commit": "true",
            "properties.auto.offset.reset": "earliest",
            "properties.key.deserializer": "org.apache.kafka.common.serialization.ByteArrayDeserializer",
            "properties.partition.discovery.interval.ms": "1000",
            "properties.security.protocol": "PLAINTEXT",
        }
    )
    assert s.client_properties == {"security.protocol": "PLAINTEXT"}
    assert s.client_config("reader") == {
        "bootstrap.servers": "localhost:9092",
        "client.id": "g-reader",
        "security.protocol": "PLAINTEXT",
    }


def test_is_bounded() -> None:
    assert not is_bounded({"topic": "t"})
    assert not is_bounded({"scan.bounded.mode": "unbounded"})
    assert is_bounded({"scan.bounded.mode": "latest-offset"})
    assert is_bounded({"SCAN.BOUNDED.MODE": "TIMESTAMP"})


def test_commit_modes_follow_flink() -> None:
    assert commit_mode(parse({"scan.startup.mode": "earliest-offset"})) is CommitMode.DISABLED  # no group
    assert commit_mode(parse({"properties.group.id": "g"})) is CommitMode.ON_CHECKPOINTS
    off = {"properties.group.id": "g", "properties.commit.offsets.on.checkpoint": "false"}
    assert commit_mode(parse(off)) is CommitMode.DISABLED
    periodic = parse({**off, "properties.enable.auto.commit": "true"})
    assert commit_mode(periodic) is CommitMode.KAFKA_PERIODIC


# ---- fresh start -------------------------------------------------------------------------------------

T0, T1, T2 = ("t", 0), ("t", 1), ("t", 2)
WATERMARKS = {T0: (0, 10), T1: (5, 20), T2: (0, 0)}


def test_earliest_and_latest() -> None:
    s = parse({"topic": "t", "scan.startup.mode": "earliest-offset"})
    assert resolve_startup(s, WATERMARKS, WATERMARKS).offsets == {T0: 0, T1: 5, T2: 0}
    s = parse({"topic": "t", "scan.startup.mode": "latest-offset"})
    assert resolve_startup(s, WATERMARKS, WATERMARKS).offsets == {T0: 10, T1: 20, T2: 0}


def test_group_offsets_use_committed_then_the_reset_strategy() -> None:
    committed = {T0: 7}
    s = parse({"topic": "t", "properties.group.id": "g", "properties.auto.offset.reset": "earliest"})
    assert resolve_startup(s, WATERMARKS, WATERMARKS, committed=committed).offsets == {T0: 7, T1: 5, T2: 0}
    s = parse({"topic": "t", "properties.group.id": "g", "properties.auto.offset.reset": "latest"})
    assert resolve_startup(s, WATERMARKS, WATERMARKS, committed=committed).offsets == {T0: 7, T1: 20, T2: 0}


def test_group_offsets_without_reset_strategy_names_partitions_and_the_fix() -> None:
    s = parse({"topic": "t", "properties.group.id": "g"})
    with pytest.raises(KafkaSourceError) as error:
        resolve_startup(s, WATERMARKS, WATERMARKS, committed={T0: 7})
    message = str(error.value)
    assert "'g' has no committed offset for partition(s) t-1, t-2" in message
    assert "'properties.auto.offset.reset'" in message


def test_committed_offset_out_of_range_follows_the_reset_strategy() -> None:
    s = parse({"topic": "t", "properties.group.id": "g", "properties.auto.offset.reset": "earliest"})
    result = resolve_startup(s, [T1], WATERMARKS, committed={T1: 2})
    assert result.offsets == {T1: 5}
    assert "out of range [5, 20]" in result.warnings[0]
    with pytest.raises(KafkaSourceError, match=r"out of range"):
        resolve_startup(parse({"topic": "t", "properties.group.id": "g"}), [T1], WATERMARKS, committed={T1: 2})


def test_timestamp_without_a_later_record_starts_at_latest() -> None:
    s = parse({"topic": "t", "scan.startup.mode": "timestamp", "scan.startup.timestamp-millis": "1000"})
    result = resolve_startup(s, WATERMARKS, WATERMARKS, by_timestamp={T0: 4, T1: -1})
    assert result.offsets == {T0: 4, T1: 20, T2: 0}


def test_specific_offsets_unlisted_partitions_use_committed_then_earliest_with_a_warning() -> None:
    s = parse(
        {
            "topic": "t",
            "properties.group.id": "g",
            "scan.startup.mode": "specific-offsets",
            "scan.startup.specific-offsets": "partition:0,offset:3;partition:9,offset:1",
        }
    )
    result = resolve_startup(s, WATERMARKS, WATERMARKS, committed={T1: 8})
    assert result.offsets == {T0: 3, T1: 8, T2: 0}
    assert any("no offset for partition(s) t-1, t-2" in w for w in result.warnings)
    assert any("partition(s) [9]" in w for w in result.warnings)


def test_specific_offset_out_of_range_starts_from_earliest() -> None:
    s = parse(
        {
            "topic": "t",
            "scan.startup.mode": "specific-offsets",
            "scan.startup.specific-offsets": "partition:1,offset:99",
        }
    )
    result = resolve_startup(s, [T1], WATERMARKS)
    assert result.offsets == {T1: 5}
    assert "out of range" in result.warnings[0]


def test_bounds_per_mode() -> None:
    latest = parse({"topic": "t", "scan.startup.mode": "earliest-offset", "scan.bounded.mode": "latest-offset"})
    assert resolve_bounds(latest, WATERMARKS, WATERMARKS) == {T0: 10, T1: 20, T2: 0}
    specific = parse(
        {
            "topic": "t",
            "scan.startup.mode": "earliest-offset",
            "scan.bounded.mode": "specific-offsets",
            "scan.bounded.specific-offsets": "partition:1,offset:12",
        }
    )
    assert resolve_bounds(specific, WATERMARKS, WATERMARKS) == {T1: 12}  # others are not read at all
    stamp = parse(
        {
            "topic": "t",
            "scan.startup.mode": "earliest-offset",
            "scan.bounded.mode": "timestamp",
            "scan.bounded.timestamp-millis": "5",
        }
    )
    assert resolve_bounds(stamp, WATERMARKS, WATERMARKS, by_timestamp={T0: 3}) == {T0: 3, T1: 20, T2: 0}
    group = parse({"topic": "t", "properties.group.id": "g", "scan.bounded.mode": "group-offsets"})
    with pytest.raises(KafkaSourceError, match=r"no committed offset for partition"):
        resolve_bounds(group, WATERMARKS, WATERMARKS, committed={T0: 1})
    assert resolve_bounds(parse({"topic": "t", "properties.group.id": "g"}), WATERMARKS, WATERMARKS) is None


# ---- planning micro-batches --------------------------------------------------------------------------

SUB = Subscription(topics=("t",))


def test_no_new_data_returns_the_start() -> None:
    start = {T0: 10, T1: 20, T2: 0}
    assert next_offsets(start, SUB, list(start), WATERMARKS, None, True).end == start


def test_new_partitions_start_from_earliest_and_unsubscribed_ones_are_dropped() -> None:
    step = next_offsets({T0: 4, ("old", 0): 3}, SUB, [T0, T1], WATERMARKS, None, True)
    assert step.end == {T0: 10, T1: 20}
    assert batch_ranges({T0: 4, ("old", 0): 3}, step.end, {T1: 5}) == [
        OffsetRange("t", 0, 4, 10),
        OffsetRange("t", 1, 5, 20),
    ]
    assert needs_earliest({T0: 4}, step.end) == [T1]
    assert any("old-0" in w and "no longer matches topic 't'" in w for w in step.warnings)


def test_data_loss_fails_with_topic_partition_offset_and_range() -> None:
    with pytest.raises(DataLossError) as error:
        next_offsets({T1: 2}, SUB, [T1], WATERMARKS, None, True)
    assert "topic 't' partition 1: expected to read from offset 2, but available offsets are [5, 20)" in str(
        error.value
    )
    with pytest.raises(DataLossError, match=r"beyond the latest offset"):
        next_offsets({T0: 50}, SUB, [T0], WATERMARKS, None, True)
    with pytest.raises(DataLossError, match=r"no longer exists"):
        next_offsets({("t", 7): 1}, SUB, [T0], WATERMARKS, None, True)


def test_data_loss_without_failing_continues_from_earliest() -> None:
    step = next_offsets({T1: 2, T0: 50}, SUB, [T0, T1], WATERMARKS, None, False)
    assert step.end == {T0: 10, T1: 20}
    assert len(step.warnings) == 2
    # T0 was reset: its range starts over at the earliest offset
    assert batch_ranges({T1: 2, T0: 50}, step.end, {T0: 0}) == [
        OffsetRange("t", 0, 0, 10),
        OffsetRange("t", 1, 2, 20),
    ]


def test_cap_bounds_the_end_and_unlisted_partitions_are_not_read() -> None:
    step = next_offsets({T0: 2, T1: 5}, SUB, [T0, T1], WATERMARKS, {T0: 6}, True)
    assert step.end == {T0: 6, T1: 5}
    # a start beyond the bound reads nothing
    assert next_offsets({T0: 8}, SUB, [T0], WATERMARKS, {T0: 6}, True).end == {T0: 8}


def test_max_rows_splits_in_proportion_to_backlog() -> None:
    step = next_offsets({T0: 0, T1: 5}, SUB, [T0, T1], WATERMARKS, None, True, max_rows=5)
    assert step.end == {T0: 2, T1: 8}  # backlogs 10 and 15
    assert sum(proportional_split({T0: 1, T1: 1, T2: 1}, 2).values()) == 2


def test_min_rows_waits_for_enough_records() -> None:
    start = {T0: 8, T1: 20}
    assert next_offsets(start, SUB, [T0, T1], WATERMARKS, None, True, min_rows=5).end == start
    assert next_offsets(start, SUB, [T0, T1], WATERMARKS, None, True, min_rows=2).end == {T0: 10, T1: 20}


def test_min_partitions_splits_large_ranges() -> None:
    ranges = [OffsetRange("t", 0, 0, 100), OffsetRange("t", 1, 0, 10)]
    split = split_ranges(ranges, 4)
    assert [r for r in split if r.partition == 0] == [  # 100 of 110 records: round(4 * 100 / 110) tasks
        OffsetRange("t", 0, 0, 25),
        OffsetRange("t", 0, 25, 50),
        OffsetRange("t", 0, 50, 75),
        OffsetRange("t", 0, 75, 100),
    ]
    assert [r for r in split if r.partition == 1] == [OffsetRange("t", 1, 0, 10)]
    assert split_ranges(ranges, None) == ranges


def test_an_unknown_latest_offset_from_a_restarting_broker_is_asked_again_not_judged_as_data_loss() -> None:
    """CI saw a broker back from a restart answer the latest offsets with -1001 and no error; judged as an answer,
    it made a valid checkpoint offset look beyond the end of the log."""
    answers = iter([{T0: -1001, T1: -1001}, {T0: 10, T1: 20}])

    def latest_offsets() -> dict[tuple[str, int], int]:
        latest = next(answers)
        require_known_offsets(latest)
        return latest

    with pytest.raises(DataLossError):
        next_offsets({T0: 7}, SUB, [T0], {T0: (0, -1001)}, None, True)
    latest = retrying(latest_offsets, "offsets request", timeout_seconds=10)
    watermarks = {T0: (0, latest[T0]), T1: (5, latest[T1])}
    assert next_offsets({T0: 7, T1: 20}, SUB, [T0, T1], watermarks, None, True).end == {T0: 10, T1: 20}
