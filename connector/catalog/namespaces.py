"""Flink's catalogs as a pipeline file declares them: CREATE CATALOG, USE CATALOG, CREATE DATABASE and USE.

kafka-sql keeps the tables of a file in one namespace, keyed by name: a qualified reference (`lake.shop.orders`)
means the table `orders`, so two tables of one name in different catalogs are a duplicate. What a catalog decides is
what a CREATE TABLE in it means, as in Flink:

* `generic_in_memory` (Flink's `default_catalog` is one) and Delta's `delta-catalog` ('catalog-type' = 'in-memory',
  whose Delta tables are declared with 'connector' = 'delta' and 'table-path'): tables are declared with their
  connector, as anywhere.
* `iceberg` (Iceberg's FlinkCatalog): a table created in it is the Iceberg table of that catalog, database and name;
  the `iceberg` connector's options are taken from the catalog ('catalog-type', 'warehouse', ...), and a table
  naming another connector is refused, as Iceberg's catalog refuses it.

Other catalog types (hive, jdbc, paimon, ...) are refused with the reason: their tables live in a metastore this
project cannot read. A catalog's databases start with its 'default-database' ('default'; `default_catalog`'s is
`default_database`), which USE CATALOG makes current.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from sqlglot import exp

from connector.catalog.model import Table
from connector.diagnostics import Position

DEFAULT_CATALOG = "default_catalog"
DEFAULT_DATABASE = "default_database"
TYPES = ("generic_in_memory", "iceberg", "delta-catalog")
# Catalog options that concern Flink's catalog object only (caching, property versions), not the tables' data.
_CATALOG_ONLY = ("type", "default-database", "property-version", "cache-enabled", "cache.expiration-interval-ms")
# Options of an iceberg catalog that its tables take as the `iceberg` connector's.
_ICEBERG_TABLE_OPTIONS = ("catalog-type", "catalog-impl", "warehouse", "uri")

Report = Callable[[Position, str, str], None]  # (where, code, message) of an error


@dataclass
class DeclaredCatalog:
    name: str
    kind: str
    options: dict[str, str] = field(default_factory=dict)
    option_positions: dict[str, Position] = field(default_factory=dict)
    databases: set[str] = field(default_factory=set)


class Catalogs:
    """The catalogs a file declared, and its current catalog and database."""

    def __init__(self, error: Report) -> None:
        self.error = error
        default = DeclaredCatalog(DEFAULT_CATALOG, "generic_in_memory", databases={DEFAULT_DATABASE})
        self.catalogs = {DEFAULT_CATALOG: default}
        self.current = DEFAULT_CATALOG
        self.database = DEFAULT_DATABASE

    def create_catalog(self, node: exp.Create, where: Position, positions: Callable[[exp.Expr], Position]) -> None:
        name = node.this.name
        if name.lower() in self.catalogs:
            if not node.args.get("exists"):
                self.error(where, "duplicate", f"Catalog '{name}' already exists.")
            return
        props = node.args.get("properties")
        catalog = DeclaredCatalog(name, "")
        for prop in props.expressions if props else []:
            if isinstance(prop, exp.Property) and isinstance(prop.this, exp.Literal):
                catalog.options[prop.this.name] = prop.args["value"].name
                catalog.option_positions[prop.this.name] = positions(prop.this)
        kind = catalog.options.get("type")
        if kind not in TYPES:
            reason = (
                "its tables live in a metastore kafka-sql cannot read; declare each table with CREATE TABLE ... WITH "
                "('connector' = ...)"
            )
            message = (
                f"Catalog '{name}': type '{kind}' is not supported ({reason}). Supported types: {', '.join(TYPES)}."
                if kind is not None
                else f"Catalog '{name}' has no 'type' option. Supported types: {', '.join(TYPES)}."
            )
            self.error(catalog.option_positions.get("type", where), "unsupported", message)
            return
        unknown = sorted(k for k in catalog.options if k not in (*_CATALOG_ONLY, *self._table_options(kind)))
        if unknown:
            valid = ", ".join(sorted((*_CATALOG_ONLY, *self._table_options(kind))))
            self.error(
                catalog.option_positions[unknown[0]],
                "unsupported-option",
                f"Catalog '{name}' ({kind}): unsupported option(s) {', '.join(unknown)}. Valid options: {valid}.",
            )
            return
        if kind == "delta-catalog" and catalog.options.get("catalog-type", "in-memory") != "in-memory":
            self.error(
                catalog.option_positions["catalog-type"],
                "unsupported-option",
                f"Catalog '{name}' (delta-catalog): 'catalog-type' = '{catalog.options['catalog-type']}' is not "
                "supported; only 'in-memory' (its tables are declared in the file, with 'connector' = 'delta').",
            )
            return
        catalog.kind = kind
        catalog.databases.add(catalog.options.get("default-database", "default"))
        self.catalogs[name.lower()] = catalog

    @staticmethod
    def _table_options(kind: str) -> tuple[str, ...]:
        return {"iceberg": _ICEBERG_TABLE_OPTIONS, "delta-catalog": ("catalog-type",)}.get(kind, ())

    def _catalog(self, name: str | None, where: Position) -> DeclaredCatalog | None:
        found = self.catalogs.get((name or self.current).lower())
        if found is None:
            known = ", ".join(c.name for c in self.catalogs.values())
            self.error(where, "unknown-catalog", f"A catalog with name '{name}' does not exist. Catalogs: {known}.")
        return found

    def use(self, node: exp.Use, where: Position) -> None:
        target = node.this
        kind = node.args.get("kind")
        if kind is not None and kind.name.upper() == "CATALOG":
            catalog = self._catalog(target.name, where)
            if catalog is not None:
                self.current = catalog.name.lower()
                self.database = catalog.options.get("default-database", _default_database(catalog))
            return
        catalog = self._catalog(target.args.get("db") and target.args["db"].name, where)
        if catalog is None:
            return
        if target.name not in catalog.databases:
            self.error(
                where,
                "unknown-database",
                f"A database with name '{target.name}' does not exist in catalog '{catalog.name}'. Databases: "
                f"{', '.join(sorted(catalog.databases))}.",
            )
            return
        self.current, self.database = catalog.name.lower(), target.name

    def create_database(self, node: exp.Create, where: Position) -> None:
        target = node.this
        catalog = self._catalog(target.args.get("db") and target.args["db"].name, where)
        if catalog is None:
            return
        if target.name in catalog.databases and not node.args.get("exists"):
            self.error(where, "duplicate", f"Database '{target.name}' already exists in catalog '{catalog.name}'.")
        catalog.databases.add(target.name)

    def place(self, table: Table, name: exp.Table, where: Position) -> None:
        """Give a table created in an iceberg catalog (current, or named in `name`) its catalog's options."""
        catalog = self._catalog(name.args.get("catalog") and name.args["catalog"].name, where)
        if catalog is None or catalog.kind != "iceberg":
            return
        database = name.args["db"].name if name.args.get("db") else self.database
        if table.connector not in (None, "iceberg"):
            self.error(
                table.option_positions.get("connector", where),
                "unsupported-option",
                f"Table '{table.name}' is created in the iceberg catalog '{catalog.name}', whose tables are Iceberg "
                f"tables; create a '{table.connector}' table in a generic_in_memory catalog (e.g. {DEFAULT_CATALOG}).",
            )
            return
        given = {
            "connector": "iceberg",
            "catalog-name": catalog.name,
            "catalog-database": database,
            "catalog-table": table.name,
            **{k: v for k, v in catalog.options.items() if k in _ICEBERG_TABLE_OPTIONS},
        }
        for key, value in given.items():
            table.options.setdefault(key, value)
            if key in catalog.option_positions:
                table.option_positions.setdefault(key, catalog.option_positions[key])


def _default_database(catalog: DeclaredCatalog) -> str:
    return DEFAULT_DATABASE if catalog.name == DEFAULT_CATALOG else "default"
