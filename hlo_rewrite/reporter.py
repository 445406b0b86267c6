"""Everything the command says on standard error: errors, notes, warnings, summaries, tables.

:class:`Reporter` holds the verbosity and colour choices of one run, so the command line
never decides at each message whether and how to print it. Standard output is never
touched here (it carries only HLO).
"""

from __future__ import annotations

import enum
import os
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple, TextIO

from . import __version__
from .errors import ExitCode
from .outputs import OutputMode
from .passes import Record
from .report import ErrorInfo, FileResult, render_stats

REPORT_HINT = (
    "this is a bug in hlo-rewrite {version}; please report it as an issue and attach the input "
    "file and this command line:\n  {command}"
)


class ColorChoice(enum.Enum):
    """``--color``: colour on a terminal (``auto``), always, or never."""

    AUTO = "auto"
    ALWAYS = "always"
    NEVER = "never"


def isatty(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError):
        return False


def use_color(stream: object, choice: ColorChoice = ColorChoice.AUTO,
              environ: Mapping[str, str] | None = None) -> bool:
    """Whether to colour what goes to ``stream``.

    ``--color=always``/``never`` decide alone. Under ``auto``: ``NO_COLOR`` (set and not
    empty) turns colour off; else ``FORCE_COLOR`` (set, not empty and not ``0``) turns it on;
    else ``TERM=dumb`` turns it off; else colour goes to a terminal only.
    """
    if choice is ColorChoice.ALWAYS:
        return True
    if choice is ColorChoice.NEVER:
        return False
    env = os.environ if environ is None else environ
    if env.get("NO_COLOR", ""):
        return False
    if env.get("FORCE_COLOR", "") not in ("", "0"):
        return True
    if env.get("TERM") == "dumb":
        return False
    return isatty(stream)


def use_tables(stream: object, environ: Mapping[str, str] | None = None) -> bool:
    """Box-drawn tables on a terminal (not ``TERM=dumb``); plain lines anywhere else."""
    env = os.environ if environ is None else environ
    return isatty(stream) and env.get("TERM") != "dumb"


# --------------------------------------------------------------------------- what was left alone


class LeftAlone(NamedTuple):
    """One instruction some pass matched and no later pass rewrote."""

    file: str
    line: int | None
    pass_name: str
    computation: str
    instruction: str
    opcode: str
    reason: str


def left_alone(results: Sequence[FileResult]) -> list[LeftAlone]:
    """Instructions matched and left as they were by the last pass that looked at them."""
    out = []
    for res in results:
        if res.errors:
            continue
        for mod in res.modules:
            last: dict[tuple[str, str], tuple[str, Record]] = {}
            for rep in mod.reports:
                for rec in rep.records:
                    last[(rec.computation, rec.instruction)] = (rep.name, rec)
            for pass_name, rec in last.values():
                if rec.action != "left":
                    continue
                out.append(LeftAlone(
                    file=res.name,
                    line=rec.line + mod.line_offset if rec.line is not None else None,
                    pass_name=pass_name,
                    computation=rec.computation,
                    instruction=rec.instruction,
                    opcode=rec.opcode,
                    reason=rec.reason or "no reason given",
                ))
    return out


#: why something was left, in the words of the warning, and what would include it
_NOT_ENTRY = "not in the ENTRY computation"
_HINTS = {_NOT_ENTRY: "--all-computations includes {it}"}


def _category(reason: str) -> str:
    if reason.startswith("outside scope"):  # the passes' one wording (passes.outside_scope_reason)
        if reason.endswith("is a fusion computation"):
            return "in a fusion computation"
        return _NOT_ENTRY
    return reason


def _plural(word: str, n: int) -> str:
    return word if n == 1 else word + "s"


