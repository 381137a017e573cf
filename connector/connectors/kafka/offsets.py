"""Flink's Kafka consumer offset rules as pure functions, so they can be tested without Kafka or Spark.

The `flink-kafka` source (`connector.connectors.kafka.source`) fetches metadata and watermarks from the broker and
hands them to these functions, with its options parsed (`connector.connectors.kafka.settings`); everything that
decides *which* offsets to read lives here:

* offsets as Spark stores them in its checkpoint: `{"topic": {"partition": next_offset_to_read}}`, in a
  canonical order, because Spark compares offsets as JSON strings (a different key order for the same
  values makes an endless run of empty micro-batches);
* fresh-start resolution per `scan.startup.mode` and end offsets per `scan.bounded.mode`;
* restore rules: partitions the checkpoint does not know start from EARLIEST, partitions no longer
  subscribed are dropped with a warning, lost data fails or is skipped (`scan.fail-on-data-loss`);
* admission control (`ReadMaxRows`, split proportionally to the backlog of each partition) and the split
  of large ranges into several Spark tasks (`scan.min-partitions`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field

from connector.connectors.kafka.errors import DataLossError, KafkaSourceError
from connector.connectors.kafka.settings import BoundedMode, OffsetReset, SourceSettings, StartupMode, Subscription

TopicPartition = tuple[str, int]
Offsets = dict[TopicPartition, int]
# (earliest offset, latest offset) of a partition; latest is the high watermark or, under
# read_committed, the last stable offset.
Watermarks = tuple[int, int]


# --------------------------------------------------------------------------------------------------
# Offsets as Spark checkpoints them


def to_spark(offsets: Mapping[TopicPartition, int]) -> dict[str, dict[str, int]]:
    """The canonical checkpoint form: topics sorted, partitions sorted numerically, string keys."""
    nested: dict[str, dict[int, int]] = {}
    for (topic, partition), offset in offsets.items():
        nested.setdefault(topic, {})[partition] = int(offset)
    return {
        topic: {str(partition): nested[topic][partition] for partition in sorted(nested[topic])}
        for topic in sorted(nested)
    }


def from_spark(offsets: Mapping[str, Mapping[str, int]]) -> Offsets:
    """Read offsets back from the checkpoint form (partition keys come back as strings)."""
    try:
        return {
            (str(topic), int(partition)): int(offset)
            for topic, partitions in offsets.items()
            for partition, offset in partitions.items()
        }
    except (AttributeError, TypeError, ValueError) as error:
        raise KafkaSourceError(
            f"The checkpoint holds offsets the flink-kafka source cannot read: {offsets!r} ({error}). "
            "Was this checkpoint written by another source? Start with a new checkpoint location."
        ) from None


def to_json(offsets: Mapping[TopicPartition, int]) -> str:
    """The exact string Spark writes for these offsets (it serialises with `json.dumps`)."""
    return json.dumps(to_spark(offsets))


def from_json(text: str) -> Offsets:
    try:
        loaded = json.loads(text)
    except ValueError as error:
        raise KafkaSourceError(f"Offsets are not valid JSON: {text!r} ({error})") from None
    if not isinstance(loaded, dict):
        raise KafkaSourceError(f"Offsets must be a JSON object {{topic: {{partition: offset}}}}: {text!r}")
    return from_spark(loaded)


def describe(tp: TopicPartition) -> str:
    return f"{tp[0]}-{tp[1]}"


# --------------------------------------------------------------------------------------------------
# Fresh start and bounded end


@dataclass
class Resolution:
    """Offsets resolved for a set of partitions, and warnings the caller logs."""

    offsets: Offsets
    warnings: list[str] = field(default_factory=list)


def resolve_startup(
    settings: SourceSettings,
    partitions: Iterable[TopicPartition],
    watermarks: Mapping[TopicPartition, Watermarks],
    committed: Mapping[TopicPartition, int] | None = None,
    by_timestamp: Mapping[TopicPartition, int] | None = None,
) -> Resolution:
    """Start offsets of a fresh query (`scan.startup.mode`), as Flink's OffsetsInitializers resolve them.

    `committed` holds the group's committed offsets (partitions without one are absent); `by_timestamp`
    the first offset whose timestamp is >= the startup timestamp (absent or negative: no such record).
    """
    mode = settings.startup_mode
    result = Resolution({})
    missing_commit: list[TopicPartition] = []
    unlisted: list[TopicPartition] = []
    for tp in sorted(partitions):
        earliest, latest = watermarks[tp]
        if mode is StartupMode.EARLIEST:
            result.offsets[tp] = earliest
        elif mode is StartupMode.LATEST:
            result.offsets[tp] = latest
        elif mode is StartupMode.TIMESTAMP:
            found = (by_timestamp or {}).get(tp, -1)
            result.offsets[tp] = found if found >= 0 else latest  # no record at or after it: latest
        elif mode is StartupMode.SPECIFIC_OFFSETS and tp[1] in settings.startup_specific_offsets:
            offset = settings.startup_specific_offsets[tp[1]]
            if earliest <= offset <= latest:
                result.offsets[tp] = offset
            else:  # Flink resets out-of-range specific offsets to EARLIEST
                result.offsets[tp] = earliest
                result.warnings.append(
                    f"Specific offset {offset} of partition {describe(tp)} is out of range "
                    f"[{earliest}, {latest}]; starting from the earliest offset {earliest}."
                )
        elif tp in (committed or {}):
            offset = (committed or {})[tp]
            if mode is StartupMode.SPECIFIC_OFFSETS:
                unlisted.append(tp)
            if earliest <= offset <= latest:
                result.offsets[tp] = offset
            elif mode is StartupMode.SPECIFIC_OFFSETS or settings.offset_reset is OffsetReset.EARLIEST:
                result.offsets[tp] = earliest
                result.warnings.append(_reset_warning(tp, offset, earliest, latest, "earliest", earliest))
            elif settings.offset_reset is OffsetReset.LATEST:
                result.offsets[tp] = latest
                result.warnings.append(_reset_warning(tp, offset, earliest, latest, "latest", latest))
            else:
                raise KafkaSourceError(
                    f"The committed offset {offset} of consumer group '{settings.group_id}' for partition "
                    f"{describe(tp)} is out of range [{earliest}, {latest}] (the records were deleted), and "
                    "'properties.auto.offset.reset' is not set. Set it to 'earliest' or 'latest'."
                )
        elif mode is StartupMode.SPECIFIC_OFFSETS:
            unlisted.append(tp)
            result.offsets[tp] = earliest  # no committed offset either: EARLIEST
        elif settings.offset_reset is OffsetReset.EARLIEST:
            result.offsets[tp] = earliest
        elif settings.offset_reset is OffsetReset.LATEST:
            result.offsets[tp] = latest
        else:
            missing_commit.append(tp)
    if missing_commit:
        raise KafkaSourceError(
            f"Consumer group '{settings.group_id}' has no committed offset for partition(s) "
            f"{', '.join(describe(tp) for tp in missing_commit)}, and 'scan.startup.mode' is 'group-offsets' "
            "with no reset strategy. Set 'properties.auto.offset.reset' to 'earliest' or 'latest', or choose "
            "another 'scan.startup.mode' (e.g. 'earliest-offset')."
        )
    if unlisted:
        result.warnings.append(
            f"'scan.startup.specific-offsets' lists no offset for partition(s) "
            f"{', '.join(describe(tp) for tp in unlisted)}; they start from the committed offset of the "
            "consumer group, else from the earliest offset."
        )
    known = {tp[1] for tp in result.offsets}
    extra = sorted(set(settings.startup_specific_offsets) - known)
    if mode is StartupMode.SPECIFIC_OFFSETS and extra:
        result.warnings.append(
            f"'scan.startup.specific-offsets' names partition(s) {extra} that topic "
            f"'{settings.subscription.topics[0]}' does not have; ignored."
        )
    return result


def _reset_warning(tp: TopicPartition, offset: int, earliest: int, latest: int, to: str, value: int) -> str:
    return (
        f"Committed offset {offset} of partition {describe(tp)} is out of range [{earliest}, {latest}]; "
        f"starting from the {to} offset {value}."
    )


def resolve_bounds(
    settings: SourceSettings,
    partitions: Iterable[TopicPartition],
    watermarks: Mapping[TopicPartition, Watermarks],
    committed: Mapping[TopicPartition, int] | None = None,
    by_timestamp: Mapping[TopicPartition, int] | None = None,
) -> Offsets | None:
    """End offsets (exclusive) of a bounded scan, resolved at the start of a run; None when unbounded.

    A partition absent from the result is not read at all (Flink: partitions without an entry in
    'scan.bounded.specific-offsets').
    """
    mode = settings.bounded_mode
    if mode is BoundedMode.UNBOUNDED:
        return None
    bounds: Offsets = {}
    missing: list[TopicPartition] = []
    for tp in sorted(partitions):
        latest = watermarks[tp][1]
        if mode is BoundedMode.LATEST:
            bounds[tp] = latest
        elif mode is BoundedMode.TIMESTAMP:
            found = (by_timestamp or {}).get(tp, -1)
            bounds[tp] = found if found >= 0 else latest
        elif mode is BoundedMode.SPECIFIC_OFFSETS:
            if tp[1] in settings.bounded_specific_offsets:
                bounds[tp] = settings.bounded_specific_offsets[tp[1]]
        elif tp in (committed or {}):
            bounds[tp] = (committed or {})[tp]
        else:
            missing.append(tp)
    if missing:
        raise KafkaSourceError(
            f"'scan.bounded.mode' is 'group-offsets' but consumer group '{settings.group_id}' has no "
            f"committed offset for partition(s) {', '.join(describe(tp) for tp in missing)}."
        )
    return bounds


# --------------------------------------------------------------------------------------------------
# Planning one micro-batch


@dataclass
class Step:
    """End offsets of the next micro-batch and the warnings the caller logs."""

    end: Offsets
    warnings: list[str] = field(default_factory=list)


def next_offsets(
    start: Mapping[TopicPartition, int],
    subscription: Subscription,
    assigned: Collection[TopicPartition],
    watermarks: Mapping[TopicPartition, Watermarks],
    cap: Mapping[TopicPartition, int] | None,
    fail_on_data_loss: bool,
    max_rows: int | None = None,
    min_rows: int | None = None,
) -> Step:
    """End offsets of the next micro-batch that starts at `start` (the end of the previous one).

    * `assigned`: the partitions currently subscribed (fixed between discoveries); `watermarks` holds
      those that exist now (a partition missing from it was deleted).
    * partitions of `assigned` unknown to `start` (added, or a topic newly matching the pattern) start
      from their EARLIEST offset; partitions of `start` no longer subscribed are dropped with a warning.
    * `cap`: end offsets not to go beyond (bounded scan, Trigger.AvailableNow target); a partition absent
      from a cap is not read further.
    * `max_rows` splits a limited budget over the partitions in proportion to their backlog; `min_rows`
      returns `start` while fewer records are available.
    * data loss (start beyond the latest offset, or before the earliest, or the partition gone) raises
      DataLossError, or with `fail_on_data_loss` false warns and continues from the earliest offset.
    """
    step = Step({})
    begin: Offsets = {}
    for tp in sorted(set(start) | set(assigned)):
        if tp not in assigned:
            if subscription.matches(tp[0]):
                _lost(step, fail_on_data_loss, tp, start[tp], None, "the partition no longer exists")
            else:
                step.warnings.append(
                    f"Partition {describe(tp)} is in the checkpoint but no longer matches {subscription}; "
                    "it is no longer read."
                )
            continue
        if tp not in watermarks:
            if tp in start:
                _lost(step, fail_on_data_loss, tp, start[tp], None, "the partition no longer exists")
            continue
        earliest, latest = watermarks[tp]
        if tp not in start:
            begin[tp] = earliest
            continue
        offset = start[tp]
        if offset > latest:
            _lost(
                step,
                fail_on_data_loss,
                tp,
                offset,
                (earliest, latest),
                "the offset is beyond the latest offset (was the topic deleted and recreated?)",
            )
            begin[tp] = earliest
        elif offset < earliest:
            _lost(
                step,
                fail_on_data_loss,
                tp,
                offset,
                (earliest, latest),
                "the records were deleted (retention or compaction of the log start)",
            )
            begin[tp] = offset  # the reader skips to the earliest offset when it gets there
        else:
            begin[tp] = offset
    available: Offsets = {}
    for tp, offset in begin.items():
        limit = watermarks[tp][1]
        if cap is not None:
            limit = min(limit, cap.get(tp, offset))
        available[tp] = max(0, limit - max(offset, watermarks[tp][0]))
    total = sum(available.values())
    if min_rows is not None and total < min_rows:
        return Step(dict(start), step.warnings)
    take = available if max_rows is None or total <= max_rows else proportional_split(available, max_rows)
    for tp, offset in begin.items():
        begin_at = max(offset, watermarks[tp][0]) if take[tp] else offset
        step.end[tp] = begin_at + take[tp]
    return step


def _lost(
    step: Step,
    fail: bool,
    tp: TopicPartition,
    expected: int,
    available: Watermarks | None,
    why: str,
) -> None:
    message = data_loss_message(tp, expected, available, why)
    if fail:
        raise DataLossError(message)
    step.warnings.append(f"{message} Continuing from the earliest available offset.")


def data_loss_message(tp: TopicPartition, expected: int, available: Watermarks | None, why: str) -> str:
    """The one wording for lost data, used by the planner (driver) and the reader (executors)."""
    where = f"available offsets are [{available[0]}, {available[1]})" if available else "no offsets are available"
    return (
        f"Data loss in topic '{tp[0]}' partition {tp[1]}: expected to read from offset {expected}, but "
        f"{where}; {why}. Set 'scan.fail-on-data-loss' = 'false' to skip lost records and continue."
    )


def proportional_split(available: Mapping[TopicPartition, int], budget: int) -> Offsets:
    """Split `budget` records over partitions in proportion to their backlog, never exceeding it.

    Like Spark's maxOffsetsPerTrigger, but with largest-remainder rounding so a batch never holds more
    than `budget` records; remainders go to the partitions with the largest backlog first.
    """
    total = sum(available.values())
    if total <= budget:
        return dict(available)
    shares = {tp: budget * size / total for tp, size in available.items()}
    take = {tp: math.floor(share) for tp, share in shares.items()}
    left = budget - sum(take.values())
    by_remainder = sorted(available, key=lambda tp: (-(shares[tp] - take[tp]), -available[tp], tp))
    for tp in by_remainder[:left]:
        take[tp] += 1
    return take


# --------------------------------------------------------------------------------------------------
# Ranges read by one micro-batch


@dataclass(frozen=True)
class OffsetRange:
    """Records [start, end) of one partition; one Spark task reads one range."""

    topic: str
    partition: int
    start: int
    end: int

    @property
    def size(self) -> int:
        return self.end - self.start


def needs_earliest(start: Mapping[TopicPartition, int], end: Mapping[TopicPartition, int]) -> list[TopicPartition]:
    """Partitions whose range begins at their earliest offset (new ones, and ones reset after data loss)."""
    return sorted(tp for tp, offset in end.items() if tp not in start or start[tp] > offset)


def batch_ranges(
    start: Mapping[TopicPartition, int],
    end: Mapping[TopicPartition, int],
    earliest: Mapping[TopicPartition, int],
) -> list[OffsetRange]:
    """The non-empty ranges between two checkpointed offsets; `earliest` covers `needs_earliest`."""
    ranges = []
    for tp in sorted(end):
        stop = end[tp]
        begin = start.get(tp)
        if begin is None or begin > stop:
            begin = min(earliest[tp], stop)
        if begin < stop:
            ranges.append(OffsetRange(tp[0], tp[1], begin, stop))
    return ranges


def split_ranges(ranges: list[OffsetRange], min_partitions: int | None) -> list[OffsetRange]:
    """Split large ranges so there are about `min_partitions` tasks (Spark's KafkaOffsetRangeCalculator)."""
    if min_partitions is None or len(ranges) >= min_partitions:
        return ranges
    total = sum(r.size for r in ranges)
    result = []
    for r in ranges:
        parts = max(round(r.size / total * min_partitions), 1) if total else 1
        remaining, begin = r.size, r.start
        for part in range(parts):
            size = remaining // (parts - part)
            remaining -= size
            stop = min(begin + size, r.end)
            if stop > begin:
                result.append(OffsetRange(r.topic, r.partition, begin, stop))
            begin = stop
    return result
