"""Every call into jaxlib (XLA's own converters), behind the optional ``[xla]`` extra.

``pip install 'hlo-rewrite[xla]'`` brings jaxlib. Nothing else in the package
imports jax or jaxlib; each function here imports it on first use, so the
command starts as fast without the extra, and a file that needs it fails with
one line saying what to install (:class:`XlaUnavailable`, exit code 3).

What each conversion keeps is written down in docs/formats.md:

- :func:`proto_to_text` / :func:`text_to_proto`: a binary ``HloModuleProto``
  and HLO text, through XLA's HLO parser and printer. The proto carries the
  module, not its spelling: the text comes out as XLA's printer prints it.
- :func:`mlir_to_text` / :func:`text_to_mlir`: StableHLO (or MHLO) MLIR text
  and HLO text, through XLA's MLIR-to-HLO and HLO-to-StableHLO translations.
- :func:`pbtxt_to_proto` / :func:`proto_to_pbtxt`: an ``HloModuleProto`` (or
  ``HloProto``) in protobuf text format and in binary. jaxlib has no converter
  for the text format, but carries XLA's proto schema (``xla/service/hlo.proto``
  and what it imports) compiled into its library; the schema is read from
  there and the ``protobuf`` package (also in the extra) does the conversion.
"""

from __future__ import annotations

import functools
import mmap
import os
from types import ModuleType
from typing import Any

from .errors import HloError, HloParseError
from .formats.wire import read_varint

#: the command that brings what this module needs
INSTALL_HINT = "pip install 'hlo-rewrite[xla]'"


class XlaUnavailable(HloError):
    """A format that needs jaxlib was met, and jaxlib is not installed (exit code 3)."""


class XlaConversionError(HloParseError):
    """XLA refused to convert the input (its own message is kept)."""


def _client(what: str, filename: str | None = None) -> ModuleType:
    try:
        from jax._src.lib import xla_client
    except ImportError:
        raise XlaUnavailable(f"reading or writing {what} needs jaxlib: {INSTALL_HINT}", filename=filename) from None
    return xla_client


def available() -> bool:
    """Whether jaxlib can be imported (the ``[xla]`` extra is installed)."""
    try:
        _client("")
    except XlaUnavailable:
        return False
    return True


def version() -> str | None:
    """The jaxlib version in use, or None without the extra."""
    try:
        import jaxlib
    except ImportError:
        return None
    return str(getattr(jaxlib, "__version__", None) or getattr(jaxlib.version, "__version__", ""))


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return "; ".join(lines[:3])


def proto_to_text(data: bytes, filename: str | None = None) -> str:
    """A serialized ``HloModuleProto`` as HLO text, printed by XLA's printer."""
    xc = _client("a binary HloModuleProto", filename)
    try:
        module = xc.hlo.HloModule.from_serialized_hlo_module_proto(data)
        return str(module.to_string())
    except Exception as exc:  # noqa: BLE001 - XLA's own error types are not public
        raise XlaConversionError(f"XLA cannot read this HloModuleProto: {_first_line(exc)}",
                                 filename=filename) from None


def _module_from_text(text: str, filename: str | None, target: str):
    xc = _client(target, filename)
    try:
        return xc, xc.hlo.hlo_module_from_text(text)
    except Exception as exc:  # noqa: BLE001
        raise XlaConversionError(f"XLA's parser refuses the rewritten module, so it cannot be written as "
                                 f"{target}: {_first_line(exc)}", filename=filename) from None


def text_to_proto(text: str, filename: str | None = None) -> bytes:
    """HLO text as a serialized ``HloModuleProto`` (read by XLA's parser)."""
    _xc, module = _module_from_text(text, filename, "a binary HloModuleProto")
    return bytes(module.as_serialized_hlo_module_proto())


def mlir_to_text(text: str, filename: str | None = None) -> str:
    """StableHLO or MHLO MLIR text as HLO text (XLA's MLIR-to-HLO translation, then its printer)."""
    xc = _client("StableHLO/MHLO text", filename)
    try:
        computation = xc._xla.mlir.mlir_module_to_xla_computation(text, use_tuple_args=False, return_tuple=False)
        return str(computation.get_hlo_module().to_string())
    except Exception as exc:  # noqa: BLE001
        raise XlaConversionError(f"XLA cannot convert this MLIR module to HLO: {_first_line(exc)}",
                                 filename=filename) from None


def text_to_mlir(text: str, filename: str | None = None) -> str:
    """HLO text as StableHLO MLIR text (XLA's HLO-to-StableHLO translation)."""
    xc, module = _module_from_text(text, filename, "StableHLO")
    try:
        computation = xc.XlaComputation(module.as_serialized_hlo_module_proto())
        return str(xc._xla.mlir.xla_computation_to_mlir_module(computation))
    except Exception as exc:  # noqa: BLE001
        raise XlaConversionError(f"XLA cannot convert the rewritten module to StableHLO: {_first_line(exc)}",
                                 filename=filename) from None


# --------------------------------------------------------------------------- protobuf text format

#: the schema file that defines HloModuleProto and HloProto, and the messages read
_HLO_PROTO_FILE = "xla/service/hlo.proto"
MODULE_MESSAGE = "xla.HloModuleProto"
WRAPPED_MESSAGE = "xla.HloProto"

