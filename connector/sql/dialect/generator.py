"""The Flink generator: writes trees back as Flink SQL, undoing the Hive rewrites Flink does not share."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from sqlglot import exp, generator
from sqlglot.dialects.dialect import inline_array_sql
from sqlglot.generators.hive import HiveGenerator

from connector.sql.dialect.expressions import (
    WINDOW_TVF_POSITIONAL_ARGS,
    AlterReset,
    ExpectConstraint,
    Explain,
    MetadataColumnConstraint,
    Reset,
    StatementSet,
    WindowTVF,
)

# Hive generator rewrites that Flink does not share: sqlglot's standard SQL is Flink's for these.
_HIVE_ONLY_TRANSFORMS = {
    exp.Create,
    exp.NotNullColumnConstraint,
    exp.PrimaryKeyColumnConstraint,
    exp.Select,
    exp.Table,
    exp.TryCast,
    exp.Unnest,
}


def _timestamp_delta_sql(name: str) -> Any:
    return lambda self, e: self.func(name, e.unit, e.expression, e.this)


class FlinkGenerator(HiveGenerator):
    QUERY_HINTS = True
    SUPPORTS_TEMPORAL_PRECISION = True
    TRY_SUPPORTED = False
    INSERT_OVERWRITE = " OVERWRITE"
    WITH_PROPERTIES_PREFIX = "WITH"
    STRUCT_DELIMITER = ("<", ">")

    TYPE_MAPPING: ClassVar[dict[exp.DType, str]] = {
        **HiveGenerator.TYPE_MAPPING,
        exp.DType.TIME: "TIME",
        exp.DType.TIMESTAMPLTZ: "TIMESTAMP_LTZ",
        exp.DType.TIMESTAMPTZ: "TIMESTAMP_LTZ",
        exp.DType.VARBINARY: "VARBINARY",
        exp.DType.STRUCT: "ROW",
    }

    TRANSFORMS: ClassVar[dict[type[exp.Expr], Callable[..., str]]] = {
        **{k: v for k, v in HiveGenerator.TRANSFORMS.items() if k not in _HIVE_ONLY_TRANSFORMS},
        exp.Property: lambda self, e: f"{self.sql(e, 'this')} = {self.sql(e, 'value')}",
        exp.Array: lambda self, e: f"ARRAY{inline_array_sql(self, e)}",
        exp.VarMap: lambda self, e: (
            "MAP["
            + ", ".join(
                f"{self.sql(k)}, {self.sql(v)}"
                for k, v in zip(e.args["keys"].expressions, e.args["values"].expressions, strict=True)
            )
            + "]"
        ),
        exp.CurrentTimestamp: lambda *_: "CURRENT_TIMESTAMP",
        exp.GroupConcat: lambda self, e: self.func("LISTAGG", e.this, e.args.get("separator")),
        exp.JSONKeyValue: lambda self, e: f"KEY {self.sql(e, 'this')} VALUE {self.sql(e, 'expression')}",
        exp.Length: lambda self, e: self.func("CHAR_LENGTH", e.this),
        exp.TimestampAdd: _timestamp_delta_sql("TIMESTAMPADD"),
        exp.TimestampDiff: _timestamp_delta_sql("TIMESTAMPDIFF"),
        exp.Trunc: lambda self, e: self.func("TRUNCATE", e.this, e.args.get("decimals")),
        exp.Version: lambda self, e: f"FOR SYSTEM_TIME AS OF {self.sql(e, 'expression')}",
        exp.RegexpLike: lambda self, e: self.func("REGEXP", e.this, e.expression),
        WindowTVF: lambda self, e: self.windowtvf_sql(e),
        MetadataColumnConstraint: lambda self, e: self.metadatacolumnconstraint_sql(e),
        ExpectConstraint: lambda self, e: self.expectconstraint_sql(e),
        StatementSet: lambda self, e: self.statementset_sql(e),
        Reset: lambda self, e: self.reset_sql(e),
        AlterReset: lambda self, e: f"RESET ({self.expressions(e, flat=True)})",
        Explain: lambda self, e: self.explain_sql(e),
    }

    PROPERTIES_LOCATION: ClassVar[dict[type[exp.Expression], exp.PropertiesLocation]] = {
        **HiveGenerator.PROPERTIES_LOCATION,
        exp.LikeProperty: exp.Properties.Location.POST_EXPRESSION,
        exp.LanguageProperty: exp.Properties.Location.POST_EXPRESSION,
    }

    def alterset_sql(self, expression: exp.AlterSet) -> str:
        """Flink's `ALTER TABLE t SET ('key' = 'value', ...)` (Hive's form has no parentheses)."""
        return f"SET ({self.expressions(expression, flat=True)})"

    def arrayagg_sql(self, expression: exp.ArrayAgg) -> str:
        return generator.Generator.arrayagg_sql(self, expression)

    def windowtvf_sql(self, expression: WindowTVF) -> str:
        data = expression.this
        data_sql = self.sql(data) if isinstance(data, exp.Subquery) else f"TABLE {self.sql(data)}"
        keys = expression.args.get("partition_by") or []
        if keys:
            partition = self.expressions(expression, key="partition_by", flat=True)
            data_sql += f" PARTITION BY {partition if len(keys) == 1 else f'({partition})'}"
        args = [data_sql, f"DESCRIPTOR({self.sql(expression, 'timecol')})"]
        for key in WINDOW_TVF_POSITIONAL_ARGS[expression.args["kind"]]:
            value = expression.args.get(key)
            if value is not None:
                args.append(self.sql(value))
        call = f"TABLE({expression.args['kind']}({', '.join(args)}))"
        alias = self.sql(expression, "alias")
        alias = f" AS {alias}" if alias else ""
        joins = self.indent(self.expressions(expression, key="joins", sep="", flat=True), skip_first=True)
        return f"{call}{alias}{joins}"

    def metadatacolumnconstraint_sql(self, expression: MetadataColumnConstraint) -> str:
        key = self.sql(expression, "this")
        key = f" FROM {key}" if key else ""
        virtual = " VIRTUAL" if expression.args.get("virtual") else ""
        return f"METADATA{key}{virtual}"

    def expectconstraint_sql(self, expression: ExpectConstraint) -> str:
        name = self.sql(expression, "this")
        named = f"CONSTRAINT {name} " if name else ""
        action = expression.args.get("on_violation")
        violation = f" ON VIOLATION {action}" if action else ""
        return f"{named}EXPECT ({self.sql(expression, 'expression')}){violation}"

    def statementset_sql(self, expression: StatementSet) -> str:
        inserts = "".join(f"{self.sep()}{self.indent(self.sql(e))};" for e in expression.expressions)
        return f"EXECUTE STATEMENT SET{self.sep()}BEGIN{inserts}{self.sep()}END"

    def likeproperty_sql(self, expression: exp.LikeProperty) -> str:
        options = " ".join(f"{e.name} {self.sql(e, 'value')}" for e in expression.expressions)
        options = f" ({options})" if options else ""
        return f"LIKE {self.sql(expression, 'this')}{options}"

    def reset_sql(self, expression: Reset) -> str:
        key = self.sql(expression, "this")
        return f"RESET {key}" if key else "RESET"

    def explain_sql(self, expression: Explain) -> str:
        details = self.expressions(expression, flat=True)
        details = f" {details}" if details else ""
        return f"EXPLAIN{details} {self.sql(expression, 'this')}"

    def show_sql(self, expression: exp.Show) -> str:
        target = self.sql(expression, "target")
        target = f" {'FROM ' if expression.name == 'COLUMNS' else ''}{target}" if target else ""
        return f"SHOW {expression.name}{target}"

    def set_sql(self, expression: exp.Set) -> str:
        return super().set_sql(expression).rstrip()

    def table_parts(self, expression: exp.Table) -> str:
        name = super().table_parts(expression)
        hints = expression.args.get("hints")
        if hints:
            name += f" /*+ {self.expressions(expression, key='hints', flat=True, sep=' ')} */"
        return name

    def primarykey_sql(self, expression: exp.PrimaryKey) -> str:
        name = self.sql(expression, "this")
        constraint = f"CONSTRAINT {name} " if name else ""
        columns = self.expressions(expression, flat=True)
        options = self.expressions(expression, key="options", flat=True, sep=" ")
        options = f" {options}" if options else ""
        return f"{constraint}PRIMARY KEY ({columns}){options}"

    def columndef_sql(self, expression: exp.ColumnDef, sep: str = " ") -> str:
        return generator.Generator.columndef_sql(self, expression, sep)

    def unnest_sql(self, expression: exp.Unnest) -> str:
        return generator.Generator.unnest_sql(self, expression)

    def datatype_sql(self, expression: exp.DataType) -> str:
        if expression.is_type(exp.DType.STRUCT):
            fields = ", ".join(self._row_field_sql(field) for field in expression.expressions)
            sql = f"ROW<{fields}>"
        elif expression.is_type(exp.DType.VARBINARY) and not expression.expressions:
            sql = "BYTES"
        else:
            # Skip Hive's override, which drops temporal precision and VARCHAR lengths.
            sql = generator.Generator.datatype_sql(self, expression)
        if expression.args.get("nullable") is False:
            sql += " NOT NULL"
        return sql

    def _row_field_sql(self, field: exp.Expr) -> str:
        if not isinstance(field, exp.ColumnDef):
            return self.sql(field)
        parts = [self.sql(field, "this"), self.sql(field, "kind")]
        for constraint in field.args.get("constraints") or []:
            kind = constraint.args.get("kind")
            if isinstance(kind, exp.CommentColumnConstraint):
                parts.append(self.sql(kind, "this"))
            else:
                parts.append(self.sql(constraint))
        return " ".join(parts)
