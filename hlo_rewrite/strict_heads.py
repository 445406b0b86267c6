"""Strict mode: the ``HloModule`` line and every computation's header, read again token by
token as XLA's parser reads them (:func:`head_problems`).

The readers take these lines loosely: what they need is the names, the signature's extent and
the header attributes' text. XLA's parser is stricter, and in strict mode so is the command:

- a name is ``%name``, or a bare word that is not one of XLA's keywords or element types
  (``ENTRY true {``, ``ROOT = f32[] ...`` and ``HloModule`` with no name are refused);
- a signature is ``(`` parameters ``)`` ``->`` result shape, each parameter a name glued to its
  ``:`` (``p: f32[]``; ``p : f32[]`` and ``%p: f32[]`` are refused, as XLA's lexer makes the
  ``:`` part of a bare name only) or a bare name without one, then a shape written as XLA
  reads shapes (:func:`hlo_rewrite.shapes.shape_syntax_error`);
- the ``HloModule`` line's attributes each follow a ``,`` with a name glued to its ``=``, and
  nothing but the stack frame tables stands between them and the first computation; a table
  entry in braces has each of its keys once, glued to its ``=``;
- a module without an ``HloModule`` line starts with ``ENTRY`` or with ``name {``: XLA's parser
  reads any other text as one instruction.
"""

from __future__ import annotations

import re
from collections.abc import Generator, Iterator, Sequence
from typing import TYPE_CHECKING

from .lexicon import (
    ELEMENT_TYPES,
    IDENTIFIER_RE,
    KEYWORDS,
    STACK_TABLES,
    brace_group_end,
    skip_string,
    skip_trivia,
)
from .shapes import shape_end
from .values import ValueReadError, read_sub_attributes

if TYPE_CHECKING:
    from .ir import Module

__all__ = ["bare_name_problem", "head_problems"]

#: the words a bare name cannot be: XLA's lexer reads them as other tokens
RESERVED = KEYWORDS | ELEMENT_TYPES


def bare_name_problem(word: str) -> str | None:
    """Why ``word``, written without ``%``, is not a name to XLA's parser (None when it is)."""
    if word in KEYWORDS:
        return f"expects name ('{word}' is a keyword; '%{word}' is a name)"
    if word in ELEMENT_TYPES:
        return f"expects name ('{word}' is an element type; '%{word}' is a name)"
    return None


def head_problems(module: Module, attrs: Sequence[tuple[str, int, str, int]],
                  results: dict[str, tuple[int, str]] | None = None) -> Iterator[tuple[int, str]]:
    """(offset in the source, message) of what XLA's parser refuses in the module's
    ``HloModule`` line and computation headers, in text order (the caller raises the first);
    ``attrs``: the ``HloModule`` line's attributes as read, (name, offset, value, value offset).
    ``results`` receives, by computation name, where each signature's result shape is written
    and its text (XLA compares it with the root's once it has read the body)."""
    source = module.source
    comps = [c for c in module.computations if c.inline_in is None]  # (the others have no head)
    first = comps[0].source_span[0] if comps and comps[0].source_span is not None else len(source)
    first = skip_trivia(source, first)
    yield from _module_line(source, first, attrs)
    seen: set[str] = set()  # plain shapes checked already: a module repeats them in its signatures
    previous_end = first
    for k, comp in enumerate(comps):
        if comp.source_span is None:
            continue
        if k:  # only the header line is followed by the tables; the readers take them anywhere
            gap = skip_trivia(source, previous_end, comp.source_span[0])
            if source.startswith(STACK_TABLES, gap):
                yield gap, "expects a computation: the stack frame tables stand right after the HloModule line"
                return
        previous_end = comp.source_span[1]
        start = skip_trivia(source, comp.source_span[0])
        end = start + len(comp.head.lstrip()) if comp.head else comp.source_span[1]
        found = yield from _computation_head(source, start, end, seen,
                                             headerless_first=k == 0 and not _has_module_line(source))
        if found is not None and results is not None:
            results[comp.name] = found


def _has_module_line(source: str) -> bool:
    return source.startswith("HloModule", skip_trivia(source, 0))


def _name(text: str, pos: int, what: str) -> tuple[int, str | None]:
    """The end of the name at ``pos`` and None, or (pos, why it is not a name)."""
    if text.startswith("%", pos):
        m = IDENTIFIER_RE.match(text, pos + 1)
        return (m.end(), None) if m is not None else (pos, f"expects {what} after '%'")
    m = IDENTIFIER_RE.match(text, pos)
    if m is None:
        return pos, f"expects {what}"
    if text.startswith(":", m.end()):  # XLA's lexer makes 'word:' one name token, keywords too
        return m.end() + 1, None
    problem = bare_name_problem(m.group())
    return (pos, problem) if problem is not None else (m.end(), None)


def _module_line(source: str, first: int, attrs: Sequence[tuple[str, int, str, int]]) -> Iterator[tuple[int, str]]:
    pos = skip_trivia(source, 0)
    if not source.startswith("HloModule", pos):
        if source.startswith(STACK_TABLES, pos):  # XLA's parser reads them after that line only
            yield pos, "expects the HloModule line before the stack frame tables"
        return
    pos = skip_trivia(source, pos + len("HloModule"))
    end, problem = _name(source, pos, "the module's name")
    if problem is not None:
        yield end, problem
        return
    if attrs:  # the attributes read (their values are checked by the caller)
        _name_, _at, value, vstart = attrs[-1]
        end = vstart + len(value)
    pos = skip_trivia(source, end)
    if source.startswith(",", pos):
        yield skip_trivia(source, pos + 1), "expects attribute name (a name glued to its '=') after ','"
    elif source.startswith("FileNames", pos):
        yield from _stack_tables(source, pos, first)
    elif pos < first:
        yield pos, "expects ',' before a module attribute, or a computation"