#: FileDescriptorProto fields, in the order they are serialized: number -> wire type
_DESCRIPTOR_FIELDS = {1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2, 7: 2, 8: 2, 9: 2, 10: 0, 11: 0, 12: 2, 13: 2, 14: 0}


def _descriptor_at(data: Any, start: int) -> bytes:
    """The serialized FileDescriptorProto starting at ``start`` in a library image: fields are
    serialized in field-number order, so it ends where a field is out of order or unknown."""
    pos, last = start, 0
    while pos < len(data):
        try:
            key, after = read_varint(data, pos)
            number, wire_type = key >> 3, key & 7
            if _DESCRIPTOR_FIELDS.get(number) != wire_type or number < last or (number == 1 and last):
                break
            value, after = read_varint(data, after)  # a varint value, or a length
        except ValueError:  # the image ends inside a varint
            break
        pos = after + value if wire_type == 2 else after
        last = number
    return bytes(data[start:pos])


def _jaxlib_libraries() -> list[str]:
    import jaxlib

    folder = os.path.dirname(jaxlib.__file__)
    names = [n for n in os.listdir(folder) if n.endswith((".so", ".dylib", ".pyd"))]
    paths = [os.path.join(folder, n) for n in names]
    return sorted(paths, key=os.path.getsize, reverse=True)  # the schema sits in the big shared library


@functools.cache
def _proto_messages() -> dict[str, Any]:
    """Message classes of XLA's HLO protos, built from the schema compiled into jaxlib."""
    _client("protobuf text format")
    try:
        from google.protobuf import (
            any_pb2,
            descriptor_pb2,
            descriptor_pool,
            duration_pb2,
            message_factory,
            timestamp_pb2,
            wrappers_pb2,
        )
    except ImportError:
        raise XlaUnavailable(f"reading or writing protobuf text format needs protobuf: {INSTALL_HINT}") from None
    pool = descriptor_pool.DescriptorPool()
    added: set[str] = set()
    for well_known in (any_pb2, duration_pb2, timestamp_pb2, wrappers_pb2):
        pool.AddSerializedFile(well_known.DESCRIPTOR.serialized_pb)
        added.add(well_known.DESCRIPTOR.name)
    images = []
    try:
        for path in _jaxlib_libraries():
            with open(path, "rb") as fh:
                images.append(mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ))
        pending = [_HLO_PROTO_FILE]
        files: dict[str, Any] = {}
        while pending:  # the schema file and everything it imports
            name = pending.pop()
            if name in added or name in files:
                continue
            key = b"\n" + bytes([len(name)]) + name.encode()
            for image in images:
                at = image.find(key)
                if at >= 0:
                    files[name] = descriptor_pb2.FileDescriptorProto.FromString(_descriptor_at(image, at))
                    break
            else:
                raise XlaConversionError(f"this jaxlib ({version()}) does not carry XLA's proto schema "
                                         f"({name}), so protobuf text format cannot be read or written")
            pending.extend(files[name].dependency)
    finally:
        for image in images:
            image.close()

    def add(name: str) -> None:
        if name in added:
            return
        for dep in files[name].dependency:
            add(dep)
        pool.Add(files[name])
        added.add(name)

    add(_HLO_PROTO_FILE)
    return {m: message_factory.GetMessageClass(pool.FindMessageTypeByName(m)) for m in (MODULE_MESSAGE, WRAPPED_MESSAGE)}


def pbtxt_to_proto(text: str, filename: str | None = None) -> tuple[bytes, bool]:
    """Protobuf text of an ``HloModuleProto`` (or of an ``HloProto``, whose ``hlo_module`` is taken)
    as a serialized ``HloModuleProto``; also says whether it was an ``HloProto``."""
    from google.protobuf import text_format

    messages = _proto_messages()
    wrapped = text.lstrip().startswith("hlo_module")
    message = messages[WRAPPED_MESSAGE if wrapped else MODULE_MESSAGE]()
    try:
        text_format.Parse(text, message)
    except text_format.ParseError as exc:
        line, column = exc.GetLine(), exc.GetColumn()
        lines = text.split("\n")
        source = lines[line - 1] if line and line <= len(lines) else None
        message_text = str(exc).split(" : ", 1)[-1] if line else str(exc)
        raise XlaConversionError(f"not an {'HloProto' if wrapped else 'HloModuleProto'} in text format: "
                                 f"{message_text}", filename=filename, line=line or None,
                                 column=column or None, source_line=source) from None
    module = message.hlo_module if wrapped else message
    return module.SerializeToString(deterministic=True), wrapped


def proto_to_pbtxt(data: bytes, wrapped: bool = False) -> str:
    """A serialized ``HloModuleProto`` as protobuf text (inside an ``HloProto`` when ``wrapped``)."""
    from google.protobuf import text_format

    messages = _proto_messages()
    module = messages[MODULE_MESSAGE].FromString(data)
    if wrapped:
        outer = messages[WRAPPED_MESSAGE]()
        outer.hlo_module.CopyFrom(module)
        return str(text_format.MessageToString(outer))
    return str(text_format.MessageToString(module))