def _and(parts: Sequence[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def left_alone_warning(items: Sequence[LeftAlone]) -> str | None:
    """One line: how many instructions of which opcodes were left alone, and why.

    e.g. ``1 all-reduce left alone: not in the ENTRY computation (--all-computations
    includes it; -v for details)``.
    """
    if not items:
        return None
    opcodes = Counter(i.opcode for i in items)
    what = _and([f"{n} {_plural(op, n)}" for op, n in opcodes.items()])
    categories = Counter(_category(i.reason) for i in items)
    if len(categories) > 2:  # keep the scope categories; the rest are "other reasons"
        kept = {c: n for c, n in categories.items() if c in (_NOT_ENTRY, "in a fusion computation")}
        reasons = len(categories) - len(kept)
        other = sum(categories.values()) - sum(kept.values())
        categories = Counter(kept)
        categories["for other reasons" if kept else f"for {reasons} different reasons"] = other
    it = "it" if categories.get(_NOT_ENTRY, 0) == 1 else "them"
    hints = [_HINTS[c].format(it=it) for c in categories if c in _HINTS]
    note = "; ".join([*hints, "-v for details"])
    if len(categories) == 1:
        (category,) = categories
        why = category
    else:
        why = ", ".join(f"{n} {c}" for c, n in categories.items())
    return f"{what} left alone: {why} ({note})"


# --------------------------------------------------------------------------- the reporter


def _style(text: str, **styles: Any) -> str:
    """``text`` in colour (``click.style``; click is loaded only when colour is used: a run of
    the plain command line forms does without it, docs/decisions.md)."""
    import click

    return str(click.style(text, **styles))


class Reporter:
    """The messages of one run on standard error."""

    def __init__(self, *, quiet: bool = False, verbose: bool = False,
                 color: ColorChoice = ColorChoice.AUTO, command: str = "hlo-rewrite",
                 stream: TextIO | None = None) -> None:
        self.quiet = quiet
        self.verbose = verbose
        self.color_choice = color
        self.command = command
        self._stream = stream

    @property
    def stream(self) -> TextIO:
        return self._stream if self._stream is not None else sys.stderr

    @property
    def color(self) -> bool:
        return use_color(self.stream, self.color_choice)

    def _line(self, message: str) -> None:
        self.stream.write(message + "\n")
        self.stream.flush()

    # ---- always shown

    def error(self, err: ErrorInfo) -> None:
        """An error (with the bug-report request and, with ``-v``, the traceback of an internal one)."""
        message = err.rendered
        if self.color:
            for word in (": internal error: ", ": error: "):
                if word in message:
                    head, tail = message.split(word, 1)
                    message = head + ": " + _style(word[2:-2] + ":", fg="red", bold=True) + " " + tail
                    break
        self._line(message)
        if err.exit_code == ExitCode.INTERNAL:
            self._line(REPORT_HINT.format(version=__version__, command=self.command))
            if self.verbose and err.traceback:
                self._line(err.traceback.rstrip("\n"))
            elif err.traceback:
                self._line("(run with -v for the traceback)")

    def fatal(self, message: str) -> None:
        """A one-line message that ends the run (``cannot write standard output: ...``)."""
        self._line(message)

    # ---- not with -q

    def note(self, message: str) -> None:
        if not self.quiet:
            self._line(message)

    def warning(self, message: str) -> None:
        if not self.quiet:
            self._line(("warning: " if not self.color else _style("warning:", fg="yellow", bold=True) + " ")
                       + message)

    # ---- only with -v

    def detail(self, message: str) -> None:
        if self.verbose:
            self._line(message)

    # ---- what a run did

    def file_done(self, res: FileResult, mode: OutputMode) -> None:
        if res.errors:
            self.detail(f"{res.name}: failed (exit code {int(res.exit_code)}), nothing written")
            return
        parts = f" ({', '.join(res.changed_parts)})" if res.changed_parts else ""
        if mode is OutputMode.CHECK and res.changed:
            self.note(f"would rewrite {res.name}{parts}")
        elif mode is OutputMode.IN_PLACE and res.changed:
            self.note(f"rewrote {res.name}{parts}")
        if self.verbose:
            rewritten = sum(len(r.rewritten) for m in res.modules for r in m.reports)
            left = sum(len(r.left) for m in res.modules for r in m.reports)
            secs = sum(v for m in res.modules for v in m.seconds.values())
            state = "changed" if res.changed else "unchanged"
            self.detail(f"{res.name}: {state}; {rewritten} rewritten, {left} left alone ({secs * 1000:.1f} ms)")

    def skipped(self, results: Sequence[FileResult]) -> None:
        """Files found in a directory that are not HLO: one line counting them; with ``-v`` each."""
        for res in results:
            self.detail(f"{res.name}: skipped, not HLO")
        if results:
            n = len(results)
            self.note(f"skipped {n} file{'s' if n != 1 else ''} that {'are' if n != 1 else 'is'} not HLO"
                      + ("" if self.verbose else " (-v names them)"))

    def left_alone(self, results: Sequence[FileResult]) -> None:
        """One warning line about instructions left alone; one line each with ``-v``."""
        if self.quiet:
            return
        items = left_alone(results)
        for i in items:
            where = f"{i.file}:{i.line}" if i.line is not None else i.file
            self.detail(f"{where}: {i.pass_name} left {i.opcode} '{i.instruction}' "
                        f"(computation '{i.computation}') alone: {i.reason}")
        message = left_alone_warning(items)
        if message is not None:
            self.warning(message)

    def stats(self, results: Sequence[FileResult], names: Sequence[str]) -> None:
        render_stats(results, names, self.stream, color=self.color, tables=use_tables(self.stream))

    def summary(self, results: Sequence[FileResult], mode: OutputMode) -> None:
        """One line counting files; with ``-v`` always, else after several --check / -i files."""
        if not (self.verbose or (not self.quiet and mode in (OutputMode.CHECK, OutputMode.IN_PLACE)
                                 and len(results) > 1)):
            return
        failed = sum(1 for r in results if r.errors)
        changed = sum(1 for r in results if r.changed and not r.errors)
        same = len(results) - failed - changed

        def files(n: int) -> str:
            return f"{n} file{'s' if n != 1 else ''}"

        if mode is OutputMode.CHECK:
            parts = [f"{files(changed)} would be rewritten", f"{files(same)} would be left unchanged"]
        elif mode is OutputMode.IN_PLACE:
            parts = [f"{files(changed)} rewritten", f"{files(same)} left unchanged"]
        else:
            parts = [f"{files(changed)} changed", f"{files(same)} unchanged"]
        if failed:
            parts.append(f"{files(failed)} failed")
        self._line(", ".join(parts) + ".")
