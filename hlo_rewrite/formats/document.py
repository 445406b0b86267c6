"""A file as read: its format, its compression, and the HLO modules in it.

:func:`load` reads a path (``-`` is standard input) and :func:`from_bytes`
reads bytes already in memory; both return a :class:`Document` whose
``units`` are the HLO module texts to rewrite, each with the number of lines
standing before it in ``text``, so an error in a unit is reported at its line
in the whole file. :meth:`Document.encode` puts rewritten unit texts back and
returns the bytes to write, in the format and compression asked for.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import NamedTuple

from .. import xla_bridge
from ..errors import HloError, HloIOError
from ..io import decode
from . import gzipped, wire
from .detect import HLO, PBTXT, PROTO, STABLEHLO, TORCH_XLA, is_hlo_text, sniff
from .mapped import map_text

#: output formats a user can ask for (``--output-format``), and the format a suffix names
OUTPUT_FORMATS = (HLO, PROTO, PBTXT, STABLEHLO)
_SUFFIX_FORMATS = {".pb": PROTO, ".pbtxt": PBTXT, ".mlir": STABLEHLO}


class FormatError(HloError):
    """The input's format cannot be read, or the output cannot be written in the format asked (exit code 3)."""


class Unit(NamedTuple):
    """One HLO module to rewrite: its text and the lines of ``Document.text`` before it."""

    text: str
    line_offset: int = 0
    label: str = ""


@dataclass
class Document:
    """One input file, decoded.

    ``text`` is what line numbers refer to: the file's own text for HLO text
    and torch_xla dumps, XLA's print of the module for a proto or StableHLO
    input. ``units`` are the modules in it; ``kept`` names the torch_xla
    graphs that hold no HLO (kept byte for byte).
    """

    name: str
    format: str
    compressed: bool
    text: str
    units: list[Unit]
    #: the bytes as read, kept where ``text`` in UTF-8 is not them (gzip, protos, StableHLO), so
    #: an unchanged file is written back as it was without holding plain text twice
    raw: bytes = b""
    kept: list[str] = field(default_factory=list)
    #: a proto that is an ``HloProto`` (XLA's ``*.hlo.pb`` dumps) rather than a bare ``HloModuleProto``
    wrapped: bool = False
    #: the ``id`` of the input's HloModuleProto (0 for other inputs), given to a proto written back
    module_id: int = 0
    #: torch_xla dumps: the text around the frames, and per frame None (a unit) or its kept text
    outside: list[str] = field(default_factory=list, repr=False)
    frame_slots: list[str | None] = field(default_factory=list, repr=False)

    def rebuild_text(self, outputs: list[str]) -> str:
        """The whole file's text with each unit replaced by its output (what a diff compares with ``text``)."""
        self._check(outputs)
        if self.format == TORCH_XLA:
            out_iter = iter(outputs)
            bodies = [next(out_iter) if kept is None else kept for kept in self.frame_slots]
            from .frames import join_frames  # torch_xla dumps only

            return join_frames(bodies, self.outside)
        return outputs[0]

    def _check(self, outputs: list[str]) -> None:
        if len(outputs) != len(self.units):
            raise ValueError(f"{len(self.units)} outputs expected, got {len(outputs)}")

    def _module_proto(self, text: str) -> bytes:
        """XLA's proto of ``text``, with the input's module id: XLA numbers modules as a process
        creates them, so without this the same input would not always give the same bytes."""
        module = xla_bridge.text_to_proto(text, self.name)
        return wire.with_varint_field(module, wire.MODULE_ID, self.module_id)

    def unchanged(self, outputs: list[str]) -> bool:
        return all(o == u.text for o, u in zip(outputs, self.units, strict=True))

    def encode(self, outputs: list[str], *, output_format: str | None = None, compress: bool | None = None) -> bytes:
        """The bytes to write: the units' outputs put back, in ``output_format``
        (default: HLO text, or a torch_xla dump for one), gzipped when ``compress``
        (default: as the input was).

        When nothing changed and the format and compression are the input's,
        these are the input's own bytes.
        """
        self._check(outputs)
        fmt = output_format or default_output_format(self.format)
        gz = self.compressed if compress is None else compress
        if fmt == self.format and self.unchanged(outputs):
            if gz == self.compressed:
                return self.raw if self.raw else self.text.encode("utf-8")
            source = gzipped.decompress(self.raw) if self.compressed else self.raw or self.text.encode("utf-8")
            return gzipped.compress(source) if gz else source
        data = self._serialize(outputs, fmt)
        return gzipped.compress(data) if gz else data

    def _serialize(self, outputs: list[str], fmt: str) -> bytes:
        if self.format == TORCH_XLA:
            if fmt not in (TORCH_XLA, HLO):  # its graphs are HLO text already
                raise FormatError(f"a torch_xla dump is written back as a torch_xla dump, not as {fmt}",
                                  filename=self.name)
            return self.rebuild_text(outputs).encode("utf-8")
        text = outputs[0]
        if fmt == HLO:
            return text.encode("utf-8")
        if fmt == PROTO:
            module = self._module_proto(text)
            return wire.wrap(module) if self.wrapped else module
        if fmt == STABLEHLO:
            return xla_bridge.text_to_mlir(text, self.name).encode("utf-8")
        if fmt == PBTXT:
            return xla_bridge.proto_to_pbtxt(self._module_proto(text), self.wrapped).encode("utf-8")
        raise FormatError(f"cannot write {fmt}", filename=self.name)


