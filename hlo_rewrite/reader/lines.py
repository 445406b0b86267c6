"""The lines of a module's source, as offsets into it."""

from __future__ import annotations

import re
from array import array
from collections.abc import Sequence

from ..regex import lazy_pattern

_NEWLINE = re.compile("\n")
_MATCH_END = re.Match.end
# a line ends at "\n", "\r\n" or a lone "\r", as for XLA's lexer
_ANY_LINE_END = lazy_pattern(r"\r\n?|\n")


def line_starts(text: str) -> array:
    """Offset of every line start, a line ending at "\\n", "\\r\\n" or a lone "\\r", and a
    sentinel one past the end (``len(text) + 1``)."""
    starts = array("q", [0])
    if "\r" in text:
        starts.extend(map(_MATCH_END, _ANY_LINE_END.finditer(text)))
    else:
        starts.extend(map(_MATCH_END, _NEWLINE.finditer(text)))
    starts.append(len(text) + 1)
    return starts


def newline_starts(text: str, offset: int = 0) -> array:
    """Offset of every line start, a line ending at "\\n", and a sentinel one past the end
    (``len(text) + 1``): the reader's lines. With ``offset`` (a line start), the lines before
    it are left at 0 (one ``count`` finds how many there are), so that the array is indexed
    by line as the whole one is: what a worker checking the text from there on needs."""
    starts = array("I" if len(text) < 1 << 32 else "q", [0])  # 4 bytes a line when they do
    if offset:
        starts.frombytes(bytes(starts.itemsize * text.count("\n", 0, offset)))  # zeros
        starts[-1] = offset
    starts.extend(map(_MATCH_END, _NEWLINE.finditer(text, offset)))
    starts.append(len(text) + 1)  # sentinel: the last line has no "\n"
    return starts


def fill_newline_starts(starts: array, text: str, offset: int) -> None:
    """Fill in the lines :func:`newline_starts` left at 0 before ``offset``: the array is then
    what ``newline_starts(text)`` gives."""
    if offset:
        before = array(starts.typecode, map(_MATCH_END, _NEWLINE.finditer(text, 0, offset - 1)))
        starts[1 : 1 + len(before)] = before


class Lines:
    """The lines of a text (without their "\\n"), sliced out of it on demand.

    Only the start offsets are stored, so a 50 MB module does not hold a second
    copy of itself as a list of line strings.
    """

    __slots__ = ("text", "starts")

    def __init__(self, text: str, starts: Sequence[int] | None = None) -> None:
        self.text = text
        self.starts = newline_starts(text) if starts is None else starts

    def __len__(self) -> int:
        return len(self.starts) - 1

    def __getitem__(self, i: int) -> str:
        if i < 0:
            i += len(self)
        return self.text[self.starts[i] : self.starts[i + 1] - 1]

    def start(self, i: int) -> int:
        return self.starts[i]

    def end(self, j: int) -> int:
        """Offset just past line ``j`` including its newline."""
        return min(self.starts[j + 1], len(self.text))

    def block(self, i: int, j: int) -> str:
        """Lines i..j joined, without the final newline."""
        return self.text[self.starts[i] : self.starts[j + 1] - 1]


