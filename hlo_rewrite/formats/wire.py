"""Just enough protobuf wire format to recognise XLA's HLO protos without their schema.

XLA writes a module as an ``HloModuleProto`` (torch-neuronx's ``*.hlo_module.pb``,
neuronx-distributed's ``graph.hlo``), and its ``--xla_dump_hlo_as_proto`` dumps
(``*.hlo.pb``) as an ``HloProto``: the module in field 1, its buffer assignment
(after optimization) in field 3. Field numbers used here, from XLA's
``xla/service/hlo.proto``:

- ``HloModuleProto``: 1 ``name`` (string), 2 ``entry_computation_name`` (string),
  3 ``computations`` (repeated message), 5 ``id`` (the module's unique id, a varint);
- ``HloProto``: 1 ``hlo_module`` (message), 3 ``buffer_assignment`` (message).
"""

from __future__ import annotations

LEN = 2  # wire type of strings, bytes and messages
VARINT = 0

#: HloModuleProto's ``id``: XLA numbers modules in the order a process creates them
MODULE_ID = 5

#: what :func:`hlo_proto_kind` says
MODULE = "HloModuleProto"
WRAPPED = "HloProto"


def read_varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise ValueError("truncated varint")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7


def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def top_level_fields(data: bytes) -> dict[int, tuple[int, int, int]] | None:
    """Field number -> (wire type, start, end) of the first occurrence of each top-level field
    (start/end delimit a length-delimited payload), or None if ``data`` is not wire format."""
    fields: dict[int, tuple[int, int, int]] = {}
    pos = 0
    try:
        while pos < len(data):
            key, pos = read_varint(data, pos)
            number, wire = key >> 3, key & 7
            if number == 0:
                return None
            start = pos
            if wire == 0:
                _, pos = read_varint(data, pos)
            elif wire == 1:
                pos += 8
            elif wire == LEN:
                length, start = read_varint(data, pos)
                pos = start + length
            elif wire == 5:
                pos += 4
            else:  # groups (3, 4) are not used by XLA's protos; 6 and 7 do not exist
                return None
            if pos > len(data):
                return None
            fields.setdefault(number, (wire, start, pos))
    except ValueError:
        return None
    return fields


def _payload(data: bytes, field: tuple[int, int, int] | None) -> bytes | None:
    if field is None or field[0] != LEN:
        return None
    return data[field[1] : field[2]]


def is_module(data: bytes) -> bool:
    """Does ``data`` read as an ``HloModuleProto``: a UTF-8 name, and computations that are messages?"""
    fields = top_level_fields(data)
    if not fields:
        return False
    name, computation = _payload(data, fields.get(1)), _payload(data, fields.get(3))
    if name is None or computation is None or (2 in fields and fields[2][0] != LEN):
        return False
    try:
        name.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return top_level_fields(computation) is not None


def hlo_proto_kind(data: bytes) -> str | None:
    """:data:`WRAPPED` for an ``HloProto``, :data:`MODULE` for an ``HloModuleProto``, else None."""
    fields = top_level_fields(data)
    if not fields:
        return None
    inner = _payload(data, fields.get(1))
    if inner is not None and 2 not in fields and is_module(inner):
        return WRAPPED
    return MODULE if is_module(data) else None


def unwrap(data: bytes) -> bytes:
    """The ``HloModuleProto`` inside an ``HloProto``."""
    fields = top_level_fields(data) or {}
    inner = _payload(data, fields.get(1))
    if inner is None:
        raise ValueError("not an HloProto")
    return inner


def wrap(module: bytes) -> bytes:
    """An ``HloProto`` holding ``module`` and nothing else."""
    return b"\x0a" + varint(len(module)) + module


def varint_field(data: bytes, number: int) -> int | None:
    """The value of top-level varint field ``number``, or None."""
    field = (top_level_fields(data) or {}).get(number)
    if field is None or field[0] != VARINT:
        return None
    return read_varint(data, field[1])[0]


def with_varint_field(data: bytes, number: int, value: int) -> bytes:
    """``data`` with every top-level varint field ``number`` set to ``value``."""
    out = bytearray()
    pos = 0
    while pos < len(data):
        start = pos
        key, pos = read_varint(data, pos)
        field, wire = key >> 3, key & 7
        if wire == VARINT:
            _, pos = read_varint(data, pos)
            if field == number:
                out += data[start : start + (len(varint(key)))] + varint(value)
                continue
        elif wire == 1:
            pos += 8
        elif wire == LEN:
            length, pos = read_varint(data, pos)
            pos += length
        elif wire == 5:
            pos += 4
        else:
            raise ValueError("not wire format")
        out += data[start:pos]
    return bytes(out)
