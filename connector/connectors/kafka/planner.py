"""Driver side of the `flink-kafka` source: the runner's planning state, and the Kafka requests behind it.

`Planner` lives in the long-lived runner process (and, for a batch read, in the planning worker) and is
never pickled; it asks the broker (an admin client) for partitions, watermarks and committed offsets and
leaves the decisions to `connector.connectors.kafka.offsets`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import replace
from typing import TypeVar

from confluent_kafka import ConsumerGroupTopicPartitions, IsolationLevel, KafkaError, KafkaException
from confluent_kafka import TopicPartition as KafkaTopicPartition
from confluent_kafka.admin import AdminClient, ClusterMetadata, OffsetSpec, TopicMetadata
from pyspark.sql.streaming.datasource import ReadLimit, ReadMaxRows, ReadMinRows

from connector.connectors.kafka.commit import CommitMode, OffsetCommitter, commit_mode
from connector.connectors.kafka.errors import KafkaSourceError
from connector.connectors.kafka.offsets import (
    Offsets,
    TopicPartition,
    Watermarks,
    batch_ranges,
    describe,
    needs_earliest,
    next_offsets,
    resolve_bounds,
    resolve_startup,
    split_ranges,
    to_spark,
)
from connector.connectors.kafka.reader import REQUEST_TIMEOUT_SECONDS, KafkaInputPartition
from connector.connectors.kafka.retries import Refusals, Refused, is_transient, raise_transient_topic_error, retrying
from connector.connectors.kafka.settings import SourceSettings

log = logging.getLogger(__name__)
T = TypeVar("T")

# Planner (admin client) defaults a user may override with properties.*: librdkafka drops the bootstrap
# connection once it knows the brokers, and the first metadata request then often waits for the next
# connection, which it delays by reconnect.backoff.ms / 2 (at least 11 ms): 50 ms by default, before every
# query's first batch (measured). The backoff still grows exponentially on failures.
ADMIN_DEFAULTS = {"reconnect.backoff.ms": "10"}
COMMIT_FLUSH_SECONDS = 5.0
# One metadata request's wait (asked in slices: a refused authentication or TLS handshake ends it, `Refusals`).
METADATA_ATTEMPT_SECONDS = 8.0
# Kafka's own topics, which a topic-pattern never matches (Java: listTopics() excludes internal topics).
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})
# librdkafka consumer-only properties; an AdminClient would warn about each one.
CONSUMER_ONLY_PROPERTIES = frozenset(
    {
        "group.instance.id",
        "partition.assignment.strategy",
        "session.timeout.ms",
        "heartbeat.interval.ms",
        "group.protocol.type",
        "group.protocol",
        "group.remote.assignor",
        "coordinator.query.interval.ms",
        "max.poll.interval.ms",
        "auto.commit.interval.ms",
        "enable.auto.offset.store",
        "queued.min.messages",
        "queued.max.messages.kbytes",
        "fetch.wait.max.ms",
        "fetch.queue.backoff.ms",
        "fetch.message.max.bytes",
        "max.partition.fetch.bytes",
        "fetch.max.bytes",
        "fetch.min.bytes",
        "fetch.error.backoff.ms",
        "enable.partition.eof",
        "check.crcs",
        "allow.auto.create.topics",
    }
)


class Planner:
    """The runner's state: partitions, bounds, the Trigger.AvailableNow target, commits and metrics."""

    def __init__(self, settings: SourceSettings) -> None:
        self.settings = settings
        self.mode = commit_mode(settings)
        self.committer = OffsetCommitter(settings) if self.mode is CommitMode.ON_CHECKPOINTS else None
        self._admin: AdminClient | None = None
        self._refusals = Refusals(settings.client_properties, settings.bootstrap_servers)
        self._assigned: list[TopicPartition] | None = None
        self._listed_at = 0.0
        self._initial: Offsets | None = None
        self._bounds: Offsets | None = None
        self._bounds_resolved = False
        self._target: Offsets | None = None
        self._watermarks: dict[TopicPartition, Watermarks] = {}
        self._planned: Offsets = {}
        # Ends of the batches this process ran (`partitions`): only those are committed, never one restored
        # from the checkpoint, which may be stale (its topic deleted and recreated) and is the previous run's.
        self._ran: list[Offsets] = []
        self._end_of_input_rows = 0  # in the batch just planned (`metrics`)
        self._warned: set[str] = set()

    # ---- Spark calls

    def initial(self) -> Offsets:
        """Resolve the startup offsets once: Spark asks twice and must get the same answer."""
        if self._initial is None:
            partitions = self._assignment()
            self._require_topics(partitions, known=set())
            watermarks = self._fetch_watermarks(partitions)
            startup = self.settings.startup_mode.value
            resolution = resolve_startup(
                self.settings,
                [tp for tp in partitions if tp in watermarks],
                watermarks,
                committed=self._fetch_committed(partitions)
                if startup in ("group-offsets", "specific-offsets")
                else None,
                by_timestamp=self._fetch_by_timestamp(partitions, self.settings.startup_timestamp_ms)
                if self.settings.startup_timestamp_ms is not None
                else None,
            )
            self._warn(resolution.warnings)
            self._initial = resolution.offsets
            log.info("Fresh start (%s): %s", startup, to_spark(self._initial))
        return self._initial

    def latest(self, start: Offsets, limit: ReadLimit) -> Offsets:
        if self.committer is not None:
            if start in self._ran:
                self.committer.commit(start)  # `start` ends a batch of this run whose commits/N is durable
            self.committer.poll()
        partitions = self._assignment()
        self._require_topics(partitions, known=set(start))
        self._watermarks = self._fetch_watermarks(partitions)
        step = next_offsets(
            start,
            self.settings.subscription,
            partitions,
            self._watermarks,
            self._cap(partitions),
            self.settings.fail_on_data_loss,
            max_rows=limit.max_rows if isinstance(limit, ReadMaxRows) else None,
            # waiting for more rows would end a Trigger.AvailableNow run before its target
            min_rows=limit.min_rows if isinstance(limit, ReadMinRows) and self._target is None else None,
        )
        self._warn(step.warnings)
        self._planned = step.end
        self._end_of_input_rows = int(
            self.settings.end_of_input_row and step.end != start and self._completes_bounds(step.end)
        )
        if self.committer is not None and step.end == start:
            self.committer.flush(COMMIT_FLUSH_SECONDS)  # idle: nothing is delayed by waiting
        return step.end

    def prepare_available_now(self) -> None:
        """Fix the target: the bounds of a bounded scan, else the latest offsets right now."""
        partitions = self._assignment()
        bounds = self._resolved_bounds(partitions)
        if bounds is not None:
            self._target = dict(bounds)
        else:
            watermarks = self._fetch_watermarks(partitions)
            self._target = {tp: latest for tp, (_, latest) in watermarks.items()}
        log.info("Trigger.AvailableNow target: %s", to_spark(self._target))

    def batch_range(self) -> tuple[Offsets, Offsets]:
        """[start, end) of a batch read: the startup offsets, up to the Trigger.AvailableNow target."""
        start = self.initial()
        self.prepare_available_now()
        target = self._target or {}
        return start, {tp: max(offset, target.get(tp, offset)) for tp, offset in start.items()}

    def partitions(self, start: Offsets, end: Offsets) -> list[KafkaInputPartition]:
        reset = needs_earliest(start, end)
        watermarks = self._fetch_watermarks(reset) if reset else {}
        earliest = {tp: watermarks[tp][0] if tp in watermarks else end[tp] for tp in reset}
        ranges = split_ranges(batch_ranges(start, end, earliest), self.settings.min_partitions)
        self._ran = [*self._ran[-1:], dict(end)]  # Spark commits one batch behind: the last two suffice
        return [KafkaInputPartition(r.topic, r.partition, r.start, r.end) for r in ranges]

    def with_end_of_input(self, planned: list[KafkaInputPartition], end: Offsets) -> list[KafkaInputPartition]:
        """`planned`, the first range carrying the end-of-input row when `end` completes the bounded scan."""
        if not end or not self._completes_bounds(end):
            return planned
        if not planned:  # every range empty (e.g. records skipped as lost): the row alone
            topic, partition = min(end)
            return [KafkaInputPartition(topic, partition, end[(topic, partition)], end[(topic, partition)], True)]
        return [replace(planned[0], end_of_input=True), *planned[1:]]

    def _completes_bounds(self, end: Offsets) -> bool:
        """`end` is at or past the end of the bounded scan in every partition."""
        bounds = self._resolved_bounds(self._assignment())
        return bounds is not None and all(end.get(tp, bound) >= bound for tp, bound in bounds.items())

    def commit(self, end: Offsets) -> None:
        if self.committer is not None and end in self._ran:
            self.committer.commit(end)
            self.committer.poll()

    def metrics(self) -> dict:
        if self.committer is not None:
            self.committer.poll()
        latest = {tp: watermarks[1] for tp, watermarks in self._watermarks.items()}
        lag = {tp: max(0, latest[tp] - offset) for tp, offset in self._planned.items() if tp in latest}
        return {
            "latest": to_spark(latest),
            "current": to_spark(self._planned),
            "lag": to_spark(lag),
            "committed": to_spark(self.committer.committed if self.committer else {}),
            "commitsSucceeded": self.committer.succeeded if self.committer else 0,
            "commitsFailed": self.committer.failed if self.committer else 0,
            "commitMode": self.mode.value,
            "endOfInputRows": self._end_of_input_rows,
        }

    # ---- partitions, bounds and the Kafka requests behind them

    def _assignment(self) -> list[TopicPartition]:
        """Subscribed partitions: listed at the start of the run, then at each discovery interval."""
        interval = self.settings.discovery_interval_ms / 1000.0
        now = time.monotonic()
        if self._assigned is None or (interval > 0 and now - self._listed_at >= interval):
            assigned = self._list_partitions()
            if self._assigned is not None and set(assigned) - set(self._assigned):
                log.info("Discovered partitions %s", sorted(set(assigned) - set(self._assigned)))
            self._assigned, self._listed_at = assigned, now
        return self._assigned

    def _list_partitions(self) -> list[TopicPartition]:
        subscription = self.settings.subscription

        def request() -> dict[str, TopicMetadata]:
            metadata = self._metadata()
            raise_transient_topic_error(metadata.topics, subscription.matches)
            return {name: meta for name, meta in metadata.topics.items() if meta.error is None}

        topics = self._retrying(request, "metadata request")
        if subscription.pattern is not None:
            names = [n for n in topics if n not in INTERNAL_TOPICS and subscription.matches(n)]
        else:
            names = [n for n in subscription.topics if n in topics]
        return sorted((name, partition) for name in names for partition in topics[name].partitions)

    def _require_topics(self, partitions: Sequence[TopicPartition], known: set[TopicPartition]) -> None:
        """A listed topic must exist, unless the checkpoint read it (then its loss is data loss)."""
        present = {tp[0] for tp in partitions} | {tp[0] for tp in known}
        missing = [name for name in self.settings.subscription.topics if name not in present]
        if missing:
            raise KafkaSourceError(
                f"Topic(s) {', '.join(repr(n) for n in missing)} do not exist on Kafka at "
                f"{self.settings.bootstrap_servers}. Create them first, or fix option 'topic'."
            )

    def _cap(self, partitions: Sequence[TopicPartition]) -> Offsets | None:
        bounds = self._resolved_bounds(partitions)
        if self._target is None:
            return bounds
        return {tp: offset for tp, offset in self._target.items() if bounds is None or tp in bounds}

    def _resolved_bounds(self, partitions: Sequence[TopicPartition]) -> Offsets | None:
        """End offsets of a bounded scan, resolved once per run from the partitions known then."""
        if not self._bounds_resolved and self.settings.bounded:
            watermarks = self._fetch_watermarks(partitions)
            present = [tp for tp in partitions if tp in watermarks]
            self._bounds = resolve_bounds(
                self.settings,
                present,
                watermarks,
                committed=self._fetch_committed(present)
                if self.settings.bounded_mode.value == "group-offsets"
                else None,
                by_timestamp=self._fetch_by_timestamp(present, self.settings.bounded_timestamp_ms)
                if self.settings.bounded_timestamp_ms is not None
                else None,
            )
            log.info("Bounded scan (%s) ends at %s", self.settings.bounded_mode.value, to_spark(self._bounds or {}))
        self._bounds_resolved = True
        return self._bounds

    def _fetch_watermarks(self, partitions: Sequence[TopicPartition]) -> dict[TopicPartition, Watermarks]:
        """(earliest, latest) per partition; partitions that do not exist (any more) are left out."""
        if not partitions:
            return {}
        earliest, latest = self._list_offsets(partitions, OffsetSpec.earliest(), OffsetSpec.latest(), positions=True)
        return {tp: (earliest[tp], latest[tp]) for tp in partitions if tp in earliest and tp in latest}

    def _fetch_by_timestamp(self, partitions: Sequence[TopicPartition], timestamp_ms: int) -> Offsets:
        """First offset whose record timestamp is >= `timestamp_ms`; -1 where there is none."""
        return self._list_offsets(partitions, OffsetSpec.for_timestamp(timestamp_ms))[0] if partitions else {}

    def _list_offsets(
        self, partitions: Sequence[TopicPartition], *specs: OffsetSpec, positions: bool = False
    ) -> list[Offsets]:
        """The offsets of `partitions` for each spec; every request is sent before any answer is awaited.
        `positions`: the specs ask for log positions (earliest, latest), so an unknown answer is retried."""
        isolation = IsolationLevel.READ_COMMITTED if self.settings.read_committed else IsolationLevel.READ_UNCOMMITTED

        def request() -> list[Offsets]:
            requests = [
                self._client().list_offsets(
                    {KafkaTopicPartition(t, p): spec for t, p in partitions},
                    isolation_level=isolation,
                    request_timeout=REQUEST_TIMEOUT_SECONDS,
                )
                for spec in specs
            ]
            answers = [self._answers(futures) for futures in requests]
            if positions:
                for offsets in answers:
                    require_known_offsets(offsets)
            return answers

        return self._retrying(request, "offsets request")

    def _answers(self, futures: dict[KafkaTopicPartition, Future]) -> Offsets:
        result: Offsets = {}
        for ktp, future in futures.items():
            try:
                result[(ktp.topic, ktp.partition)] = future.result().offset
            except KafkaException as error:
                kafka_error = error.args[0] if error.args else None
                if isinstance(kafka_error, KafkaError) and kafka_error.code() in (
                    KafkaError.UNKNOWN_TOPIC_OR_PART,
                    KafkaError._UNKNOWN_PARTITION,
                    KafkaError._UNKNOWN_TOPIC,
                ):
                    continue  # deleted: the planner decides whether that is data loss
                raise
        return result

    def _fetch_committed(self, partitions: Sequence[TopicPartition]) -> Offsets:
        """The group's committed offsets; partitions without one are left out."""
        if not partitions or self.settings.group_id is None:
            return {}
        group = ConsumerGroupTopicPartitions(self.settings.group_id, [KafkaTopicPartition(t, p) for t, p in partitions])

        def request() -> Offsets:
            futures = self._client().list_consumer_group_offsets([group], request_timeout=REQUEST_TIMEOUT_SECONDS)
            answer = futures[group.group_id].result()
            return {(tp.topic, tp.partition): tp.offset for tp in answer.topic_partitions if tp.offset >= 0}

        return self._retrying(request, f"request for the committed offsets of group '{group.group_id}'")

    def _retrying(self, request: Callable[[], T], what: str) -> T:
        """`request()`, retried through transient errors for 'scan.retry-timeout' (`retries`); then an error
        for the user."""
        timeout = self.settings.retry_timeout_ms / 1000.0
        try:
            result = retrying(request, what, timeout, before_retry=self._before_retry)
            if self._admin is not None:
                self._admin.poll(0)  # serves the client's log (`client_log`)
            return result
        except KafkaException as error:
            waited = f" (retried for {timeout:.0f} s, 'scan.retry-timeout')" if is_transient(error) else ""
            raise KafkaSourceError(f"Kafka {what} to {self.settings.bootstrap_servers} failed{waited}: "
                                   f"{_reason(error)}") from None

    def _metadata(self) -> ClusterMetadata:
        """The cluster's metadata (one attempt); KafkaSourceError as soon as the broker refused the client."""
        try:
            return self._refusals.list_topics(self._client(), METADATA_ATTEMPT_SECONDS)
        except Refused as refused:
            raise KafkaSourceError(str(refused)) from None

    def _before_retry(self) -> None:
        """Stop retrying when the broker refused the client (a failed authentication or TLS handshake, which
        librdkafka reports as a transport failure, through the client's error callback); else make the next
        request use a new client, with fresh metadata."""
        if self._admin is not None:
            self._admin.poll(0)  # serves the error callback
        if self._refusals.message is not None:
            raise KafkaSourceError(self._refusals.message)
        self._admin = None

    def _client(self) -> AdminClient:
        if self._admin is None:
            config: dict[str, str | int | float | bool] = {
                **ADMIN_DEFAULTS,
                **{
                    key: value
                    for key, value in self.settings.client_config("admin").items()
                    if key not in CONSUMER_ONLY_PROPERTIES
                },
            }
            self._admin = AdminClient(self._refusals.client_config(config))
        return self._admin


    def _warn(self, warnings: Sequence[str]) -> None:
        """Log each distinct warning once per run (planning repeats while a batch waits)."""
        for warning in warnings:
            if warning not in self._warned:
                self._warned.add(warning)
                log.warning("%s", warning)


