"""torch_xla ``XLA_SAVE_TENSORS_FILE`` dumps: many graphs in one file.

torch_xla (``torch_xla/csrc/debug_util.cpp``) appends, for every graph it
saves, a ``[name]`` line, a ``TensorsGraphInfo:`` header with the Python
frames and the graph hashes, then the graph between a line ``## BEGIN_GRAPH``
and a line ``## END_GRAPH``. With ``XLA_SAVE_TENSORS_FMT=hlo`` the graph is HLO
module text; other formats (``text``, ``dot``, ``stablehlo``) hold something
else.

:func:`split_frames` cuts the file into the text outside the frames and the
frame bodies (everything between the two marker lines, line endings
included), so ``join_frames`` of the unchanged bodies gives the file back byte
for byte.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import HloParseError
from ..regex import lazy_pattern

BEGIN = "## BEGIN_GRAPH"
END = "## END_GRAPH"

_MARKER = lazy_pattern(r"^## (BEGIN|END)_GRAPH[ \t]*\r?$", re.M)
_TITLE = lazy_pattern(r"^\[(.*)\]\r?$", re.M)


@dataclass(frozen=True)
class Frame:
    """One graph: its body text, the lines of the file before it, and torch_xla's name for it."""

    index: int
    text: str
    line_offset: int
    title: str | None

    @property
    def label(self) -> str:
        return f"graph {self.index + 1}" + (f" [{self.title}]" if self.title else "")


def _line_of(text: str, pos: int) -> tuple[int, str]:
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    return text.count("\n", 0, pos) + 1, text[start : end if end >= 0 else len(text)]


def split_frames(text: str, filename: str | None = None) -> tuple[list[Frame], list[str]]:
    """The frames of a dump and the text around them (one piece more than frames).

    A ``## END_GRAPH`` without an open frame, a ``## BEGIN_GRAPH`` inside one,
    or a frame never closed is an error at that marker's line.
    """
    frames: list[Frame] = []
    outside: list[str] = []
    last = 0  # end of the previous closing marker line
    open_at: int | None = None  # end of the open BEGIN line
    open_marker = 0
    for m in _MARKER.finditer(text):
        is_begin = m.group(1) == "BEGIN"
        if is_begin and open_at is None:
            open_marker = m.start()
            open_at = min(m.end() + 1, len(text))
            outside.append(text[last:open_at])
            continue
        if not is_begin and open_at is not None:
            body = text[open_at : m.start()]
            before = text[last:open_marker]
            titles = _TITLE.findall(before)
            frames.append(Frame(len(frames), body, text.count("\n", 0, open_at), titles[-1] if titles else None))
            last = m.start()
            open_at = None
            continue
        line, src = _line_of(text, m.start())
        what = f"{BEGIN} inside a graph that is not closed" if is_begin else f"{END} without {BEGIN}"
        raise HloParseError(what, filename=filename, line=line, column=1, source_line=src)
    if open_at is not None:
        line, src = _line_of(text, open_marker)
        raise HloParseError(f"{BEGIN} without {END}", filename=filename, line=line, column=1, source_line=src)
    outside.append(text[last:])
    return frames, outside


def join_frames(bodies: list[str], outside: list[str]) -> str:
    """The dump with each frame body replaced; a body gets a final newline so ``## END_GRAPH`` keeps its line."""
    if len(outside) != len(bodies) + 1:
        raise ValueError("one piece of outside text more than frames expected")
    out: list[str] = [outside[0]]
    for body, after in zip(bodies, outside[1:], strict=True):
        out.append(body)
        if body and not body.endswith("\n"):
            out.append("\n")
        out.append(after)
    return "".join(out)
