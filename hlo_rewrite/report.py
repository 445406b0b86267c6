"""What a run did: per-file results, the ``--stats`` table and the ``--report`` JSON.

The results are plain dataclasses so they travel from worker processes
(``--jobs``) back to the main one.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

from .errors import ExitCode, HloError
from .passes import PassOptions, PassReport

if TYPE_CHECKING:
    from .printer import Printed

#: version of the ``--report`` JSON layout; bumped on incompatible changes
REPORT_SCHEMA = 1


@dataclass
class ErrorInfo:
    """One error, kept as data (rendered text included) so it can cross processes."""

    kind: str  # the error class name, e.g. "HloParseError", or "InternalError"
    message: str
    exit_code: ExitCode
    rendered: str  # what is printed on stderr
    filename: str | None = None
    line: int | None = None
    column: int | None = None
    traceback: str | None = None  # only for internal errors

    @classmethod
    def from_hlo_error(cls, exc: HloError) -> ErrorInfo:
        return cls(
            kind=type(exc).__name__,
            message=exc.message,
            exit_code=exc.exit_code,
            rendered=exc.render(),
            filename=exc.filename,
            line=exc.line,
            column=exc.column,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "message": self.message,
            "exit_code": int(self.exit_code),
            "file": self.filename,
            "line": self.line,
            "column": self.column,
        }


@dataclass
class ModuleResult:
    """One module (a whole file, or one ``--split-input-file`` chunk)."""

    index: int
    line_offset: int  # lines of the file before this module
    reports: list[PassReport] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)  # parse, passes, print, check
    error: ErrorInfo | None = None
    blank: bool = False  # a whitespace-only chunk, passed through

    def to_json(self) -> dict[str, Any]:
        passes = []
        for rep in self.reports:
            data = rep.to_json()
            records = []
            for rec in data["records"]:
                rec = {("pass" if k == "pass_name" else k): v for k, v in rec.items()}
                if rec.get("line") is not None:
                    rec["line"] += self.line_offset
                records.append(rec)
            data["records"] = records
            passes.append(data)
        return {
            "index": self.index,
            "first_line": self.line_offset + 1,
            "status": "blank" if self.blank else ("error" if self.error else "ok"),
            "seconds": {k: round(v, 6) for k, v in self.seconds.items()},
            "error": self.error.to_json() if self.error else None,
            "passes": passes,
        }


@dataclass
class FileResult:
    """One input: its output text (None when it failed) and what happened."""

    name: str  # display name ("<stdin>" for standard input)
    path: str  # as given on the command line ("-" for standard input)
    output_text: str | Printed | None = None  # a module's output is kept in pieces (printer.Printed)
    input_text: str | None = None  # kept only when needed (--diff)
    changed: bool = False
    modules: list[ModuleResult] = field(default_factory=list)
    errors: list[ErrorInfo] = field(default_factory=list)
    destination: str | None = None  # where the output went ("-", a path), set by the writer
    written: bool = False
    check: bool = False  # run under --check: a file that would change is exit code 1
    #: the bytes to write when they are not ``output_text`` in UTF-8 (gzip, a proto, ...: docs/formats.md)
    output_data: bytes | None = None
    #: found in a directory and not HLO: nothing done, counted (docs/formats.md)
    skipped: bool = False
    #: the parts of a many-module file that changed (torch_xla graphs), for --check
    changed_parts: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> ExitCode:
        codes = [e.exit_code for e in self.errors]
        if self.check and self.changed and not self.errors:
            codes.append(ExitCode.CHANGED)
        return worst_exit_code(codes)

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.name,
            "output": self.destination,
            "status": "error" if self.errors else "ok",
            "changed": self.changed if not self.errors else None,
            "written": self.written,
            "exit_code": int(self.exit_code),
            "errors": [e.to_json() for e in self.errors],
            "modules": [m.to_json() for m in self.modules],
        }


def worst_exit_code(codes: Any) -> ExitCode:
    """The worst of several exit codes: 5 > 4 > 3 > 1 > 0 (see :class:`ExitCode`)."""
    return ExitCode.worst(codes)


# --------------------------------------------------------------------------- totals


@dataclass
class PassTotals:
    name: str
    matched: int = 0
    rewritten: int = 0
    left: int = 0
    seconds: float = 0.0
    reasons: Counter = field(default_factory=Counter)


def pass_totals(results: Sequence[FileResult], names: Sequence[str]) -> dict[str, PassTotals]:
    """Sum the pass reports of every module of every file, per pass, in pipeline order."""
    totals = {n: PassTotals(n) for n in names}
    for res in results:
        for mod in res.modules:
            for rep in mod.reports:
                t = totals.setdefault(rep.name, PassTotals(rep.name))
                t.matched += len(rep.records)
                t.rewritten += len(rep.rewritten)
                t.left += len(rep.left)
                t.seconds += rep.seconds
                for rec in rep.left:
                    t.reasons[rec.reason or "(no reason given)"] += 1
    return totals


def phase_seconds(results: Sequence[FileResult]) -> dict[str, float]:
    out: dict[str, float] = {}
    for res in results:
        for mod in res.modules:
            for k, v in mod.seconds.items():
                out[k] = out.get(k, 0.0) + v
    return out


# --------------------------------------------------------------------------- --stats


def render_stats(
    results: Sequence[FileResult], names: Sequence[str], stream: TextIO, *, color: bool, tables: bool = True
) -> None:
    """Print the ``--stats`` tables (per pass, then the reasons things were left) on ``stream``.

    With ``tables`` (standard error is a terminal), box-drawn tables whose pass column is
    never cut; otherwise plain lines, the columns separated by one tab, nothing padded.
    """
    totals = pass_totals(results, names)
    n_files = len(results)
    n_failed = sum(1 for r in results if r.errors)
    n_changed = sum(1 for r in results if r.changed and not r.errors)
    title = f"hlo-rewrite: {n_files} file{'s' if n_files != 1 else ''}, {n_changed} changed"
    if n_failed:
        title += f", {n_failed} failed"
    head = ["pass", "matched", "rewritten", "left", "time"]
    rows = [[t.name, str(t.matched), str(t.rewritten), str(t.left), f"{t.seconds * 1000:.1f} ms"]
            for t in totals.values()]
    phases = phase_seconds(results)
    labels = {"parse": "(parse)", "print": "(print)", "check": "(safe-mode check)"}
    extra = [[labels[p], "", "", "", f"{phases[p] * 1000:.1f} ms"] for p in labels if p in phases]
    reasons = [[t.name, reason, str(count)] for t in totals.values() for reason, count in sorted(t.reasons.items())]
    why_title = "left alone, and why"
    why_head = ["pass", "reason", "count"]
    if not tables:
        lines = [title, "\t".join(head), *("\t".join(r) for r in rows),
                 *("\t".join(c for c in r if c) for r in extra)]
        if reasons:
            lines += [why_title, "\t".join(why_head), *("\t".join(r) for r in reasons)]
        stream.write("\n".join(lines) + "\n")
        stream.flush()
        return

    from rich.console import Console
    from rich.table import Table

    console = Console(file=stream, force_terminal=True, no_color=not color, color_system="standard" if color else None,
                      highlight=False, soft_wrap=False, legacy_windows=False)
    width = max([len(r[0]) for r in rows + reasons] + [len("(safe-mode check)")])
    table = Table(title=title, title_justify="left")
    table.add_column("pass", no_wrap=True, min_width=width)
    for col in head[1:]:
        table.add_column(col, justify="right", no_wrap=True)
    for r in rows:
        table.add_row(*r)
    for r in extra:
        table.add_row(*r, style="dim")
    console.print(table)
    if reasons:
        why = Table(title=why_title, title_justify="left")
        why.add_column("pass", no_wrap=True, min_width=width)
        why.add_column("reason", overflow="fold")
        why.add_column("count", justify="right", no_wrap=True)
        for r in reasons:
            why.add_row(*r)
        console.print(why)


# --------------------------------------------------------------------------- --report


def build_report(
    results: Sequence[FileResult],
    names: Sequence[str],
    options: PassOptions,
    settings: dict[str, Any],
    exit_code: int,
) -> dict[str, Any]:
    """The ``--report`` document (layout in docs/cli.md, "The JSON report")."""
    from . import __version__

    totals = pass_totals(results, names)
    return {
        "schema": REPORT_SCHEMA,
        "tool": "hlo-rewrite",
        "version": __version__,
        "passes": list(names),
        "options": {"all_computations": options.all_computations, **settings,
                    "pass_options": pass_options(names, options)},
        "exit_code": int(exit_code),
        "files": [r.to_json() for r in results],
        "totals": {
            t.name: {
                "matched": t.matched,
                "rewritten": t.rewritten,
                "left": t.left,
                "seconds": round(t.seconds, 6),
                "left_reasons": dict(sorted(t.reasons.items())),
            }
            for t in totals.values()
        },
    }


def pass_options(names: Sequence[str], options: PassOptions) -> dict[str, dict[str, Any]]:
    """The options each pass of the run had (declared defaults included), by pass."""
    from .passes import get_pass

    out: dict[str, dict[str, Any]] = {}
    for name in dict.fromkeys(names):
        values = asdict(options.for_pass(get_pass(name)))
        if values:
            out[name] = values
    return out


def report_json(report: dict[str, Any]) -> str:
    return json.dumps(report, indent=2) + "\n"