def _reason(error: KafkaException) -> str:
    """What failed, in words, with what to check."""
    kafka_error = error.args[0] if error.args else None
    if not isinstance(kafka_error, KafkaError):
        return str(error)
    code, text = kafka_error.code(), f"{kafka_error.str()} ({kafka_error.name()})"
    if code in (KafkaError._AUTHENTICATION, KafkaError.SASL_AUTHENTICATION_FAILED):
        return f"authentication failed: {text}. Check the security options 'properties.*'."
    if code in (KafkaError._TRANSPORT, KafkaError._ALL_BROKERS_DOWN, KafkaError._TIMED_OUT, KafkaError._RESOLVE):
        return f"{text}. Check that the broker is reachable at option 'properties.bootstrap.servers'."
    return text


def require_known_offsets(offsets: Offsets) -> None:
    """Raise a transient error where an earliest or latest offset came back unknown (-1001, no error): a broker
    back from a restart can answer so before it has loaded its logs, and judging a checkpoint against that would
    call every record lost (the reader treats its watermarks the same way)."""
    unknown = sorted(tp for tp, offset in offsets.items() if offset < 0)
    if unknown:
        names = ", ".join(describe(tp) for tp in unknown)
        error = KafkaError(KafkaError.OFFSET_NOT_AVAILABLE, f"the broker gave no offset for {names}", retriable=True)
        raise KafkaException(error)
