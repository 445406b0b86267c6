"""Reading a large input while the command's own modules load.

Loading the command line (click and the option handling, the report and output modules) takes
a good part of a run on a module of a few MB, and the reading of a large module cannot start
before the options say which file to read. So the console script (:mod:`hlo_rewrite.__main__`)
first guesses the input from the words of its command line (:func:`guess`), before it loads
those modules: when exactly one word names a regular file large enough to be read by more
than one process, that file's HLO text is decoded and its workers are started
(:func:`hlo_rewrite.reader.parallel.begin`), which check the later computation bodies while
the command line loads and is read.

The guess only ever saves time. The runner takes the text read early (:func:`take`) only for
the very path it reads, when that path still names the same unchanged file (device, inode,
size, modification time); the reader takes the workers over only for that very text. Any
other outcome (a wrong guess, another format, ``--strict``, an error in the options) ends the
workers, and the text read early is dropped: the run is the one it would have been.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence

TYPE_CHECKING = False  # typing is not imported at run time here (docs/decisions.md)

if TYPE_CHECKING:
    from .formats import Document

#: the spellings of the option whose value is the output path (``-o PATH``): that word is
#: not an input (tests/test_early.py checks them against the command line's own)
OUTPUT_OPTIONS = ("-o", "--output")

#: what was read early: the input's identity when it was read, and its text
_read: tuple[tuple[int, int, int, int], str] | None = None


def guess(words: Sequence[str]) -> str | None:
    """The input a command line names, when it is plainly one large file: the one word that is
    not an option, nor the output option's value, and names a regular file of at least
    :data:`~hlo_rewrite.reader.parallel.PARALLEL_MIN_BYTES`; None when there is none or more
    than one (two names of one file count once)."""
    found = _guessed(words)
    return found[0] if found is not None else None


def _guessed(words: Sequence[str]) -> tuple[str, os.stat_result] | None:
    """:func:`guess`'s word, with what ``stat`` said of its file."""
    from .reader.parallel import PARALLEL_MIN_BYTES

    found: dict[tuple[int, int], tuple[str, os.stat_result]] = {}
    options = True
    after_output = False
    for word in words:
        if options and after_output:
            after_output = False
            continue
        if options and word == "--":
            options = False
            continue
        if options and word.startswith("-"):
            after_output = word in OUTPUT_OPTIONS
            continue
        try:
            st = os.stat(word)
        except (OSError, ValueError):
            continue
        if stat.S_ISREG(st.st_mode) and st.st_size >= PARALLEL_MIN_BYTES:
            found.setdefault((st.st_dev, st.st_ino), (word, st))
    return next(iter(found.values())) if len(found) == 1 else None


def begin(words: Sequence[str]) -> None:
    """Read the input :func:`guess` finds in ``words`` and start its reading's workers; nothing
    when there is no such input, it is not plain HLO text, or it would be read in one process."""
    global _read
    found = _guessed(words)
    if found is None:
        return
    from .formats.mapped import map_text
    from .reader import parallel

    processes = parallel.usable_cpus()
    if processes < 2:
        return  # read in one process: nothing to start, and the text would be decoded twice
    path, before = found
    text = map_text(path)
    if text is None or not parallel.begin(text, processes):
        return
    _read = (_identity(before), text)


def take(path: str, name: str) -> Document | None:
    """The document read early, named ``name``, when the file at ``path`` is the one it was
    read from, unchanged; None otherwise (the text read early is dropped either way: it serves
    one reading)."""
    global _read
    read, _read = _read, None
    if read is None:
        return None
    identity, text = read
    try:
        same = _identity(os.stat(path)) == identity
    except (OSError, ValueError):
        same = False
    if not same:
        return None
    from .formats.document import hlo_text_document

    return hlo_text_document(text, name)


def drop() -> None:
    """Forget what was read early and end its workers: this run reads otherwise."""
    global _read
    _read = None
    from .reader import parallel

    parallel.end()


def _identity(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
