"""gzip, recognised by its magic bytes and written the same way every time."""

from __future__ import annotations

from ..errors import HloParseError

MAGIC = b"\x1f\x8b"

#: the level ``gzip`` uses by default: a good balance for multi-megabyte text
LEVEL = 6


def is_gzip(data: bytes) -> bool:
    return data[:2] == MAGIC


def decompress(data: bytes, filename: str | None = None) -> bytes:
    """Every member of a gzip stream, joined; a damaged stream is a located error."""
    import gzip  # imported when an input is gzip: most never are
    import zlib

    try:
        return gzip.decompress(data)
    except (OSError, EOFError, zlib.error) as exc:
        raise HloParseError(f"the input starts like gzip but does not decompress: {exc}",
                            filename=filename) from None


def compress(data: bytes) -> bytes:
    """gzip with no timestamp and no file name in the header, so equal inputs give equal bytes."""
    import gzip

    return gzip.compress(data, compresslevel=LEVEL, mtime=0)