#: the keys of a stack frame table entry written in braces (all required, integers); the
#: other tables' entries are strings
_TABLE_KEYS: dict[str, dict[str, str]] = {
    "FileLocations": dict.fromkeys(("file_name_id", "function_name_id", "line", "end_line", "column", "end_column"),
                                   "int"),
    "StackFrames": dict.fromkeys(("file_location_id", "parent_frame_id"), "int"),
}
_ENTRY_NUMBER = re.compile(r"-?[0-9]+")
# a plain array shape as XLA prints it (checked once, then known by its text)
_PLAIN_SHAPE = re.compile(r"[a-z][a-z0-9]*\[[0-9,]*\](?:\{[0-9,]*\})?")


def _stack_tables(source: str, pos: int, first: int) -> Iterator[tuple[int, str]]:
    """``FileNames``, ``FunctionNames``, ``FileLocations``, ``StackFrames``: each a word, then
    entries ``N "text"`` or ``N {key=value ...}``."""
    for table in STACK_TABLES:
        keys = _TABLE_KEYS.get(table)
        if not source.startswith(table, pos):
            yield pos, f"expects the {table} table"
            return
        pos = skip_trivia(source, pos + len(table), first)
        while (number := _ENTRY_NUMBER.match(source, pos, first)) is not None:
            pos = skip_trivia(source, number.end(), first)
            try:
                if keys is None:
                    if not source.startswith('"', pos):
                        continue  # an entry with no name: XLA's parser takes it, the name empty
                    end = skip_string(source, pos)
                else:
                    if not source.startswith("{", pos):
                        yield pos, f"expects '{{' in the {table} table"
                        return
                    end = brace_group_end(source, pos)
                    read_sub_attributes(source[pos:end], keys, frozenset(keys))
            except ValueReadError as exc:
                yield pos + exc.offset, exc.message
                return
            except ValueError as exc:
                yield pos, str(exc)
                return
            pos = skip_trivia(source, end, first)
    if pos < first:
        yield pos, "expects a computation after the stack frame tables"


def _computation_head(source: str, start: int, end: int, seen: set[str], *,
                      headerless_first: bool) -> Generator[tuple[int, str], None, tuple[int, str] | None]:
    """The problems of one computation header; returns where its result shape is written and
    its text, when it has a signature without problems."""
    pos = start
    word = IDENTIFIER_RE.match(source, pos)
    is_entry = word is not None and word.group() == "ENTRY"
    if is_entry:
        pos = skip_trivia(source, pos + 5)
    name_end, problem = _name(source, pos, "the computation's name")
    if problem is not None:
        yield name_end, problem
        return None
    pos = skip_trivia(source, name_end)
    if not source.startswith("(", pos):
        return None
    if headerless_first and not is_entry:
        yield start, ("a module without an 'HloModule' line starts with ENTRY or a computation "
                      "without a signature (XLA's parser reads this text as one instruction)")
        return None
    pos = skip_trivia(source, pos + 1)
    if not source.startswith(")", pos):
        while True:
            pos, problem = _parameter(source, pos, end, seen)
            if problem is not None:
                yield pos, problem
                return None
            if source.startswith(",", pos):
                pos = skip_trivia(source, pos + 1)
                continue
            if not source.startswith(")", pos):
                yield pos, "expects ',' or ')' in the parameter list"
                return None
            break
    pos = skip_trivia(source, pos + 1)
    if not source.startswith("->", pos):
        yield pos, "expects '->' and the result shape after the parameter list"
        return None
    shape_at = skip_trivia(source, pos + 2, end)
    got = _shape_end(source, shape_at, end, seen)
    if isinstance(got, tuple):
        yield got[0], f"malformed result shape: {got[1]}"
        return None
    pos = skip_trivia(source, got, end)
    if not source.startswith("{", pos):
        yield pos, "expects '{' to open the body after the result shape"
        return None
    return shape_at, source[shape_at:got]


def _parameter(source: str, pos: int, end: int, seen: set[str]) -> tuple[int, str | None]:
    """One ``name: shape`` of a signature: the offset after it (blanks skipped) and None, or
    (where, why) XLA's parser refuses it."""
    name_end, problem = _name(source, pos, "a parameter name")
    if problem is not None:
        return name_end, problem
    after = skip_trivia(source, name_end)
    if source.startswith(":", after) and source[name_end - 1] != ":":  # a ':' not glued to a bare name
        why = ("a ':' follows only a bare name, glued to it" if source.startswith("%", pos)
               else "the ':' must follow the parameter name at once")
        return after, f"expects a shape: {why} ('p: f32[]')"
    got = _shape_end(source, after, end, seen)
    if isinstance(got, tuple):
        return got[0], f"malformed parameter shape: {got[1]}"
    return skip_trivia(source, got, end), None


def _shape_end(source: str, pos: int, end: int, seen: set[str]) -> int | tuple[int, str]:
    """:func:`~hlo_rewrite.shapes.shape_end`, spared for a plain array shape in ``seen``."""
    m = _PLAIN_SHAPE.match(source, pos, end)
    if m is not None and m.group() in seen:
        return m.end()
    got = shape_end(source, pos, end)
    if m is not None and got == m.end():
        seen.add(m.group())
    return got
