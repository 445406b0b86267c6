"""strip-debug-info: remove source locations, so golden files stop churning when code moves.

Removes every instruction's ``metadata={...}`` (which holds ``op_name``,
``source_file``, ``source_line``, ``stack_frame_id``, ...), a
``stack_frame_id=N`` written as an attribute of its own, and the module's
stack-frame tables (``FileNames``, ``FunctionNames``, ``FileLocations``,
``StackFrames``). Every other byte stays as it was: the attribute is cut out of
the instruction's source text, the line is not reprinted. Not in the default
pipeline. docs/passes/strip-debug-info.md has the rules.
"""

from __future__ import annotations

from ..attributes import scan_value_end
from ..ir import Computation, Instruction, Module
from ..lexicon import STACK_TABLES
from ..regex import lazy_pattern
from .base import Pass, PassReport, Record, Scope

#: the attributes removed from every instruction
STRIPPED_ATTRS: frozenset[str] = frozenset({"metadata", "stack_frame_id"})
#: the keywords of the module's stack-frame tables, in the order XLA prints them
TABLE_KEYWORDS: tuple[str, ...] = STACK_TABLES

_ATTR_HEAD = lazy_pattern(r"[ \t]*,[ \t]*([A-Za-z_][A-Za-z0-9_.\-]*)=")
_WORDS = ("metadata=", "stack_frame_id=")


def strip_attribute_text(
    attrs_text: str, names: frozenset[str] = STRIPPED_ATTRS
) -> tuple[str, list[tuple[str, str]], int] | None:
    """``attrs_text`` (an instruction's text after its operand list) without the
    attributes in ``names`` and the comma before each, the ``(name, value)``
    pairs kept, and how many were removed; None when the text holds something
    other than plain ``, name=value`` items (comments, line breaks between
    items), which the caller then reprints instead."""
    out = []
    kept = []
    removed = 0
    pos = 0
    n = len(attrs_text)
    while pos < n:
        m = _ATTR_HEAD.match(attrs_text, pos)
        if m is None:
            return None
        try:
            end = scan_value_end(attrs_text, m.end(), m.group(1))
        except ValueError:
            return None
        if m.group(1) in names:
            removed += 1
        else:
            out.append(attrs_text[pos:end])
            kept.append((m.group(1), attrs_text[m.end():end].rstrip()))
        pos = end
    return "".join(out), kept, removed


def strip_tables(text: str) -> tuple[str, list[tuple[str, int]]]:
    """``text`` (raw module text between computations) without the stack-frame
    tables: each keyword line, its numbered rows and the blank line before it, and
    the blank line after the last table (XLA separates the tables from the first
    computation by two blank lines, and the header from it by one).
    Returns the new text and ``(keyword, line offset in text)`` of each table removed."""
    lines = text.splitlines(keepends=True)
    kept: list[str] = []
    removed: list[tuple[str, int]] = []
    i = 0
    while i < len(lines):
        word = lines[i].strip()
        if word in TABLE_KEYWORDS:
            removed.append((word, i))
            if kept and not kept[-1].strip():
                kept.pop()  # the blank line XLA prints before each table
            i += 1
            while i < len(lines) and lines[i][:1].isdigit():
                i += 1
            if i < len(lines) and not lines[i].strip() and not any(
                line.strip() in TABLE_KEYWORDS for line in lines[i:]
            ):
                i += 1  # and the blank line XLA prints after the last one
            continue
        kept.append(lines[i])
        i += 1
    return "".join(kept), removed


class StripDebugInfo(Pass):
    name = "strip-debug-info"
    description = "remove metadata={...} and the stack-frame tables, leaving every other byte as it was"
    scope = Scope.MODULE

    def run_on(self, module: Module, report: PassReport) -> None:
        self._strip_tables(module, report)
        for comp in self.computations(module):
            if not self._may_have_debug_info(module, comp):
                continue  # checked on the source text: its instructions need not be built
            for instr in comp.instructions:
                if self._strip_instruction(instr):
                    report.add_rewritten(comp, instr, "debug info removed")

    @staticmethod
    def _may_have_debug_info(module: Module, comp: Computation) -> bool:
        span = comp.source_span
        if comp.edits or span is None:
            return True
        return any(module.source.find(w, span[0], span[1]) >= 0 for w in _WORDS)

    @staticmethod
    def _strip_instruction(instr: Instruction) -> bool:
        text = instr.text
        if text is not None and instr.inline_callees is None:  # (a holder's text holds theirs)
            if not any(w in text for w in _WORDS):
                return False
            attrs_text = instr.attrs_text
            body = text.rstrip("\r\n")
            if attrs_text is not None and body.endswith(attrs_text):
                cut = strip_attribute_text(attrs_text)
                if cut is not None:
                    stripped, kept, removed = cut
                    if not removed:
                        return False
                    instr.attrs = kept  # marks the line changed; its exact text is known:
                    instr.text = body[: len(body) - len(attrs_text)] + stripped + text[len(body):]
                    return True
        # a line another pass reprinted, or unusual attribute text: reprint it
        kept = [(k, v) for k, v in instr.attrs if k not in STRIPPED_ATTRS]
        if len(kept) == len(instr.attrs):
            return False
        instr.attrs = kept
        return True

    @staticmethod
    def _strip_tables(module: Module, report: PassReport) -> None:
        for k, piece in enumerate(module.pieces):
            if not isinstance(piece, str) or not any(w in piece for w in TABLE_KEYWORDS):
                continue
            new, removed = strip_tables(piece)
            if not removed:
                continue
            module.pieces[k] = new
            module.touch()
            start = module.source.find(piece)
            first_line = module.source.count("\n", 0, start) + 1 if start >= 0 else 0
            for word, offset in removed:
                line = first_line + offset if first_line else None
                report.records.append(Record(report.name, "", word, "table", "rewritten",
                                             target="debug info removed", line=line))


__all__ = ["STRIPPED_ATTRS", "TABLE_KEYWORDS", "StripDebugInfo", "strip_attribute_text", "strip_tables"]
