"""What a file holds, judged by its content (never by its name).

:func:`sniff` looks at the (already decompressed) bytes and names the format:

- ``hlo``: HLO module text: the first word after blank space and comments is
  ``HloModule`` or ``ENTRY``;
- ``torch_xla``: a torch_xla ``XLA_SAVE_TENSORS_FILE`` dump: text with a line
  ``## BEGIN_GRAPH``;
- ``stablehlo``: MLIR text (``module``/``func.func`` with ``stablehlo.`` or
  ``mhlo.`` operations);
- ``hlo-pbtxt``: an ``HloModuleProto`` in protobuf text format;
- ``hlo-proto``: a binary ``HloModuleProto``: the whole input reads as
  protobuf wire format with the fields a module has (its name, field 1, and
  its computations, field 3, both length-delimited);
- ``None``: none of these (a directory walk skips such files).
"""

from __future__ import annotations

import re

HLO = "hlo"
TORCH_XLA = "torch_xla"
STABLEHLO = "stablehlo"
PBTXT = "hlo-pbtxt"
PROTO = "hlo-proto"

#: every format name, in the order they are tried
FORMATS = (HLO, TORCH_XLA, STABLEHLO, PBTXT, PROTO)

#: how many leading bytes the text checks look at
HEAD = 1 << 16

_COMMENT_OR_SPACE = re.compile(r"(?:\s+|//[^\n]*|/\*.*?\*/)*", re.S)
_HASH_COMMENTS = re.compile(r"(?:\s+|#[^\n]*)*")
_MLIR_ALIASES = re.compile(r"(?:\s+|//[^\n]*|#[\w.$-]+\s*=[^\n]*)*")
_WORD = re.compile(r"[A-Za-z_][\w.]*")
_FRAME_LINE = re.compile(rb"(?:^|\n)## BEGIN_GRAPH[ \t]*\r?\n")
_PBTXT_FIELD = re.compile(r"[a-z_][a-z0-9_]*\s*(?::|\{)")
_PBTXT_MODULE_FIELDS = re.compile(r"^\s*(?:computations\s*\{|entry_computation_name\s*:)", re.M)


def first_word(text: str) -> str:
    """The first word of HLO text after blank space and ``//``/``/* */`` comments."""
    pos = _COMMENT_OR_SPACE.match(text).end()  # type: ignore[union-attr]
    m = _WORD.match(text, pos)
    return m.group(0) if m else ""


def is_hlo_text(text: str) -> bool:
    """Does this text start like an HLO module (``HloModule`` or ``ENTRY``)?"""
    return first_word(text[:HEAD].lstrip("\ufeff")) in ("HloModule", "ENTRY")


def _is_mlir(head: str) -> bool:
    pos = _MLIR_ALIASES.match(head).end()  # type: ignore[union-attr]
    m = _WORD.match(head, pos)
    if not m or m.group(0) not in ("module", "func.func"):
        return False
    return "stablehlo." in head or "mhlo." in head


def _is_pbtxt(head: str) -> bool:
    pos = _HASH_COMMENTS.match(head).end()  # type: ignore[union-attr]
    return bool(_PBTXT_FIELD.match(head, pos)) and bool(_PBTXT_MODULE_FIELDS.search(head))


def _varint(data: bytes, pos: int) -> tuple[int, int]:
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


def top_level_fields(data: bytes) -> dict[int, int] | None:
    """Field number -> wire type of each top-level protobuf field, or None if ``data`` is not wire format."""
    fields: dict[int, int] = {}
    pos = 0
    try:
        while pos < len(data):
            key, pos = _varint(data, pos)
            number, wire = key >> 3, key & 7
            if number == 0:
                return None
            if wire == 0:
                _, pos = _varint(data, pos)
            elif wire == 1:
                pos += 8
            elif wire == 2:
                length, pos = _varint(data, pos)
                pos += length
            elif wire == 5:
                pos += 4
            else:  # groups (3, 4) are not used by HloModuleProto; 6, 7 do not exist
                return None
            if pos > len(data):
                return None
            fields.setdefault(number, wire)
    except ValueError:
        return None
    return fields


def is_hlo_module_proto(data: bytes) -> bool:
    """Does ``data`` read as a serialized ``HloModuleProto`` (name and computations present)?"""
    fields = top_level_fields(data)
    return fields is not None and fields.get(1) == 2 and fields.get(3) == 2


def sniff(data: bytes) -> str | None:
    """The format of ``data`` (decompressed bytes), or None when it is none the tool reads."""
    head = data[:HEAD].decode("utf-8", "replace").lstrip("\ufeff")
    word = first_word(head)
    if word in ("HloModule", "ENTRY"):
        return HLO
    textual = "\ufffd" not in head[:-4] and "\x00" not in head
    if textual:
        if _FRAME_LINE.search(data):
            return TORCH_XLA
        if _is_mlir(head):
            return STABLEHLO
        if _is_pbtxt(head):
            return PBTXT
    if is_hlo_module_proto(data):
        return PROTO
    return None
