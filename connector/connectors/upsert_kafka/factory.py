"""The `upsert-kafka` connector's factory (Flink's UpsertKafkaDynamicTableFactory)."""

from __future__ import annotations

import dataclasses

from connector.connectors.kafka import describe
from connector.connectors.kafka.factory import (
    _KAFKA_SOURCE_OPTIONS,
    KAFKA_READABLE_METADATA,
    KAFKA_WRITABLE_METADATA,
    _buffer_flush_together,
    _client_properties,
    _dynamic_topic_needs_metadata,
    _group_id_for_committed_offsets,
    _kafka_columns,
    _key_prefix_needs_except_key,
    _primary_key_fields,
    _specific_offsets_single_topic,
    _topic_or_pattern,
    _upsert_primary_key,
)
from connector.connectors.kafka.options import KafkaOptions as K
from connector.options.declarations import FixedValue
from connector.options.factory import Factory, FormatSlot
from connector.quality.options import QUALITY_OPTIONS

FACTORY = Factory(
    "upsert-kafka",
    "A Kafka topic as a changelog keyed by the PRIMARY KEY: a message is an upsert for its key, a null value "
    "(tombstone) a delete. Reads always start at the earliest offset. Writes send INSERT/UPDATE_AFTER as "
    "messages and DELETE as tombstones, partitioned by the key.",
    options=(
        K.TOPIC,
        K.TOPIC_PATTERN,
        K.BOOTSTRAP_SERVERS,
        K.GROUP_ID,
        K.COMMIT_OFFSETS_ON_CHECKPOINT,
        dataclasses.replace(K.VALUE_FORMAT, fallback_keys=()),
        K.KEY_FORMAT.as_required(),
        K.KEY_FIELDS_PREFIX,
        K.VALUE_FIELDS_INCLUDE,
        K.SCAN_BOUNDED_MODE,
        K.SCAN_BOUNDED_SPECIFIC_OFFSETS,
        K.SCAN_BOUNDED_TIMESTAMP_MILLIS,
        K.PARTITION_DISCOVERY_INTERVAL,
        K.SCAN_PARALLELISM,
        K.DELIVERY_GUARANTEE,
        K.TRANSACTIONAL_ID_PREFIX,
        K.TRANSACTION_NAMING_STRATEGY,
        K.SINK_PARALLELISM,
        K.SINK_BUFFER_FLUSH_MAX_ROWS,
        K.SINK_BUFFER_FLUSH_INTERVAL,
        *_KAFKA_SOURCE_OPTIONS,
        *QUALITY_OPTIONS,
    ),
    reader="connector.connectors.kafka.reading",
    writer="connector.connectors.kafka.writing",
    describe_source=describe.describe_source,
    describe_sink=describe.describe_upsert_sink,
    format_slots=(FormatSlot("value", K.VALUE_FORMAT), FormatSlot("key", K.KEY_FORMAT)),
    readable_metadata=KAFKA_READABLE_METADATA,
    writable_metadata=KAFKA_WRITABLE_METADATA,
    passthrough_prefixes=("properties.",),
    forbidden={
        "scan.startup.mode": "upsert-kafka always reads from the earliest offset to keep data integrity.",
        "key.fields": "the key columns are the PRIMARY KEY columns.",
        "sink.partitioner": "rows are partitioned by their key so that updates of a key stay in order.",
        "format": "set 'key.format' and 'value.format'.",
    },
    fixed=(FixedValue(K.SCAN_STARTUP_MODE, "earliest-offset"),),
    rules=(
        _topic_or_pattern,
        _client_properties,
        _specific_offsets_single_topic,
        _key_prefix_needs_except_key,
        _upsert_primary_key,
        _buffer_flush_together,
    ),
    source_rules=(_group_id_for_committed_offsets,),
    sink_rules=(_dynamic_topic_needs_metadata,),
    format_columns=_kafka_columns(_primary_key_fields),
    updates="all",
    carries="messages",
    topic_option=K.TOPIC.key,
    commits_offsets=True,
    record_provenance=True,
    upsert_source=True,
    stand_in={"connector": "upsert-kafka", "key.format": "json", "value.format": "json"},
)
