"""``--split-input-file``: one file holding several modules, as hlo-opt reads it.

A line whose text is ``// -----`` (trailing spaces allowed; any line end) separates
two chunks. Each chunk is processed on its own; errors keep the line numbers of
the whole file (a chunk knows how many lines stand before it), and the outputs
are joined with the separator lines exactly as they were written, so a file no
pass changes comes back byte for byte.
"""

from __future__ import annotations

from dataclasses import dataclass

from .regex import lazy_pattern

#: the separator line (without its line ending)
SEPARATOR = "// -----"
_SEPARATOR_RE = lazy_pattern(r"^// -----[ \t]*(?:\r\n|\r|\n)?$")
_LINE = lazy_pattern(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


@dataclass(frozen=True)
class Chunk:
    """One module of a split file: its text and the number of lines before it."""

    text: str
    line_offset: int

    @property
    def is_blank(self) -> bool:
        """A chunk of only whitespace (e.g. after a trailing separator) holds no module."""
        return not self.text or self.text.isspace()


def split_chunks(text: str) -> tuple[list[Chunk], list[str]]:
    """Cut ``text`` at separator lines.

    Returns the chunks and the separator lines (each with its own line ending);
    there is always one chunk more than separators, and
    ``join_chunks([c.text for c in chunks], separators) == text``.
    """
    chunks: list[Chunk] = []
    separators: list[str] = []
    # a line ends at "\n", "\r\n" or a lone "\r", as for the reader, so line numbers agree
    lines = _LINE.findall(text)
    if lines and not lines[-1]:
        lines.pop()
    start_line = 0
    current: list[str] = []
    for number, line in enumerate(lines):
        if _SEPARATOR_RE.match(line):
            chunks.append(Chunk("".join(current), start_line))
            separators.append(line)
            current = []
            start_line = number + 1
        else:
            current.append(line)
    chunks.append(Chunk("".join(current), start_line))
    return chunks, separators


def join_chunks(texts: list[str], separators: list[str]) -> str:
    """Join chunk outputs with the separator lines they were cut at.

    A chunk output that does not end in a newline gets one before the separator,
    so the separator stays on a line of its own.
    """
    if len(texts) != len(separators) + 1:
        raise ValueError("one chunk more than separators expected")
    out: list[str] = []
    for i, text in enumerate(texts):
        out.append(text)
        if i < len(separators):
            if text and not text.endswith(("\n", "\r")):
                sep = separators[i]
                out.append("\r\n" if sep.endswith("\r\n") else "\r" if sep.endswith("\r") else "\n")
            out.append(separators[i])
    return "".join(out)
