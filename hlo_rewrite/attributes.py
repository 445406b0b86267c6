"""Fast handling of an instruction's attribute text.

The scanner keeps everything after an instruction's operand list as raw text.
:func:`split_attributes` cuts that text into ``(name, value_text)`` pairs at
top-level commas (respecting brackets, quotes and comments) without
interpreting values; typed values come from the grammar
(:meth:`hlo_rewrite.ir.Instruction.attr`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import HloParseError
from .lexicon import DOUBLE_QUOTED, IDENTIFIER, attribute_value_end, skip_string, skip_trivia
from .opcodes import CALLEE_ATTRS, CALLEE_LIST_ATTRS
from .regex import lazy_pattern

if TYPE_CHECKING:
    from .ir import Instruction

__all__ = ["LIST_CALLEE_ATTRS", "SINGLE_CALLEE_ATTRS", "called_computation_names", "name_list",
           "quick_called_computations", "scan_value_end", "skip_string", "split_attributes"]

_NAME_RE = lazy_pattern(r"\s*(" + IDENTIFIER + r")=")

#: attributes whose value names one called computation (from the opcode table)
SINGLE_CALLEE_ATTRS = CALLEE_ATTRS
#: attributes whose value is a braced list of called computations (from the opcode table)
LIST_CALLEE_ATTRS = CALLEE_LIST_ATTRS


def scan_value_end(text: str, pos: int, name: str = "", json_from: int | None = None) -> int:
    """Index just past the value of attribute ``name`` starting at ``pos``: the next
    top-level ``,`` or the end of text (:func:`~hlo_rewrite.lexicon.attribute_value_end`).
    Raises ValueError when brackets or quotes do not balance."""
    return attribute_value_end(text, pos, name, json_from)


# a braced value as brace_group_end reads it (only braces pair; strings, with their backslash
# escapes as skip_string reads them, skipped), three deep at most, with no '/' outside its
# strings: a comment inside the braces may hide a brace, so that is left to the walk
_NOT_BRACE = r"[^{}\"/]++|" + DOUBLE_QUOTED
_BRACED = (r"\{(?:" + _NOT_BRACE + r"|\{(?:" + _NOT_BRACE + r"|\{(?:" + _NOT_BRACE + r")*+\})*+\})*+\}")
# one attribute as XLA prints it: ``, name=`` and a braced value, a string, or a word with no
# blank, comma, bracket, quote or slash in it, then blanks at most
_PLAIN_ATTR = r",[ \t]*+(" + IDENTIFIER + r")=(" + _BRACED + "|" + DOUBLE_QUOTED + r"|[^\s,{}\[\]()\"'/]++)[ \t]*+"
_PLAIN_ATTR_RE = lazy_pattern(_PLAIN_ATTR)
_PLAIN_ATTRS_RE = lazy_pattern(r"[ \t]*+(?:" + _PLAIN_ATTR + r")*+")


def split_attributes(text: str, instr: Instruction | None = None,
                     json_from: int | None = None) -> list[tuple[str, str]]:
    """Cut ``", a=1, b={...}"`` into ``[("a", "1"), ("b", "{...}")]``. ``json_from``: every
    braced value is JSON text from that depth (the items of frontend attributes), else as
    each name says (:data:`~hlo_rewrite.lexicon.JSON_TEXT_FROM`).

    Attributes as XLA prints them are cut by one regular expression; any other text (comments,
    a value that goes on after its braces or string, ``calls=%a, %b``, a line break, an error)
    is walked character class by character class, which also says what is wrong."""
    if _PLAIN_ATTRS_RE.fullmatch(text) is not None:
        return _PLAIN_ATTR_RE.findall(text)
    out: list[tuple[str, str]] = []
    n = len(text)
    try:
        pos = skip_trivia(text, 0)
        while pos < n:
            if text[pos] != ",":
                raise ValueError(f"expected ',' before {text[pos:pos + 20]!r}")
            m = _NAME_RE.match(text, skip_trivia(text, pos + 1))
            if m is None and out and out[-1][0] == "calls":
                # `calls=%a, %b`: XLA's printer lists several fusion callees this way
                vend = scan_value_end(text, pos + 1)
                out[-1] = ("calls", out[-1][1] + text[pos:vend].rstrip())
                pos = skip_trivia(text, vend)
                continue
            if m is None:
                raise ValueError(f"expected an attribute name=value after ',' at {text[pos:pos + 20]!r}")
            vstart = skip_trivia(text, m.end())  # (XLA's lexer skips a comment before the value)
            vend = scan_value_end(text, vstart, m.group(1), json_from)
            out.append((m.group(1), text[vstart:vend].rstrip()))
            pos = skip_trivia(text, vend)
    except ValueError as exc:
        comp = instr.computation if instr else None
        module = comp.module if comp is not None else None
        src = instr.text if instr is not None and instr.line else None
        raise HloParseError(
            f"malformed attributes: {exc}",
            filename=module.filename if module is not None else None,
            line=instr.line if instr else None,
            column=instr.column if instr else None,
            source_line=src.split("\n")[0] if src else None,
        ) from None
    return out


def name_list(value_text: str | None) -> list[str]:
    """``{%a, %b}`` -> ``["a", "b"]`` (also bare names)."""
    if not value_text:
        return []
    inner = value_text.strip()
    if inner.startswith("{") and inner.endswith("}"):
        inner = inner[1:-1]
    return [p.strip().lstrip("%") for p in inner.split(",") if p.strip()]


def called_computation_names(attrs: list[tuple[str, str]]) -> list[str]:
    """Names of every computation an attribute list refers to."""
    out: list[str] = []
    for key, value in attrs:
        if key in SINGLE_CALLEE_ATTRS:
            out.extend(p.strip().lstrip("%") for p in value.split(",") if p.strip())
        elif key in LIST_CALLEE_ATTRS:
            out.extend(name_list(value))
    return out


_CALLEE_WORDS = "|".join(sorted(CALLEE_ATTRS | CALLEE_LIST_ATTRS))
_QUICK_CALLEE = lazy_pattern(
    r",[ \t]*(?:/\*index=[0-9]+\*/)?(" + _CALLEE_WORDS + r")=(?:%?(" + IDENTIFIER + r")(?=[ \t]*(?:,[ \t]*" + IDENTIFIER
    + r"=|$))|\{([^{}\"]*)\})"
)


def quick_called_computations(text: str) -> list[str] | None:
    """Called computations read from raw attribute text with one regular
    expression, or None when that reading cannot be trusted (a quote before
    the last match could mean the match is inside a string): then split the
    attributes properly. Each single name must be followed by the next
    ``key=`` or the end, so ``calls=%a, %b`` is left to the splitter."""
    out: list[str] = []
    last = 0
    for m in _QUICK_CALLEE.finditer(text):
        _, single, many = m.groups()
        if single:
            out.append(single)
        else:
            out.extend(name_list("{" + many + "}"))
        last = m.end()
    if out and '"' in text[:last]:
        return None
    if not out and ("calls=" in text or "to_apply=" in text or "computations=" in text
                    or "condition=" in text or "body=" in text or "select=" in text
                    or "scatter=" in text):
        return None
    return out
