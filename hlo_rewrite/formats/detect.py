"""What a file holds, judged by its content (never by its name).

:func:`sniff` looks at the (already decompressed) bytes and names the format:

- ``hlo``: HLO module text: the first word after blank space and comments is
  ``HloModule`` or ``ENTRY``, or the text starts with a computation header
  (torch-neuronx keeps modules without the ``HloModule`` line): one with a
  signature (``%name (...) -> ... {``), or a bare ``name {`` in a text that has
  an ``ENTRY`` line. The reader checks the rest;
- ``torch_xla``: a torch_xla ``XLA_SAVE_TENSORS_FILE`` dump: text with a line
  ``## BEGIN_GRAPH``;
- ``stablehlo``: MLIR text (``module``/``func.func`` with ``stablehlo.`` or
  ``mhlo.`` operations);
- ``pbtxt``: an ``HloModuleProto`` (or ``HloProto``) in protobuf text format;
- ``proto``: a binary ``HloModuleProto``, or an ``HloProto`` holding one
  (XLA's ``*.hlo.pb`` dumps): the whole input reads as protobuf wire format
  with the fields a module has (``wire.py``);
- ``None``: none of these (a directory walk skips such files).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..regex import lazy_pattern
from . import wire

TYPE_CHECKING = False  # typing is not imported at run time here (docs/decisions.md)

if TYPE_CHECKING:
    from mmap import mmap

HLO = "hlo"
TORCH_XLA = "torch_xla"
STABLEHLO = "stablehlo"
PBTXT = "pbtxt"
PROTO = "proto"

#: every format name, in the order they are tried
FORMATS = (HLO, TORCH_XLA, STABLEHLO, PBTXT, PROTO)

#: how many leading bytes the text checks look at
HEAD = 1 << 16

_COMMENT_OR_SPACE = re.compile(r"(?:\s+|//[^\n\r]*|/\*.*?\*/)*", re.S)
_HASH_COMMENTS = lazy_pattern(r"(?:\s+|#[^\n]*)*")
_MLIR_ALIASES = lazy_pattern(r"(?:\s+|//[^\n\r]*|#[\w.$-]+\s*=[^\n]*)*")
_WORD = re.compile(r"[A-Za-z_][\w.]*")
_COMPUTATION_HEADER = lazy_pattern(r"%?[A-Za-z_][\w.\-]*[ \t]*(\([^\n]*\)[ \t]*->[^\n]*)?\{[ \t]*\r?\n")
_ENTRY_LINE = lazy_pattern(rb"(?:^|\n)ENTRY[ \t]")
_ENTRY_TEXT_LINE = lazy_pattern(r"(?:^|\n)ENTRY[ \t]")
_MLIR_OPS = lazy_pattern(rb"\b(?:stablehlo|mhlo)\.[a-z]")
_FRAME_LINE = lazy_pattern(rb"(?:^|\n)## BEGIN_GRAPH[ \t]*\r?\n")
_PBTXT_FIELD = lazy_pattern(r"[a-z_][a-z0-9_]*\s*(?::|\{)")
_PBTXT_MODULE_FIELDS = lazy_pattern(r"^\s*(?:computations\s*\{|entry_computation_name\s*:|hlo_module\s*\{)", re.M)


def first_word(text: str) -> str:
    """The first word of HLO text after blank space and ``//``/``/* */`` comments."""
    pos = _COMMENT_OR_SPACE.match(text).end()  # type: ignore[union-attr]
    m = _WORD.match(text, pos)
    return m.group(0) if m else ""


def _starts_like_hlo(head: str, has_entry_line: Callable[[], bool]) -> bool:
    pos = _COMMENT_OR_SPACE.match(head).end()  # type: ignore[union-attr]
    m = _WORD.match(head, pos)
    if m and m.group(0) in ("HloModule", "ENTRY"):
        return True
    header = _COMPUTATION_HEADER.match(head, pos)
    if header is None:
        return False
    return header.group(1) is not None or has_entry_line()  # a signature, or an ENTRY line


def is_hlo_text(text: str) -> bool:
    """Does this text start like an HLO module (see the module docstring)?"""
    return _starts_like_hlo(text[:HEAD].lstrip("\ufeff"), lambda: bool(_ENTRY_TEXT_LINE.search(text)))


def _is_mlir(head: str, data: bytes) -> bool:
    pos = _MLIR_ALIASES.match(head).end()  # type: ignore[union-attr]
    if pos >= len(head) - 1 and len(data) > len(head.encode("utf-8")):  # aliases past the head: read on
        text = data.decode("utf-8", "replace")
        pos, head = _MLIR_ALIASES.match(text).end(), text  # type: ignore[union-attr]
    m = _WORD.match(head, pos)
    if not m or m.group(0) not in ("module", "func.func"):
        return False
    return bool(_MLIR_OPS.search(data))


def _is_pbtxt(head: str) -> bool:
    pos = _HASH_COMMENTS.match(head).end()  # type: ignore[union-attr]
    return bool(_PBTXT_FIELD.match(head, pos)) and bool(_PBTXT_MODULE_FIELDS.search(head))


def _head(data: bytes | mmap) -> str:
    return data[:HEAD].decode("utf-8", "replace").lstrip("\ufeff")


def starts_like_hlo(data: bytes | mmap, head: str | None = None) -> bool:
    """Whether ``data`` (decompressed bytes, or a file mapped in memory; ``head``: its start as
    decoded, when known) is HLO text: the first look of :func:`sniff`, which takes it for HLO
    before any other format."""
    return _starts_like_hlo(_head(data) if head is None else head, lambda: bool(_ENTRY_LINE.search(data)))


def sniff(data: bytes) -> str | None:
    """The format of ``data`` (decompressed bytes), or None when it is none the tool reads."""
    head = _head(data)
    if starts_like_hlo(data, head):
        return HLO
    textual = "\ufffd" not in head[:-4] and "\x00" not in head
    if textual:
        if _FRAME_LINE.search(data):
            return TORCH_XLA
        if _is_mlir(head, data):
            return STABLEHLO
        if _is_pbtxt(head):
            return PBTXT
    if wire.hlo_proto_kind(data) is not None:
        return PROTO
    return None
