"""Protobuf messages as Flink's protobuf format reads and writes them, with Google's `protobuf` package.

Flink finds the message by a compiled Java class ('protobuf.message-class-name'); here the same name is looked up
among the messages of a FileDescriptorSet (`protoc --include_imports --descriptor_set_out`), named as protoc names
their Java classes (`java_package`, `java_multiple_files`, `java_outer_classname`, `$` for nested messages).
Columns match fields by their proto name, case-sensitively, and types as Flink's PbSchemaValidationUtils allows
(`type_problem`). Values follow Flink's codegen (`read_row` / `write_message`):

- reading: a field not set is NULL unless 'protobuf.read-default-values' is true, except that scalars (strings,
  bytes and enums included) of a proto3 message always read their default, having no presence; an empty repeated
  field or map is NULL likewise; an enum reads as its name (string column) or number (INT column, a number the
  enum does not declare failing the record); unsigned 32- and 64-bit integers read as Java's signed int and long.
- writing: a NULL column leaves its field unset; a NULL inside an array or map is the type's default (a string's
  is 'protobuf.write-null-string-literal'); an enum name or number the enum lacks writes its first value.

Everything here runs in Python workers too: it takes the descriptor set's bytes, never a path. It imports no
pyspark (the rows' Spark types are handed in, never built), so validating a pipeline's columns needs no Spark.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import DecodeError, Message

from connector.errors import KafkaSqlError

if TYPE_CHECKING:
    from pyspark.sql.types import ArrayType, DataType, MapType, StructType

_FD = FieldDescriptor
_INT = {_FD.TYPE_INT32, _FD.TYPE_UINT32, _FD.TYPE_SINT32, _FD.TYPE_FIXED32, _FD.TYPE_SFIXED32}
_LONG = {_FD.TYPE_INT64, _FD.TYPE_UINT64, _FD.TYPE_SINT64, _FD.TYPE_FIXED64, _FD.TYPE_SFIXED64}
_UNSIGNED = {_FD.TYPE_UINT32: 32, _FD.TYPE_FIXED32: 32, _FD.TYPE_UINT64: 64, _FD.TYPE_FIXED64: 64}
# Flink's names of the protobuf Java types (PbSchemaValidationUtils), and the type roots each accepts.
_JAVA_TYPE = {
    **dict.fromkeys(_INT, "INT"),
    **dict.fromkeys(_LONG, "LONG"),
    _FD.TYPE_FLOAT: "FLOAT",
    _FD.TYPE_DOUBLE: "DOUBLE",
    _FD.TYPE_BOOL: "BOOLEAN",
    _FD.TYPE_STRING: "STRING",
    _FD.TYPE_BYTES: "BYTE_STRING",
    _FD.TYPE_ENUM: "ENUM",
    _FD.TYPE_MESSAGE: "MESSAGE",
}
_ACCEPTS = {
    "INT": {"INTEGER"},
    "LONG": {"BIGINT"},
    "FLOAT": {"FLOAT"},
    "DOUBLE": {"DOUBLE"},
    "BOOLEAN": {"BOOLEAN"},
    "STRING": {"STRING"},
    "BYTE_STRING": {"BINARY"},
    "ENUM": {"STRING", "INTEGER"},  # Flink's validation admits TINYINT, SMALLINT, BIGINT; its codegen fails on them
    "MESSAGE": {"ROW"},
}
_ROOT_NAME = {"STRING": "VARCHAR", "BINARY": "VARBINARY"}  # LogicalTypeRoot names in Flink's messages


class ProtobufError(KafkaSqlError, ValueError):
    """A descriptor set, message name or column the protobuf format cannot use."""


@dataclass(frozen=True)
class Messages:
    """The messages of a FileDescriptorSet, by the Java class name protoc gives each."""

    pool: descriptor_pool.DescriptorPool
    by_class: dict[str, str]  # Java class name -> message full name
    proto3: frozenset[str]  # full names of the top-level messages of proto3 files

    def find(self, class_name: str) -> Descriptor:
        full_name = self.by_class.get(class_name)
        if full_name is None:
            shown = ", ".join(sorted(self.by_class)) or "none"
            raise ProtobufError(f"No message of the descriptor set has Java class '{class_name}'; it has: {shown}")
        return self.pool.FindMessageTypeByName(full_name)

    def message_class(self, class_name: str) -> type[Message]:
        """The Python class of the message with Java class `class_name`, to build or parse its messages."""
        return message_factory.GetMessageClass(self.find(class_name))

    def is_proto3(self, message: Descriptor) -> bool:
        """Whether the message's file is proto3 (Flink looks at the top-level message's file only)."""
        return message.full_name in self.proto3


@functools.lru_cache(maxsize=16)
def messages(descriptor_set: bytes) -> Messages:
    """The messages of a serialized FileDescriptorSet (cached: workers decode many records with one)."""
    try:
        files = descriptor_pb2.FileDescriptorSet.FromString(descriptor_set)
    except DecodeError as err:
        raise ProtobufError(f"not a FileDescriptorSet (protoc --descriptor_set_out): {err}") from None
    pool = descriptor_pool.DescriptorPool()
    by_class: dict[str, str] = {}
    proto3: set[str] = set()
    for file in files.file:
        try:
            pool.Add(file)
        except (TypeError, ValueError) as err:  # an import missing: protoc without --include_imports
            problem = f"file '{file.name}' of the descriptor set: {err} (give protoc --include_imports)"
            raise ProtobufError(problem) from None
        prefix = _java_prefix(file)
        for message in file.message_type:
            full_name = f"{file.package}.{message.name}" if file.package else message.name
            _name_classes(message, prefix + message.name, full_name, by_class)
            if file.syntax == "proto3":
                proto3.add(full_name)
    return Messages(pool, by_class, frozenset(proto3))


def _java_prefix(file: descriptor_pb2.FileDescriptorProto) -> str:
    """What protoc puts before a top-level message's Java class name: package, then the outer class unless
    java_multiple_files (Flink's PbFormatUtils.getOuterProtoPrefix)."""
    package = file.options.java_package or file.package
    prefix = f"{package}." if package else ""
    if file.options.java_multiple_files:
        return prefix
    outer = file.options.java_outer_classname
    if not outer:
        base = file.name.rsplit("/", 1)[-1].removesuffix(".proto")
        outer = _camel_case(base)
        names = {m.name for m in file.message_type} | {e.name for e in file.enum_type} | {s.name for s in file.service}
        if outer in names:
            outer += "OuterClass"
    return f"{prefix}{outer}$"


def _camel_case(name: str) -> str:
    """protoc's UnderscoresToCamelCase(name, capitalize first): 'order_events' -> 'OrderEvents'."""
    out, upper = [], True
    for char in name:
        if char.isalpha():
            out.append(char.upper() if upper else char)
            upper = False
        elif char.isdigit():
            out.append(char)
            upper = True
        else:
            upper = True
    return "".join(out)


def _name_classes(message: descriptor_pb2.DescriptorProto, java: str, full: str, out: dict[str, str]) -> None:
    out[java] = full
    for nested in message.nested_type:
        if not nested.options.map_entry:
            _name_classes(nested, f"{java}${nested.name}", f"{full}.{nested.name}", out)


# -- schema ------------------------------------------------------------------------------------------------------


def type_problem(field: FieldDescriptor, root: str, children: list[tuple[str, str, Any]]) -> str | None:
    """Why a column of type root `root` cannot hold `field`, in Flink's words, or None. `children`: (name, root,
    grandchildren) of a ROW's fields, or the element (ARRAY) or key and value (MAP) types, as `root` has them."""
    if _is_map(field):
        if root != "MAP":
            return f"Unexpected LogicalType: {_root_name(root)}. It should be MapType"
        entry = field.message_type
        (_, key_root, _), (_, value_root, value_children) = children
        return _element_problem(entry.fields_by_name["key"], key_root, []) or _element_problem(
            entry.fields_by_name["value"], value_root, value_children
        )
    if field.is_repeated:
        if root != "ARRAY":
            return f"Unexpected LogicalType: {_root_name(root)}. It should be ArrayType"
        (_, element_root, element_children) = children[0]
        return _element_problem(field, element_root, element_children)
    return _element_problem(field, root, children)


def _element_problem(field: FieldDescriptor, root: str, children: list[tuple[str, str, Any]]) -> str | None:
    java = _JAVA_TYPE.get(field.type)
    if java is None:
        return f"Unsupported protobuf java type: {field.type}"
    if java == "MESSAGE":
        if root != "ROW":
            return f"Unexpected LogicalType: {_root_name(root)}. It should be RowType"
        return row_problem(field.message_type, children)
    if root not in _ACCEPTS[java]:
        return (
            f"Protobuf field type does not match column type, {java}(protobuf) is not compatible of "
            f"{_root_name(root)}"
        )
    return None


def row_problem(message: Descriptor, columns: list[tuple[str, str, Any]]) -> str | None:
    """Why the (name, root, children) columns cannot be read from or written to `message`, or None."""
    for name, root, children in columns:
        field = message.fields_by_name.get(name)
        if field is None:
            return f"Column {name} does not exists in definition of proto class."
        problem = type_problem(field, root, children)
        if problem is not None:
            return f"Column {name}: {problem}"
    return None


def _root_name(root: str) -> str:
    return _ROOT_NAME.get(root, root)


def _is_map(field: FieldDescriptor) -> bool:
    return field.type == _FD.TYPE_MESSAGE and field.is_repeated and field.message_type.GetOptions().map_entry


# -- reading -----------------------------------------------------------------------------------------------------


class RecordProblem(KafkaSqlError, ValueError):
    """A record Flink fails to deserialize ('Failed to deserialize PB object.')."""


def parse(message: Descriptor, data: bytes) -> Message:
    """The message in `data`; RecordProblem when it does not parse or lacks a required field (as Java's parser)."""
    parsed = message_factory.GetMessageClass(message)()
    try:
        parsed.ParseFromString(data)
    except DecodeError as err:
        raise RecordProblem(str(err)) from None
    if not parsed.IsInitialized():
        raise RecordProblem(f"Message missing required fields: {', '.join(parsed.FindInitializationErrors())}")
    return parsed


def read_row(message: Message, struct: StructType, scalar_defaults: bool, defaults: bool) -> tuple[Any, ...]:
    """The row of `struct`'s fields read from `message`: `scalar_defaults` (proto3, or read-default-values) reads
    an unset scalar as its default, `defaults` (read-default-values) an unset message, list or map."""
    fields = message.DESCRIPTOR.fields_by_name
    return tuple(_read(message, fields[f.name], f.dataType, scalar_defaults, defaults) for f in struct.fields)


def _read(message: Message, field: FieldDescriptor, data_type: DataType, scalars: bool, defaults: bool) -> Any:
    value = getattr(message, field.name)
    if field.is_repeated:
        if not defaults and len(value) == 0:
            return None
        if _is_map(field):
            map_type = cast("MapType", data_type)
            key, entry = field.message_type.fields_by_name["key"], field.message_type.fields_by_name["value"]
            return {
                _element(key, k, map_type.keyType, scalars, defaults): _element(
                    entry, v, map_type.valueType, scalars, defaults
                )
                for k, v in value.items()
            }
        array_type = cast("ArrayType", data_type)
        return [_element(field, v, array_type.elementType, scalars, defaults) for v in value]
    if field.type == _FD.TYPE_MESSAGE:
        return read_row(value, data_type, scalars, defaults) if defaults or message.HasField(field.name) else None  # type: ignore[arg-type]
    if not scalars and field.has_presence and not message.HasField(field.name):
        return None
    return _scalar(field, value, data_type)


def _element(field: FieldDescriptor, value: Any, data_type: DataType, scalars: bool, defaults: bool) -> Any:
    if field.type == _FD.TYPE_MESSAGE:
        return read_row(value, cast("StructType", data_type), scalars, defaults)
    return _scalar(field, value, data_type)


def _scalar(field: FieldDescriptor, value: Any, data_type: DataType) -> Any:
    if field.type == _FD.TYPE_ENUM:
        declared = field.enum_type.values_by_number.get(value)
        if data_type.typeName() == "string":
            return declared.name if declared is not None else "UNRECOGNIZED"
        if declared is None:
            raise RecordProblem(f"Can't get the number of an unknown enum value ({value}) of {field.full_name}.")
        return value
    bits = _UNSIGNED.get(field.type)
    if bits is not None and value >= 1 << (bits - 1):
        return value - (1 << bits)  # Java's signed int / long
    return value


# -- writing -----------------------------------------------------------------------------------------------------


def write_message(target: Message, row: Mapping[str, Any] | Any, struct: StructType, null_string: str) -> None:
    """Set the fields of `target` from `row` (a Row or mapping with `struct`'s fields); NULL leaves a field unset."""
    fields = target.DESCRIPTOR.fields_by_name
    for spec in struct.fields:
        value = row[spec.name]
        if value is not None:
            _write(target, fields[spec.name], spec.dataType, value, null_string)


def _write(target: Message, field: FieldDescriptor, data_type: DataType, value: Any, null_string: str) -> None:
    if _is_map(field):
        map_type = cast("MapType", data_type)
        key_field, value_field = field.message_type.fields_by_name["key"], field.message_type.fields_by_name["value"]
        entries = getattr(target, field.name)
        for key, item in value.items():
            plain_key = _plain(key_field, key, null_string)
            if value_field.type == _FD.TYPE_MESSAGE:
                entry = entries[plain_key]
                entry.Clear()
                if item is not None:
                    write_message(entry, item, map_type.valueType, null_string)  # type: ignore[arg-type]
            else:
                entries[plain_key] = _plain(value_field, item, null_string)
    elif field.is_repeated:
        array_type = cast("ArrayType", data_type)
        items = getattr(target, field.name)
        for item in value:
            if field.type == _FD.TYPE_MESSAGE:
                added = items.add()
                if item is not None:
                    write_message(added, item, array_type.elementType, null_string)  # type: ignore[arg-type]
            else:
                items.append(_plain(field, item, null_string))
    elif field.type == _FD.TYPE_MESSAGE:
        nested = getattr(target, field.name)
        nested.SetInParent()  # a ROW of NULLs still sets the field, as Flink's setX(builder.build())
        write_message(nested, value, data_type, null_string)  # type: ignore[arg-type]
    else:
        setattr(target, field.name, _plain(field, value, null_string))


def _plain(field: FieldDescriptor, value: Any, null_string: str) -> Any:
    """`value` as the field's Python value; NULL (inside an array or map) as the type's default."""
    kind = field.type
    if kind == _FD.TYPE_ENUM:
        enum = field.enum_type
        found = enum.values_by_name.get(value) if isinstance(value, str) else enum.values_by_number.get(value)
        return (found or enum.values[0]).number
    if value is None:
        if kind == _FD.TYPE_STRING:
            return null_string
        if kind == _FD.TYPE_BYTES:
            return b""
        return False if kind == _FD.TYPE_BOOL else 0
    bits = _UNSIGNED.get(kind)
    if bits is not None:
        return value & ((1 << bits) - 1)
    if kind == _FD.TYPE_BYTES:
        return bytes(value)
    return value
