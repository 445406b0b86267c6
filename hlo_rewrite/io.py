"""Reading inputs.

Inputs are read as UTF-8 with newlines kept exactly; input that is clearly not
HLO text (compressed, a protocol buffer, MLIR) is refused with what it looks
like (``sniff.py``). Writing outputs is ``outputs.py``.
"""

from __future__ import annotations

import sys

from .errors import HloIOError, HloParseError
from .sniff import describe_foreign


def decode(data: bytes, filename: str) -> str:
    """Bytes -> text; invalid UTF-8 is a located error."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        start = data.rfind(b"\n", 0, exc.start) + 1
        end = data.find(b"\n", exc.start)
        src = data[start : end if end >= 0 else len(data)].decode("utf-8", "replace")
        raise HloParseError(
            f"the input is not UTF-8 text (byte 0x{data[exc.start]:02x})",
            filename=filename, line=line, column=col, source_line=src,
        ) from None


def check_not_foreign(data: bytes, filename: str) -> None:
    """Refuse data that is clearly not HLO text, saying what it looks like."""
    what = describe_foreign(data, "-" if filename == "<stdin>" else filename)
    if what is not None:
        raise HloParseError(what, filename=filename)


def read_input(path: str) -> tuple[str, str]:
    """Read ``path`` (``-`` is standard input); returns (display name, text)."""
    if path == "-":
        try:
            data = sys.stdin.buffer.read()
        except OSError as exc:
            raise HloIOError(f"cannot read standard input: {exc.strerror}", filename="<stdin>") from None
        check_not_foreign(data, "<stdin>")
        return "<stdin>", decode(data, "<stdin>")
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise HloIOError(f"cannot read input: {exc.strerror}", filename=path) from None
    check_not_foreign(data, path)
    return path, decode(data, path)
