"""The kafka and upsert-kafka connectors' start, stop and commit behaviour in words, for plans and `explain`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from connector.catalog.model import Table
from connector.connectors.kafka.options import KafkaOptions
from connector.options.declarations import ResolvedOptions
from connector.options.factory import SourceBehaviour


def _millis_text(ms: int) -> str:
    return f"{ms} ({datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat(timespec='milliseconds')})"


def describe_source(table: Table, opts: ResolvedOptions) -> SourceBehaviour:
    """Flink's start/stop/commit behaviour of a kafka or upsert-kafka source, in words."""
    group = opts.get(KafkaOptions.GROUP_ID)
    mode = opts.get(KafkaOptions.SCAN_STARTUP_MODE)
    topic_list = opts.get(KafkaOptions.TOPIC)
    pattern = opts.get(KafkaOptions.TOPIC_PATTERN)
    subscription = f"topics {', '.join(topic_list)}" if topic_list else f"topics matching /{pattern}/"
    if mode == "earliest-offset":
        start = "earliest offset of every partition"
    elif mode == "latest-offset":
        start = "latest offset of every partition at the first start"
    elif mode == "group-offsets":  # never for upsert-kafka, which has no 'properties.auto.offset.reset'
        reset = opts.get(KafkaOptions.AUTO_OFFSET_RESET) or "none"
        fallback = "fail naming them" if reset == "none" else f"{reset} offset"
        start = (
            f"committed offsets of group '{group}'; partitions without one: {fallback} (properties.auto.offset.reset)"
        )
    elif mode == "timestamp":
        millis = opts.require(KafkaOptions.SCAN_STARTUP_TIMESTAMP_MILLIS)
        start = f"first record at or after {_millis_text(millis)}; partitions without one: latest offset"
    else:
        offsets = opts.require(KafkaOptions.SCAN_STARTUP_SPECIFIC_OFFSETS)
        listed = ", ".join(f"partition {p}: {o}" for p, o in sorted(offsets.items()))
        start = f"{listed}; other partitions: committed offset, else earliest (with a warning)"
    bounded_mode = opts.get(KafkaOptions.SCAN_BOUNDED_MODE)
    if bounded_mode == "unbounded":
        stop = "unbounded"
    elif bounded_mode == "latest-offset":
        stop = "latest offsets when the query starts, then finish"
    elif bounded_mode == "group-offsets":
        stop = f"committed offsets of group '{group}' when the query starts, then finish"
    elif bounded_mode == "timestamp":
        stop = f"records before {_millis_text(opts.require(KafkaOptions.SCAN_BOUNDED_TIMESTAMP_MILLIS))}, then finish"
    else:
        offsets = opts.require(KafkaOptions.SCAN_BOUNDED_SPECIFIC_OFFSETS)
        listed = ", ".join(f"partition {p}: {o}" for p, o in sorted(offsets.items()))
        stop = f"{listed} (exclusive); other partitions are not read; then finish"
    commit_on_checkpoint = opts.get(KafkaOptions.COMMIT_OFFSETS_ON_CHECKPOINT)
    auto_commit = opts.properties.get("enable.auto.commit", "false").lower() == "true"
    if group and commit_on_checkpoint:
        commit = f"ON_CHECKPOINTS: after each completed micro-batch, to group '{group}' (last processed + 1)"
    elif group and auto_commit:
        commit = "KAFKA_PERIODIC: left to the Kafka client's auto commit"
    else:
        commit = "DISABLED" + ("" if group else " (no properties.group.id)")
    interval = opts.get(KafkaOptions.PARTITION_DISCOVERY_INTERVAL)
    bounded = bounded_mode != "unbounded"
    final_watermark = ends_with_final_watermark(table, opts, bounded)
    if final_watermark:
        stop += "; the watermark then moves to the end of time, firing every open window"
    if bounded or not interval or interval <= timedelta(0):
        discovery = "off: partitions fixed at start"
    else:
        discovery = f"every {_duration_words(interval)}; new partitions and topics read from earliest"
    words = {
        "subscription": subscription,
        "start": start,
        "restore": "checkpointed offsets; partitions unknown to the checkpoint from earliest; "
        "partitions no longer subscribed dropped with a warning",
        "stop": stop,
        "commit": commit,
        "discovery": discovery,
    }
    return SourceBehaviour(bounded, words, final_watermark=final_watermark)


def ends_with_final_watermark(table: Table, opts: ResolvedOptions, bounded: bool) -> bool:
    """A bounded Kafka scan of a table with a WATERMARK ends with the end-of-input row, which moves the
    watermark to the end of time ('scan.bounded.end-watermark': Flink's final watermark)."""
    return bounded and table.watermark is not None and opts.get(KafkaOptions.BOUNDED_END_WATERMARK) is True


def _duration_words(value: timedelta) -> str:
    seconds = value.total_seconds()
    for unit, size in (("h", 3600), ("min", 60), ("s", 1)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)} {unit}"
    return f"{int(seconds * 1000)} ms"


def describe_sink(table: Table, opts: ResolvedOptions) -> dict[str, str]:
    topics = opts.get(KafkaOptions.TOPIC)
    return {
        "topic": ";".join(topics) if topics else "from the 'topic' metadata column",
        "delivery": str(opts.get(KafkaOptions.DELIVERY_GUARANTEE)),
        "partitioner": str(opts.get(KafkaOptions.SINK_PARTITIONER)),
    }


def describe_upsert_sink(table: Table, opts: ResolvedOptions) -> dict[str, str]:
    topics: list[str] = opts.get(KafkaOptions.TOPIC) or []
    return {
        "topic": ";".join(topics),
        "key": ", ".join(table.primary_key),
        "delivery": str(opts.get(KafkaOptions.DELIVERY_GUARANTEE)),
        "deletes": "tombstones",
    }
