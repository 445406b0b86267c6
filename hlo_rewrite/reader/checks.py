"""Checks both readers make the same way: opcode names and the module header's values."""

from __future__ import annotations

import re

from ..lexicon import ELEMENT_TYPES, matching_close
from ..opcodes import MODULE_ATTRS, Kind, closest_opcode
from ..regex import lazy_pattern

# blanks and comments, as XLA's lexer skips them between any two tokens
_TRIVIA = r"(?:\s|/\*(?:(?!\*/).)*\*/|//[^\n\r]*)*"
# an element type in a shape: a word directly before "[" (comments and blanks allowed between)
_TYPE_BEFORE_DIMS = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)" + _TRIVIA + r"\[", re.S)
# the header attributes whose values are checked: the layout, flags and counts
_FLAGS = frozenset(name for name, spec in MODULE_ATTRS.items() if spec.kind == Kind.BOOL)
_COUNTS = frozenset(name for name, spec in MODULE_ATTRS.items() if spec.kind == Kind.INT)
_HEADER_VALUE = re.compile(
    r"(?<![A-Za-z0-9_.\-])(?P<name>" + "|".join(sorted({"entry_computation_layout"} | _FLAGS | _COUNTS)) + r")="
    + _TRIVIA,
    re.S,
)
# an entry_computation_layout value as XLA prints it: braces two deep (the value's, a layout's),
# no string, no comment but /*index=N*/ (anything else goes to the lexicon's walker)
_LAYOUT_VALUE = re.compile(r"\{(?:[^{}\"/]++|/\*index=[0-9]+\*/|\{[^{}\"/]*+\})*+\}")
_BOOL = lazy_pattern(r"(?:true|false)(?![A-Za-z0-9_.\-])")
_INT = lazy_pattern(r"-?[0-9]+(?![A-Za-z0-9_.\-])")  # XLA reads replica_count=-1 too


def unknown_opcode_message(name: str) -> str:
    """The error for an opcode XLA does not know, with the closest known one."""
    close = closest_opcode(name)
    hint = f"; did you mean '{close}'?" if close else ""
    return f"unknown opcode '{name}'{hint}"


def header_problem(text: str, start: int, end: int) -> tuple[str, int] | None:
    """The first bad value among the module header's attributes in ``text[start:end]``, as
    (message, offset): an element type XLA does not know in ``entry_computation_layout``, a
    flag other than true/false, a count that is not a number. None when all are good."""
    if text.find("=", start, end) < 0:
        return None
    for m in _HEADER_VALUE.finditer(text, start, end):
        name = m.group("name")
        at = m.end()
        if name == "entry_computation_layout":
            if not text.startswith("{", at):
                return f"expected '{{' to open the value of '{name}'", at
            layout = _LAYOUT_VALUE.match(text, at, end)  # as XLA prints it, in one match
            if layout is not None:
                close = layout.end()
            else:
                try:
                    close = matching_close(text, at, end)
                except ValueError:  # not closed on the header: look at the rest of it
                    close = end
            for t in _TYPE_BEFORE_DIMS.finditer(text, at, close):
                if t.group(1) not in ELEMENT_TYPES:
                    return f"error parsing attribute {name}: unknown element type '{t.group(1)}'", t.start(1)
        elif name in _FLAGS:
            if _BOOL.match(text, at, end) is None:
                return f"expected 'true' or 'false' as the value of '{name}'", at
        elif _INT.match(text, at, end) is None:
            return f"expected a number as the value of '{name}'", at
    return None
