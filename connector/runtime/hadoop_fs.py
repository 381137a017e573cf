"""File operations on any Hadoop file system (local, HDFS, S3, ...) through the session's Hadoop configuration."""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import unquote, urlparse

from pyspark.sql import SparkSession


class HadoopFs:
    """The few file operations gated sinks and the quality gate need, on any Hadoop file system (local, HDFS,
    S3, ...), through the session's Hadoop configuration."""

    def __init__(self, spark: SparkSession, path: str) -> None:
        context = spark.sparkContext
        jvm = context._jvm
        assert jvm is not None, "a classic SparkSession is needed"
        self._hadoop = jvm.org.apache.hadoop.fs
        self._io = jvm.org.apache.commons.io.IOUtils
        self._fs = self._hadoop.Path(path).getFileSystem(context._jsc.hadoopConfiguration())
        self._local = str(self._fs.getUri().getScheme()) == "file"

    def _path(self, text: str) -> Any:
        return self._hadoop.Path(text)

    def qualified(self, text: str) -> str:
        return str(self._fs.makeQualified(self._path(text)).toString())

    def exists(self, text: str) -> bool:
        return bool(self._fs.exists(self._path(text)))

    def glob(self, pattern: str) -> list[str]:
        found = self._fs.globStatus(self._path(pattern))
        return [str(status.getPath().toString()) for status in found or []]

    def data_files(self, root: str) -> list[str]:
        """Files under `root`, recursively, that readers see: none whose name, or the name of a folder on the
        way, starts with `_` or `.` (Spark's logs, markers, staging folders and checksums)."""
        files = []
        prefix = self.qualified(root).rstrip("/") + "/"
        listing = self._fs.listFiles(self._path(root), True)
        while listing.hasNext():
            path = str(listing.next().getPath().toString())
            relative = path[len(prefix) :] if path.startswith(prefix) else path.rsplit("/", 1)[-1]
            if not any(part.startswith(("_", ".")) for part in relative.split("/")):
                files.append(path)
        return files

    def move(self, source: str, target: str) -> None:
        destination = self._path(target)
        self._fs.mkdirs(destination.getParent())
        if not self._fs.rename(self._path(source), destination):
            raise OSError(f"cannot move {source} to {target}")

    def delete(self, text: str) -> None:
        self._fs.delete(self._path(text), True)

    def read_text(self, text: str) -> str | None:
        """The file's content, or None when it does not exist."""
        path = self._path(text)
        if not self._fs.exists(path):
            return None
        stream = self._fs.open(path)
        try:
            return bytes(self._io.toByteArray(stream)).decode()
        finally:
            stream.close()

    def write_text(self, text: str, content: str) -> None:
        """Replace the file atomically where the file system renames atomically (write aside, then rename).
        On the local file system Python writes it: about ten calls into the JVM fewer, 10-20 ms a file
        while a micro-batch keeps the JVM busy (measured)."""
        if self._local:
            local = unquote(urlparse(self.qualified(text)).path)
            os.makedirs(os.path.dirname(local), exist_ok=True)
            with open(f"{local}.tmp", "w", encoding="utf-8") as out:
                out.write(content)
            os.replace(f"{local}.tmp", local)
            folder, name = os.path.split(local)
            stale = os.path.join(folder, f".{name}.crc")  # Hadoop's checksum of an earlier version
            if os.path.exists(stale):
                os.remove(stale)
            return
        target = self._path(text)
        aside = self._path(f"{text}.tmp")
        stream = self._fs.create(aside, True)
        try:
            stream.write(bytearray(content.encode()))
        finally:
            stream.close()
        self._fs.delete(target, False)
        if not self._fs.rename(aside, target):
            raise OSError(f"cannot write {text}")
