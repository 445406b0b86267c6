"""Walking a directory tree for inputs: every regular file, in a stable order, filtered by globs.

Whether a file is HLO is judged later, by its content; this module only lists
candidates. Directories are walked in sorted order so runs are reproducible;
symbolic links to directories are not followed (a dump tree with a link back
to its parent would never end), links to files are read like files.
"""

from __future__ import annotations

import fnmatch
import os
from collections import namedtuple
from collections.abc import Iterable, Sequence


# a record as typing.NamedTuple makes one, without importing typing (docs/decisions.md):
# the fields named for collections.namedtuple, typed below in the same order
class Entry(namedtuple("Entry", ["path", "relpath"])):
    """One file found: its path to open and its path relative to the walked root ('/'-separated)."""

    __slots__ = ()
    path: str
    relpath: str


def matches(relpath: str, patterns: Iterable[str]) -> bool:
    """Does a glob match? A pattern with a '/' is matched against the relative path, one without against
    the file name; ``*`` in a path pattern also crosses '/'."""
    base = relpath.rsplit("/", 1)[-1]
    for pattern in patterns:
        target = relpath if "/" in pattern else base
        if fnmatch.fnmatchcase(target, pattern):
            return True
    return False


def walk(root: str, include: Sequence[str] = (), exclude: Sequence[str] = (),
         skip: Sequence[str] = ()) -> list[Entry]:
    """The files under ``root`` that ``include`` (if given) and not ``exclude`` select.

    ``skip`` lists directories left out entirely (the output directory of a
    run, when it lies inside the tree being read).
    """
    skipped = {os.path.realpath(p) for p in skip}
    found: list[Entry] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        keep = []
        for d in sorted(dirnames):
            full = os.path.join(dirpath, d)
            if os.path.islink(full) or os.path.realpath(full) in skipped:
                continue
            keep.append(d)
        dirnames[:] = keep
        for f in sorted(filenames):
            full = os.path.join(dirpath, f)
            rel = os.path.relpath(full, root).replace(os.sep, "/")
            if not os.path.isfile(full):  # sockets, FIFOs, dangling links
                continue
            if include and not matches(rel, include):
                continue
            if exclude and matches(rel, exclude):
                continue
            found.append(Entry(full, rel))
    return found
