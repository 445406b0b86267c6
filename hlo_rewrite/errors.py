"""The tool's own error types: every failure a user can cause is one of these.

An :class:`HloError` knows where it happened (file, line, column) and renders
itself the way compilers do: ``file:line:col: error: message``, then the source
line and a caret under the column.
"""

from __future__ import annotations


class HloError(Exception):
    """Base class of every error hlo-rewrite reports to a user.

    ``line`` and ``column`` are 1-based; ``source_line`` is the text of that line
    (without its newline) so the caret can be drawn. Any of them may be missing
    when the error is not about a place in the input (for example an I/O error).
    """

    #: exit code of the command line for this kind of error (see docs/cli.md)
    exit_code = 3

    def __init__(
        self,
        message: str,
        *,
        filename: str | None = None,
        line: int | None = None,
        column: int | None = None,
        source_line: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.filename = filename
        self.line = line
        self.column = column
        self.source_line = source_line

    def with_filename(self, filename: str) -> HloError:
        """Return self after setting the file name if none was known yet."""
        if self.filename is None:
            self.filename = filename
        return self

    def shifted(self, line_offset: int) -> HloError:
        """Move the reported line by ``line_offset`` (for split input files)."""
        if self.line is not None:
            self.line += line_offset
        return self

    def location(self) -> str:
        parts = [self.filename or "<input>"]
        if self.line is not None:
            parts.append(str(self.line))
            if self.column is not None:
                parts.append(str(self.column))
        return ":".join(parts)

    def render(self) -> str:
        """The full report: location, message, source line and caret."""
        out = f"{self.location()}: error: {self.message}"
        if self.source_line is not None:
            src = self.source_line.rstrip("\r\n")
            # keep huge lines readable: show a window around the column
            col = (self.column or 1) - 1
            start = 0
            if len(src) > 200:
                start = max(0, col - 100)
                src = ("..." if start else "") + src[start : start + 200] + "..."
                col = col - start + (3 if start else 0)
            printable = "".join(ch if ch.isprintable() or ch == "\t" else "?" for ch in src)
            caret_pad = "".join("\t" if ch == "\t" else " " for ch in printable[:col])
            out += f"\n  {printable}\n  {caret_pad}^"
        return out

    def __str__(self) -> str:
        return self.render()


class HloParseError(HloError):
    """The text is not HLO the tool understands (syntax)."""


class HloVerifyError(HloError):
    """The text parses but breaks a structural rule (undefined name, two ROOTs, ...)."""


class PassError(HloError):
    """A pass met input it refuses to rewrite (a precondition such as a missing channel_id)."""


class HloIOError(HloError):
    """A file could not be read or written."""

    exit_code = 4


class HloInternalError(HloError):
    """A bug in hlo-rewrite itself (a pass produced an invalid module, ...)."""

    exit_code = 5
