"""A large file of plain HLO text, decoded from a memory map of it.

Its own module, light to import: the console script decodes a large input with it before it
loads the rest of the command (:mod:`hlo_rewrite.early`).
"""

from __future__ import annotations

import os
import stat

from .detect import starts_like_hlo
from .gzipped import is_gzip

#: a file at least this large is mapped rather than read when it is plain HLO text: its text is
#: decoded straight from the page cache, without a copy of its bytes in between (about 1 ms a MB)
MAP_MIN_BYTES = 1 << 20


def map_text(path: str) -> str | None:
    """The text of the file at ``path`` when it is large (:data:`MAP_MIN_BYTES`) and plain
    HLO text (a regular file, not gzip, valid UTF-8, starting as HLO does); None otherwise."""
    if path == "-":
        return None
    try:  # looked at before it is opened: opening a FIFO would take its writer's data
        found = os.stat(path)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(found.st_mode) or found.st_size < MAP_MIN_BYTES:
        return None
    import mmap

    try:
        with open(path, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                return None
            mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None
    try:
        if is_gzip(mapped[:2]) or not starts_like_hlo(mapped):
            return None
        text = str(mapped, "utf-8")
    except UnicodeDecodeError:
        return None
    finally:
        mapped.close()
    return text
