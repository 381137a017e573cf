"""A benchmark's temporary folder with a Kafka broker of its own in it, both gone when the benchmark ends."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from connector.dev import broker


@contextmanager
def broker_workspace(prefix: str) -> Iterator[tuple[Path, broker.BrokerInfo]]:
    """A new folder (`prefix`...) and a broker whose data lives in it. The folder also takes the runs' SQL files and
    checkpoints, gigabytes after a 10M-record race, so it is removed however the benchmark ends."""
    work = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        info = broker.start(work / "broker", on_progress=print)
        try:
            yield work, info
        finally:
            broker.stop(work / "broker")
    finally:
        shutil.rmtree(work, ignore_errors=True)
