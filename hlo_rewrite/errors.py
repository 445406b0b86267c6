"""The tool's own error types: every failure a user can cause is one of these.

An :class:`HloError` knows where it happened (file, line, column) and renders
itself the way compilers do: ``file:line:col: error: message``, then the source
line and a caret under the column.
"""

from __future__ import annotations

import enum
import signal
from collections.abc import Iterable

from .regex import lazy_pattern


class ExitCode(enum.IntEnum):
    """Every exit code of the command line, with what it means (docs/cli.md, "Exit codes").

    The help text, the error classes, the ``--report`` JSON and the documentation all read
    their codes and meanings from here.
    """

    OK = 0
    CHANGED = 1
    USAGE = 2
    INVALID_INPUT = 3
    IO = 4
    INTERNAL = 5
    INTERRUPTED = 130
    TERMINATED = 143

    @property
    def meaning(self) -> str:
        return _MEANINGS[self]

    @classmethod
    def worst(cls, codes: Iterable[int]) -> ExitCode:
        """The worst of several codes: 5 > 4 > 3 > 1 > 0 (usage errors and interrupts end a
        run on their own, so they never meet another code; they rank above all)."""
        worst = cls.OK
        for code in codes:
            code = cls(code)
            if _SEVERITY.index(code) > _SEVERITY.index(worst):
                worst = code
        return worst


_MEANINGS = {
    ExitCode.OK: "success (with --check: nothing would change)",
    ExitCode.CHANGED: "--check: some output would differ from its input",
    ExitCode.USAGE: "usage error (bad option or combination, unknown pass); nothing is read or written",
    ExitCode.INVALID_INPUT: "invalid input (parse, verify or pass precondition error)",
    ExitCode.IO: "I/O error (a file could not be read or written)",
    ExitCode.INTERNAL: "internal error (a bug in hlo-rewrite; safe-mode mismatch)",
    ExitCode.INTERRUPTED: "interrupted (SIGINT, Ctrl-C); no output is left half-written",
    ExitCode.TERMINATED: "terminated (SIGTERM); no output is left half-written",
}

#: the signals that stop a run cleanly, with what the command says and its exit code
STOP_SIGNALS = {
    signal.SIGINT: ("interrupted", ExitCode.INTERRUPTED),
    signal.SIGTERM: ("terminated", ExitCode.TERMINATED),
}


def stop_message(signum: int) -> tuple[str, ExitCode]:
    """The line the command writes when ``signum`` (one of :data:`STOP_SIGNALS`) stops it, and
    its exit code."""
    word, code = STOP_SIGNALS[signal.Signals(signum)]
    return f"hlo-rewrite: {word}\n", code


#: from best to worst
_SEVERITY = [ExitCode.OK, ExitCode.CHANGED, ExitCode.INVALID_INPUT, ExitCode.IO, ExitCode.INTERNAL,
             ExitCode.USAGE, ExitCode.INTERRUPTED, ExitCode.TERMINATED]


class HloError(Exception):
    """Base class of every error hlo-rewrite reports to a user.

    ``line`` and ``column`` are 1-based; ``source_line`` is the text of that line
    (without its newline) so the caret can be drawn. Any of them may be missing
    when the error is not about a place in the input (for example an I/O error).
    """

    #: exit code of the command line for this kind of error
    exit_code: ExitCode = ExitCode.INVALID_INPUT

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

    def reworded(self, message: str) -> HloError:
        """Return self with another message (the exception's own text too)."""
        self.message = message
        self.args = (message,)
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

    exit_code = ExitCode.IO


class HloInternalError(HloError):
    """A bug in hlo-rewrite itself (a pass produced an invalid module, ...)."""

    exit_code = ExitCode.INTERNAL


# the reader's wording when an unknown element type stands where a shape belongs: the word
# before '[' is then taken for an opcode
_UNKNOWN_ELEMENT_TYPE = lazy_pattern(r"expected '\(' after '([A-Za-z][A-Za-z0-9]*)', found '\['")


def clarified(exc: HloError) -> HloError:
    """``exc`` with its message said the way a user thinks of the mistake, where the reader's
    wording is about its own state (an unknown element type reads as "expected '('")."""
    m = _UNKNOWN_ELEMENT_TYPE.fullmatch(exc.message)
    if m is not None and isinstance(exc, HloParseError):
        word = m.group(1)
        exc.reworded(f"unknown element type '{word}'")
        if exc.column is not None and exc.column > len(word):
            exc.column -= len(word)
    return exc
