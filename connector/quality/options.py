"""The `quality.*` options every sink connector accepts: the data-quality gate of a table that is written."""

from __future__ import annotations

from connector.options.declarations import ConfigOption
from connector.options.types import BOOLEAN, ENUM, STRING


class QualityOptions:
    """The data-quality gate of a table that is written (`connector.quality.gate`): its expectations are its
    `CONSTRAINT ... EXPECT` clauses plus the suite file; every micro-batch is checked before it is written."""

    SUITE = ConfigOption(
        "quality.suite",
        STRING,
        "Path of a great-expectations suite JSON file (relative to the pipeline file) whose expectations "
        "every micro-batch written to this table must meet.",
    )
    ON_FAILURE = ConfigOption(
        "quality.on-failure",
        ENUM("fail", "drop", "quarantine"),
        "What a failed suite expectation does: 'fail' stops the query before the batch is written (nothing "
        "is committed; exit code 3); 'drop' leaves the failing rows out (the whole batch for batch-level "
        "expectations); 'quarantine' writes them to 'quality.quarantine.table' instead.",
        default="fail",
    )
    QUARANTINE_TABLE = ConfigOption(
        "quality.quarantine.table",
        STRING,
        "A table of this pipeline that receives quarantined rows, by column name: the table's columns plus "
        "`failed_expectations`, `source_topic`, `source_partition`, `source_offset`, `batch_id`, "
        "`gated_table`.",
    )
    QUARANTINE_MALFORMED = ConfigOption(
        "quality.quarantine.malformed",
        BOOLEAN,
        "Also send the records the query's sources skip as malformed ('<format>.ignore-parse-errors' = 'true') "
        "to 'quality.quarantine.table', in the batch that read them: `failed_expectations` = "
        "['malformed_record'], their `source_topic` / `source_partition` / `source_offset` (the file for "
        "filesystem sources), the undecoded `raw_key` and `raw_value` (BYTES, or STRING as UTF-8), NULL "
        "data columns. They reach the driver with the batch's metrics: meant for the occasional bad record.",
        default=False,
    )
    RESULTS_PATH = ConfigOption(
        "quality.results.path",
        STRING,
        "Directory of the per-batch validation results: one JSON file per micro-batch, under a directory "
        "named after the query. By default `quality/` under the query's checkpoint.",
    )


QUALITY_OPTIONS = tuple(v for v in vars(QualityOptions).values() if isinstance(v, ConfigOption))
