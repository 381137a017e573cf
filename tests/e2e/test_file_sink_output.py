"""Filesystem sinks across checkpoints and crashes, end to end (real broker, real Spark): no run skips its output
silently, and a reader that lists the directory (pyarrow, ignoring `_spark_metadata`) sees each record once.

Spark's file sink skips batch ids its `_spark_metadata` log already has; a second checkpoint numbers its
batches from 0 again. These runs go through `kafka-sql run` in this process (see test_run_e2e.run).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow.parquet as pq
import pytest
from support.commands import run
from support.pipelines import named
from support.topics import Produce, committed, produce_json

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# No 'pipeline.name': the checkpoint is named after the file, as for most users.
COPY_TO_FILES = """
CREATE TABLE events (id BIGINT, name STRING) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("topic") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'properties.group.id' = '{{ var("group") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE copied (id BIGINT, name STRING
{%- if var("gated", "false") == "true" %}, CONSTRAINT named EXPECT (name IS NOT NULL){% endif %}
) WITH (
  'connector' = 'filesystem',
  'path' = '{{ var("path") }}',
  'format' = 'parquet'
);

INSERT INTO copied SELECT id, name FROM events;
"""


def spark_ids(spark: SparkSession, path: Path) -> list[int]:
    """Ids as Spark reads the directory: through `_spark_metadata` when it has one."""
    return sorted(row.id for row in spark.read.parquet(str(path)).collect())


def listed_ids(path: Path) -> list[int]:
    """Ids as a reader that lists the directory sees them (pyarrow skips `_` and `.` files only)."""
    return sorted(pq.read_table(str(path)).column("id").to_pylist())


@pytest.fixture
def pipeline(tmp_path: Path, kafka_bootstrap: str, topic_factory: Callable[..., str]) -> dict[str, str]:
    (tmp_path / "copy.sql").write_text(COPY_TO_FILES)
    topic = topic_factory(partitions=2)
    return {"brokers": kafka_bootstrap, "topic": topic, "group": f"files-{topic}", "path": str(tmp_path / "out")}


@pytest.mark.slow
@pytest.mark.parametrize("second", ["renamed file", "new checkpoint dir", "checkpoint deleted"])
def test_a_run_whose_checkpoint_did_not_write_the_output_is_refused_and_nothing_is_lost(
    second: str,
    spark: SparkSession,
    pipeline: dict[str, str],
    produce: Produce,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    sql, checkpoints, out = tmp_path / "copy.sql", tmp_path / "checkpoints", Path(pipeline["path"])
    produce_json(produce, pipeline["topic"], named(range(0, 10), 2))
    assert run(capsys, sql, checkpoints, **pipeline).code == 0
    produce_json(produce, pipeline["topic"], named(range(10, 20), 2))

    if second == "renamed file":
        other_sql, other_checkpoints = tmp_path / "copy_v2.sql", checkpoints
        shutil.copy(sql, other_sql)
    elif second == "new checkpoint dir":
        other_sql, other_checkpoints = sql, tmp_path / "fresh"
    else:
        other_sql, other_checkpoints = sql, checkpoints
        shutil.rmtree(checkpoints)
    refused = run(capsys, other_sql, other_checkpoints, **pipeline)

    assert refused.code == 1
    message = " ".join(refused.err.split())
    owner = "an earlier query of checkpoint" if second == "checkpoint deleted" else "the query of checkpoint"
    assert f"Table 'copied' writes '{out}', whose file sink log (_spark_metadata) was written by {owner}" in message
    assert str(checkpoints / "copy" / "copied") in message
    assert "would write nothing" in message
    assert "run with the checkpoint that wrote it" in message and "another 'path'" in message
    assert committed(pipeline["brokers"], pipeline["group"], pipeline["topic"], 2) == {0: 5, 1: 5}
    assert spark_ids(spark, out) == listed_ids(out) == list(range(10))

    if second == "checkpoint deleted":  # the user's way out: start the output afresh
        shutil.rmtree(out)
        assert run(capsys, sql, checkpoints, **pipeline).code == 0
    else:  # or go on with the checkpoint that wrote it
        assert run(capsys, sql, checkpoints, **pipeline).code == 0
    assert spark_ids(spark, out) == listed_ids(out) == list(range(20))
    assert committed(pipeline["brokers"], pipeline["group"], pipeline["topic"], 2) == {0: 10, 1: 10}


@pytest.mark.slow
def test_files_of_a_batch_that_never_committed_are_deleted_before_the_restart_writes(
    spark: SparkSession, pipeline: dict[str, str], produce: Produce, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What a kill -9 during a batch's write leaves: a part file the sink log does not list. Spark's reader
    ignores it; a reader listing the directory would see its rows twice once the batch runs again."""
    sql, checkpoints, out = tmp_path / "copy.sql", tmp_path / "checkpoints", Path(pipeline["path"])
    produce_json(produce, pipeline["topic"], named(range(0, 10), 2))
    assert run(capsys, sql, checkpoints, **pipeline).code == 0
    written = max(out.glob("part-*.parquet"), key=lambda f: f.stat().st_size)
    orphan = out / f"part-09999-{written.name.split('-', 2)[2]}"
    shutil.copy(written, orphan)
    assert len(listed_ids(out)) > 10  # the orphan's rows, listed twice

    produce_json(produce, pipeline["topic"], named(range(10, 14), 2))
    assert run(capsys, sql, checkpoints, **pipeline).code == 0

    assert not orphan.exists()
    assert spark_ids(spark, out) == listed_ids(out) == list(range(14))


@pytest.mark.slow
def test_a_gated_file_sink_keeps_the_files_another_checkpoint_wrote(
    spark: SparkSession, pipeline: dict[str, str], produce: Produce, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Behind the quality gate, batches are published by id; two checkpoints both have a batch 0."""
    gated = {**pipeline, "gated": "true"}
    produce_json(produce, pipeline["topic"], named(range(0, 10), 2))
    assert run(capsys, tmp_path / "copy.sql", tmp_path / "checkpoints", **gated).code == 0
    shutil.copy(tmp_path / "copy.sql", tmp_path / "again.sql")

    assert run(capsys, tmp_path / "again.sql", tmp_path / "checkpoints", **gated).code == 0

    # Both runs read the topic from its earliest offset, as two Flink jobs would, and both outputs stay.
    assert listed_ids(Path(pipeline["path"])) == sorted([*range(10), *range(10)])
