"""Committing processed offsets to the Kafka consumer group, the way Flink's Kafka consumer does.

Kafka's committed offsets are not the source of truth (Spark's checkpoint is); they exist so that lag
monitoring and other tools see the query's progress, and so that `group-offsets` can start from them.
Commit modes, as Flink's `OffsetCommitModes.fromConfiguration`:

* ON_CHECKPOINTS: `properties.group.id` set and `properties.commit.offsets.on.checkpoint` not 'false'.
  The offsets of a micro-batch (next offset to read = last processed + 1) are committed once Spark has
  written `commits/N`, i.e. once the batch is complete in the sink. The reader notices this when Spark
  plans the next batch (see `connector.connectors.kafka.source`); `commit_offsets_now` commits the last batch of a
  cleanly stopped query, which Spark never reports as complete to the source.
* KAFKA_PERIODIC: commit-on-checkpoint disabled and `properties.enable.auto.commit` = 'true'. The Kafka
  client in each executor commits, every `auto.commit.interval.ms`, the offsets of the records it has
  fetched for the task it runs. Those offsets may be ahead of what the sink has written (a failed batch
  is re-read from the checkpoint, not from them) and the last ones of a task may not be committed when the
  next task reassigns the cached consumer; they are a progress indication only, as in Flink.
* DISABLED: otherwise (in particular without a group id); nothing is committed.

Commits are asynchronous and never fail the query. At most one commit is in flight; when a newer one is
requested meanwhile, it waits, replacing (with a warning) any older one still waiting, as Flink's consumer
thread does. Results arrive through the `on_commit` callback, served by `poll()`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from enum import Enum

from confluent_kafka import Consumer, KafkaError, KafkaException
from confluent_kafka import TopicPartition as KafkaTopicPartition

from connector.connectors.kafka.client_log import logged
from connector.connectors.kafka.errors import KafkaSourceError
from connector.connectors.kafka.offsets import Offsets, describe, from_json
from connector.connectors.kafka.settings import SourceSettings

log = logging.getLogger(__name__)


class CommitMode(Enum):
    ON_CHECKPOINTS = "ON_CHECKPOINTS"
    KAFKA_PERIODIC = "KAFKA_PERIODIC"
    DISABLED = "DISABLED"


def commit_mode(settings: SourceSettings) -> CommitMode:
    """Which of Flink's offset commit modes applies (a Spark micro-batch always is a checkpoint)."""
    if settings.group_id is None:
        return CommitMode.DISABLED
    if settings.commit_on_checkpoint:
        return CommitMode.ON_CHECKPOINTS
    if settings.enable_auto_commit:
        return CommitMode.KAFKA_PERIODIC
    return CommitMode.DISABLED


def committer_config(settings: SourceSettings) -> dict[str, str | bool]:
    """A consumer that never subscribes: it only commits (as a member-less 'simple' consumer)."""
    return {
        **settings.client_config("committer"),
        "group.id": settings.group_id or "",
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
    }


def to_kafka(offsets: Offsets) -> list[KafkaTopicPartition]:
    return [KafkaTopicPartition(topic, partition, offset) for (topic, partition), offset in sorted(offsets.items())]


class OffsetCommitter:
    """Asynchronous ON_CHECKPOINTS commits from the driver-side reader; its client is created lazily."""

    def __init__(self, settings: SourceSettings) -> None:
        self._settings = settings
        self._consumer: Consumer | None = None
        self._in_flight: Offsets | None = None
        self._waiting: Offsets | None = None
        self._last_requested: Offsets | None = None
        self.succeeded = 0
        self.failed = 0
        self.committed: Offsets = {}  # what the group holds from this committer's successful commits

    def commit(self, offsets: Offsets) -> None:
        """Commit `offsets` (next offsets to read) soon; the same offsets are never committed twice."""
        if not offsets or offsets == self._last_requested:
            return
        self._last_requested = dict(offsets)
        if self._in_flight is None:
            self._send(dict(offsets))
            return
        if self._waiting is not None:
            log.warning(
                "Committing offsets to Kafka takes longer than a micro-batch. Skipping the commit of the "
                "previous offsets %s because newer offsets of a completed batch are available; this does "
                "not compromise the checkpoint.",
                _show(self._waiting),
            )
        self._waiting = dict(offsets)

    def poll(self) -> None:
        """Serve commit callbacks and send the waiting commit once the previous one completed."""
        if self._consumer is not None:
            self._consumer.poll(0)
        if self._in_flight is None and self._waiting is not None:
            waiting, self._waiting = self._waiting, None
            self._send(waiting)

    def flush(self, timeout: float) -> None:
        """Wait up to `timeout` seconds for pending commits; used when the query has nothing to read, so
        the last commit is not lost when Spark ends the runner (Trigger.AvailableNow finishing)."""
        deadline = time.monotonic() + timeout
        while self._in_flight is not None and self._consumer is not None and time.monotonic() < deadline:
            self._consumer.poll(0.05)
            self.poll()

    def _send(self, offsets: Offsets) -> None:
        self._in_flight = offsets
        try:
            self._client().commit(offsets=to_kafka(offsets), asynchronous=True)
        except KafkaException as error:
            self._done(offsets, error.args[0] if error.args else None, [])

    def _client(self) -> Consumer:
        if self._consumer is None:
            config = {**committer_config(self._settings), "on_commit": self._on_commit}
            self._consumer = Consumer(logged(config))
        return self._consumer

    def _on_commit(self, error: KafkaError | None, partitions: list[KafkaTopicPartition]) -> None:
        if self._in_flight is not None:
            self._done(self._in_flight, error, partitions)

    def _done(self, offsets: Offsets, error: object, partitions: list[KafkaTopicPartition]) -> None:
        self._in_flight = None
        failed = [tp for tp in partitions if tp.error is not None]
        if error is None and not failed:
            self.succeeded += 1
            self.committed.update(offsets)
            return
        self.failed += 1
        detail = error if error is not None else ", ".join(f"{tp.topic}-{tp.partition}: {tp.error}" for tp in failed)
        log.warning(
            "Committing offsets %s to consumer group '%s' failed: %s. Processing continues; only the "
            "group's progress (lag monitoring) is behind.",
            _show(offsets),
            self._settings.group_id,
            detail,
        )


def _show(offsets: Offsets) -> str:
    return ", ".join(f"{describe(tp)}@{offset}" for tp, offset in sorted(offsets.items()))


def commit_offsets_now(options: Mapping[str, str], offsets_json: str) -> None:
    """Commit a batch's end offsets synchronously, e.g. those of the last batch after a clean stop.

    `offsets_json` is the source's offset as Spark reports it (`progress.sources[i].endOffset`). Does
    nothing unless the commit mode is ON_CHECKPOINTS; a failure is logged, never raised.
    """
    settings = SourceSettings.from_options(options)
    if commit_mode(settings) is not CommitMode.ON_CHECKPOINTS:
        return
    offsets = from_json(offsets_json)
    if not offsets:
        return
    consumer = Consumer(logged(committer_config(settings)))
    try:
        result = consumer.commit(offsets=to_kafka(offsets), asynchronous=False)
        failed = [tp for tp in result or [] if tp.error is not None]
        if failed:
            raise KafkaSourceError(", ".join(f"{tp.topic}-{tp.partition}: {tp.error}" for tp in failed))
    except (KafkaException, KafkaSourceError) as error:
        log.warning(
            "Committing offsets %s to consumer group '%s' failed: %s",
            _show(offsets),
            settings.group_id,
            error,
        )
    finally:
        consumer.close()