def default_output_format(input_format: str) -> str:
    """What a file is written as when nothing asks otherwise: HLO text, or a torch_xla dump for one."""
    return TORCH_XLA if input_format == TORCH_XLA else HLO


def format_for_destination(path: str | None) -> str | None:
    """The format a destination's name asks for (``.pb``, ``.pbtxt``, ``.mlir``, also under ``.gz``), or None."""
    if not path or path == "-":
        return None
    base = path[:-3] if path.endswith(".gz") else path
    return _SUFFIX_FORMATS.get(os.path.splitext(base)[1])


def wants_gzip(path: str | None) -> bool:
    """Is a destination named to be gzip (``.gz``)?"""
    return bool(path) and path != "-" and str(path).endswith(".gz")


def read_bytes(path: str) -> bytes:
    """The bytes of ``path`` (``-`` is standard input); a read failure is an I/O error."""
    if path == "-":
        try:
            return sys.stdin.buffer.read()
        except OSError as exc:
            raise HloIOError(f"cannot read standard input: {exc.strerror}", filename="<stdin>") from None
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise HloIOError(f"cannot read input: {exc.strerror}", filename=path) from None


def map_hlo_text(path: str, name: str) -> Document | None:
    """The document of a large file of plain (uncompressed, valid UTF-8) HLO text at ``path``,
    decoded from a memory map of the file (:func:`.mapped.map_text`); None for anything else,
    which is read as usual (:func:`read_bytes`, :func:`from_bytes`: they also report what is
    wrong)."""
    text = map_text(path)
    return None if text is None else hlo_text_document(text, name)


def hlo_text_document(text: str, name: str) -> Document:
    """The document of ``text``, one module of plain HLO text, read from a file named ``name``."""
    return Document(name=name, format=HLO, compressed=False, text=text, units=[Unit(text)])


def contents(raw: bytes, name: str) -> bytes:
    """The bytes inside: ``raw`` gunzipped if it is gzip, else ``raw`` itself."""
    return gzipped.decompress(raw, name) if gzipped.is_gzip(raw) else raw


def load(path: str, *, name: str | None = None, fallback: str | None = HLO) -> Document | None:
    """Read and decode ``path``; see :func:`from_bytes`."""
    shown = name or ("<stdin>" if path == "-" else path)
    return from_bytes(read_bytes(path), shown, fallback=fallback)


def from_bytes(raw: bytes, name: str, *, fallback: str | None = HLO) -> Document | None:
    """Decode bytes: gunzip them if they are gzip, judge the format by content, cut the modules out.

    Content no format matches is read as ``fallback`` (HLO text by default, so
    the reader reports what is wrong with it at its line and column); with
    ``fallback=None`` such content gives None (a directory walk skips it).
    """
    compressed = gzipped.is_gzip(raw)
    data = contents(raw, name)
    fmt = sniff(data) or fallback
    if fmt is None:
        return None
    plain_text = fmt in (HLO, TORCH_XLA) and not compressed
    doc = Document(name=name, format=fmt, compressed=compressed, text="", units=[], raw=b"" if plain_text else raw)
    if fmt == HLO:
        doc.text = decode(data, name)
        doc.units = [Unit(doc.text)]
    elif fmt == TORCH_XLA:
        doc.text = decode(data, name)
        from .frames import split_frames  # torch_xla dumps only

        frame_list, doc.outside = split_frames(doc.text, name)
        for frame in frame_list:
            if is_hlo_text(frame.text):
                doc.units.append(Unit(frame.text, frame.line_offset, frame.label))
                doc.frame_slots.append(None)
            else:
                doc.kept.append(frame.label)
                doc.frame_slots.append(frame.text)
        if not doc.units:
            if fallback is None:
                return None
            raise FormatError("no graph in this torch_xla dump is HLO text (torch_xla writes HLO with "
                              "XLA_SAVE_TENSORS_FMT=hlo)", filename=name)
    elif fmt == PROTO:
        doc.wrapped = wire.hlo_proto_kind(data) == wire.WRAPPED
        module = wire.unwrap(data) if doc.wrapped else data
        doc.module_id = wire.varint_field(module, wire.MODULE_ID) or 0
        doc.text = xla_bridge.proto_to_text(module, name)
        doc.units = [Unit(doc.text)]
    elif fmt == STABLEHLO:
        doc.text = xla_bridge.mlir_to_text(decode(data, name), name)
        doc.units = [Unit(doc.text)]
    elif fmt == PBTXT:
        module, doc.wrapped = xla_bridge.pbtxt_to_proto(decode(data, name), name)
        doc.module_id = wire.varint_field(module, wire.MODULE_ID) or 0
        doc.text = xla_bridge.proto_to_text(module, name)
        doc.units = [Unit(doc.text)]
    else:  # pragma: no cover - sniff names only the formats above
        raise FormatError(f"unknown format {fmt}", filename=name)
    return doc
