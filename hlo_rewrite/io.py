"""Reading inputs and writing outputs safely.

Inputs are read as UTF-8 with newlines kept exactly (``newline=""``); an
output file is written to a temporary file beside it and renamed over the
target, so a failed run never leaves a half-written file.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator

from .errors import HloIOError, HloParseError


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


def read_input(path: str) -> tuple[str, str]:
    """Read ``path`` (``-`` is standard input); returns (display name, text)."""
    if path == "-":
        return "<stdin>", decode(sys.stdin.buffer.read(), "<stdin>")
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise HloIOError(f"cannot read input: {exc.strerror}", filename=path) from None
    return path, decode(data, path)


def write_atomic(path: str, text: str) -> None:
    """Replace ``path`` with ``text`` atomically (temporary file beside it, then rename)."""
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise HloIOError(f"cannot write output: {exc.strerror}", filename=path) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            for piece in _pieces(text):
                fh.write(piece)
        if os.path.exists(path):
            try:
                os.chmod(tmp, os.stat(path).st_mode & 0o7777)
            except OSError:
                pass
        os.replace(tmp, path)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise HloIOError(f"cannot write output: {exc.strerror}", filename=path) from None
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_stdout(text: str) -> None:
    for piece in _pieces(text):
        sys.stdout.buffer.write(piece.encode("utf-8"))
    sys.stdout.buffer.flush()


#: characters encoded and written at a time, so a big output is never held
#: twice (as text and as bytes) in memory
_PIECE = 1 << 20


def _pieces(text: str) -> Iterator[str]:
    if len(text) <= _PIECE:
        yield text
        return
    for start in range(0, len(text), _PIECE):
        yield text[start : start + _PIECE]
