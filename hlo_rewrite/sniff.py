"""Recognise inputs that are not HLO text, so the error can say what they look like.

Only the first bytes of an input are looked at. HLO text (and anything not recognised here)
goes on to the reader, which gives the located error for text that is not HLO.
"""

from __future__ import annotations

import shlex

from .regex import lazy_pattern

#: (magic bytes at offset 0, what the data is, the command that decompresses it or None)
_MAGIC: tuple[tuple[bytes, str, str | None], ...] = (
    (b"\x1f\x8b", "gzip-compressed data", "gunzip -c"),
    (b"\x28\xb5\x2f\xfd", "zstd-compressed data", "zstd -dc"),
    (b"\xfd7zXZ\x00", "xz-compressed data", "xz -dc"),
    (b"BZh", "bzip2-compressed data", "bzip2 -dc"),
    (b"PK\x03\x04", "a zip archive", None),
    (b"ML\xefR", "an MLIR bytecode file", None),
)

# the first word of MLIR text (StableHLO, MHLO): `module @name ...`, `func.func`, `#loc = ...`
_MLIR = lazy_pattern(
    rb"(?:module\b(?:\s*@|\s*attributes\b|\s*\{)|func\.func\b|\"?builtin\.module\b|#loc\d*\s*=|"
    rb"#[A-Za-z_][\w.]*\s*=|\"?stablehlo\.|\"?mhlo\.)"
)

_TEXT_BYTES = frozenset(b"\t\n\r\f\v") | frozenset(range(0x20, 0x7F))


def _skip_comments(head: bytes) -> bytes:
    """The text after leading blank lines and ``//`` comment lines (and a byte-order mark)."""
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    while True:
        stripped = head.lstrip()
        if stripped.startswith(b"//"):
            nl = stripped.find(b"\n")
            if nl < 0:
                return b""
            head = stripped[nl + 1 :]
            continue
        return stripped


def _looks_like_protobuf(head: bytes) -> bool:
    """A serialized protocol buffer whose first field is a string or message (field 1 or 2,
    as in ``HloModuleProto``, ``HloProto`` and ``HloSnapshot``), holding bytes no text has."""
    if len(head) < 2 or head[0] not in (0x0A, 0x12):
        return False
    # a varint length, then (for HLO protos) mostly printable bytes, and somewhere a
    # control byte no HLO text can hold
    sample = head[:4096]
    return any(b not in _TEXT_BYTES and b < 0x80 for b in sample)


def describe_foreign(data: bytes, path: str = "-") -> str | None:
    """What ``data`` (read from ``path``) looks like when it is clearly not HLO text, with a
    hint; else None."""
    head = data[:65536]
    for magic, what, tool in _MAGIC:
        if head.startswith(magic):
            if tool is None:
                hint = "extract the module's HLO text first"
            else:
                source = f"{tool} {shlex.quote(path)}" if path != "-" else f"... | {tool}"
                hint = f"decompress it first: {source} | hlo-rewrite -"
            return f"this is {what}, not HLO text; {hint}"
    if _looks_like_protobuf(head):
        return ("this looks like a serialized protocol buffer, but not an HloModuleProto or HloProto "
                "(docs/formats.md); print the module as HLO text first")
    text = _skip_comments(head)
    if text.startswith(b"HloModule"):
        return None
    if _MLIR.match(text):
        return ("this looks like MLIR text without StableHLO or MHLO operations, not HLO text; print "
                "the module as HLO text first (in JAX: 'jax.jit(f).lower(...).as_text(dialect=\"hlo\")')")
    return None
