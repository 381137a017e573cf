"""Iceberg's Hadoop catalog ('catalog-type' = 'hadoop') on a local warehouse, for pyiceberg, which has none.

The layout and commit protocol are Java's HadoopCatalog / HadoopTableOperations, so Flink, Spark and Trino open the
tables it writes: a table `db.t` lives in `<warehouse>/db/t`, its metadata versions are
`metadata/v<N>.metadata.json`, and `metadata/version-hint.text` holds the newest N. A commit writes version N+1
under a temporary name and links it into place only if no other writer took N+1 first (a hard link fails when the
name exists: the local file system's atomic create, as Java relies on HDFS's rename), then rewrites the hint.
Readers that find a stale hint look for higher versions, as Java's do.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from pyiceberg.catalog import Catalog, MetastoreCatalog
from pyiceberg.exceptions import (
    CommitFailedException,
    NamespaceAlreadyExistsError,
    NoSuchNamespaceError,
    NoSuchTableError,
    TableAlreadyExistsError,
)
from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC, PartitionSpec
from pyiceberg.serializers import FromInputFile, ToOutputFile
from pyiceberg.table import CommitTableResponse, Table
from pyiceberg.table.metadata import new_table_metadata
from pyiceberg.table.sorting import UNSORTED_SORT_ORDER, SortOrder
from pyiceberg.table.update import update_table_metadata
from pyiceberg.typedef import EMPTY_DICT, Identifier, Properties

from connector.connectors.iceberg.factory import local_warehouse

if TYPE_CHECKING:
    import pyarrow as pa
    from pyiceberg.schema import Schema
    from pyiceberg.table import TableRequirement, TableUpdate

HINT = "version-hint.text"


def _response(metadata: Any, location: str) -> CommitTableResponse:
    # pydantic's alias ('metadata-location') hides the field name from type checkers; pyiceberg's catalogs use it
    response: CommitTableResponse = cast(Any, CommitTableResponse)(metadata=metadata, metadata_location=location)
    return response


class HadoopCatalog(MetastoreCatalog):
    """A Hadoop-layout catalog over the local directory `warehouse`."""

    def __init__(self, name: str, **properties: str) -> None:
        super().__init__(name, **properties)
        root = local_warehouse(properties["warehouse"])
        if root is None:
            raise ValueError(f"warehouse '{properties['warehouse']}' is not a local path")
        self.root = root

    def _table_dir(self, identifier: str | Identifier) -> Path:
        return self.root.joinpath(*Catalog.identifier_to_tuple(identifier))

    def _version(self, metadata: Path) -> int | None:
        hint = metadata / HINT
        version = int(hint.read_text().strip()) if hint.is_file() else None
        if version is None and not any(metadata.glob("v*.metadata.json")):
            return None
        version = version or 0
        while (metadata / f"v{version + 1}.metadata.json").is_file():  # a writer died between commit and hint
            version += 1
        return version

    def load_table(self, identifier: str | Identifier) -> Table:
        metadata_dir = self._table_dir(identifier) / "metadata"
        version = self._version(metadata_dir)
        if version is None:
            raise NoSuchTableError(f"Table does not exist: {'.'.join(Catalog.identifier_to_tuple(identifier))}")
        location = str(metadata_dir / f"v{version}.metadata.json")
        io = self._load_file_io(location=location)
        metadata = FromInputFile.table_metadata(io.new_input(location))
        return Table(Catalog.identifier_to_tuple(identifier), metadata, location, io, self)

    def create_table(
        self,
        identifier: str | Identifier,
        schema: Schema | pa.Schema,
        location: str | None = None,
        partition_spec: PartitionSpec = UNPARTITIONED_PARTITION_SPEC,
        sort_order: SortOrder = UNSORTED_SORT_ORDER,
        properties: Properties = EMPTY_DICT,
    ) -> Table:
        table_dir = self._table_dir(identifier)
        if self._version(table_dir / "metadata") is not None:
            raise TableAlreadyExistsError(f"Table already exists: {'.'.join(Catalog.identifier_to_tuple(identifier))}")
        if not table_dir.parent.is_dir():
            raise NoSuchNamespaceError(f"Namespace does not exist: {table_dir.parent}")
        converted = self._convert_schema_if_needed(schema)
        metadata = new_table_metadata(
            location=str(table_dir), schema=converted, partition_spec=partition_spec, sort_order=sort_order,
            properties=properties,
        )  # fmt: skip
        self._publish(table_dir / "metadata", 1, metadata)
        return self.load_table(identifier)

    def commit_table(
        self, table: Table, requirements: tuple[TableRequirement, ...], updates: tuple[TableUpdate, ...]
    ) -> CommitTableResponse:
        current = self.load_table(table.name())
        for requirement in requirements:
            requirement.validate(current.metadata)
        updated = update_table_metadata(current.metadata, updates, metadata_location=current.metadata_location)
        if updated == current.metadata:
            return _response(current.metadata, current.metadata_location)
        metadata_dir = Path(current.metadata_location).parent
        version = int(Path(current.metadata_location).name[1:].split(".")[0]) + 1
        location = self._publish(metadata_dir, version, updated)
        return _response(updated, location)

    def _publish(self, metadata_dir: Path, version: int, metadata: Any) -> str:
        """Write metadata version `version`, failing if another writer made it first; then move the hint."""
        metadata_dir.mkdir(parents=True, exist_ok=True)
        final = metadata_dir / f"v{version}.metadata.json"
        staged = metadata_dir / f".{uuid.uuid4()}-v{version}.metadata.json"
        io = self._load_file_io(location=str(staged))
        ToOutputFile.table_metadata(metadata, io.new_output(str(staged)))
        try:
            os.link(staged, final)
        except FileExistsError:
            raise CommitFailedException(
                f"Version {version} of {metadata_dir.parent} was committed by another writer"
            ) from None
        finally:
            staged.unlink()
        with tempfile.NamedTemporaryFile("w", dir=metadata_dir, prefix=".hint-", delete=False) as hint:
            hint.write(str(version))
        os.replace(hint.name, metadata_dir / HINT)
        return str(final)

    def table_exists(self, identifier: str | Identifier) -> bool:
        return self._version(self._table_dir(identifier) / "metadata") is not None

    def drop_table(self, identifier: str | Identifier) -> None:
        if not self.table_exists(identifier):
            raise NoSuchTableError(f"Table does not exist: {identifier}")
        shutil.rmtree(self._table_dir(identifier))

    def create_namespace(self, namespace: str | Identifier, properties: Properties = EMPTY_DICT) -> None:
        path = self.root.joinpath(*Catalog.identifier_to_tuple(namespace))
        if path.is_dir():
            raise NamespaceAlreadyExistsError(f"Namespace already exists: {namespace}")
        path.mkdir(parents=True)

    def list_namespaces(self, namespace: str | Identifier = ()) -> list[Identifier]:
        parent = Catalog.identifier_to_tuple(namespace)
        base = self.root.joinpath(*parent)
        return [
            (*parent, p.name) for p in sorted(base.iterdir()) if p.is_dir() and not (p / "metadata").is_dir()
        ] if base.is_dir() else []  # fmt: skip

    def list_tables(self, namespace: str | Identifier) -> list[Identifier]:
        parent = Catalog.identifier_to_tuple(namespace)
        base = self.root.joinpath(*parent)
        if not base.is_dir():
            raise NoSuchNamespaceError(f"Namespace does not exist: {namespace}")
        return [(*parent, p.name) for p in sorted(base.iterdir()) if self.table_exists((*parent, p.name))]

    def load_namespace_properties(self, namespace: str | Identifier) -> Properties:
        if not self.root.joinpath(*Catalog.identifier_to_tuple(namespace)).is_dir():
            raise NoSuchNamespaceError(f"Namespace does not exist: {namespace}")
        return {"location": str(self.root.joinpath(*Catalog.identifier_to_tuple(namespace)))}

    # Java's HadoopCatalog has no namespace properties, renames or views either.
    def drop_namespace(self, namespace: str | Identifier) -> None:
        raise NotImplementedError("the hadoop catalog of kafka-sql does not drop namespaces")

    def update_namespace_properties(
        self, namespace: str | Identifier, removals: set[str] | None = None, updates: Properties = EMPTY_DICT
    ) -> Any:
        raise NotImplementedError("Hadoop catalogs have no namespace properties")

    def rename_table(self, from_identifier: str | Identifier, to_identifier: str | Identifier) -> Table:
        raise NotImplementedError("Hadoop catalogs cannot rename tables")

    def register_table(self, identifier: str | Identifier, metadata_location: str, overwrite: bool = False) -> Table:
        raise NotImplementedError("Hadoop catalogs cannot register tables")

    def list_views(self, namespace: str | Identifier) -> list[Identifier]:
        return []

    def view_exists(self, identifier: str | Identifier) -> bool:
        return False

    def drop_view(self, identifier: str | Identifier) -> None:
        raise NotImplementedError("Hadoop catalogs have no views")

    def load_view(self, identifier: str | Identifier) -> Any:
        raise NotImplementedError("Hadoop catalogs have no views")

    def register_view(self, identifier: str | Identifier, metadata_location: str) -> Any:
        raise NotImplementedError("Hadoop catalogs have no views")
