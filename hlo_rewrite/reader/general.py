"""The token reader: HLO text in any layout XLA's parser reads.

XLA's lexer skips blanks, line ends (``\\n``, ``\\r\\n``, a lone ``\\r``), ``/* ... */`` and
``// ...`` comments between any two tokens, and an instruction ends where its attribute list
ends, not at a line end. This reader follows the same rules token by token: an instruction may
run over several lines, share a line with others, or have comments between its tokens; a
computation's ``{`` may stand on a line of its own; a whole module may be one line.

It is the reader for whatever the line reader (:mod:`.plain`) does not vouch for, and it builds
every computation at once. The module keeps its text: each instruction's source text is the
span from where the previous item ended (or from the start of its own line, when only blanks
stand before it there) to its last token, plus the rest of that line when only blanks and
comments follow; so joining the pieces gives the input back byte for byte.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence

from .. import attributes
from ..errors import HloError, HloParseError, HloVerifyError
from ..ir import Computation, Instruction, Module
from ..lexicon import (
    COMMENT,
    DOUBLE_QUOTED,
    IDENTIFIER,
    IDENTIFIER_RE,
    NON_ARRAY_TYPES,
    STACK_TABLES,
    STRING_TABLES,
    UnclosedError,
    brace_group_end,
    instruction_name_problem,
    json_text_from,
    matching_close,
    skip_string,
    split_top_level,
)
from ..opcodes import ATTRIBUTE_KINDS, Kind, spec_of, split_async_opcode
from ..shapes import ELEMENT_TYPES, element_type_of, is_buffer_start, shape_syntax_error
from .checks import header_problem, unknown_opcode_message
from .lines import line_starts
from .patterns import NON_CALLER_OPCODES, OPCODE_SPELLINGS, PAYLOAD_OPCODES

_WORD = IDENTIFIER_RE
# blanks, line ends and complete comments, as many as there are
_SKIP = re.compile(r"(?:[ \t\r\n]+|" + COMMENT + ")*", re.S)
# what follows a token on its own line: blanks and one-line comments, then the line end
_REST_OF_LINE = re.compile(r"(?:[ \t]++|/\*[^\n\r]*?\*/)*+(?://[^\n\r]*)?(?:\r\n|\r|\n|\Z)")
# a run of value characters outside brackets and strings
_ATOM = re.compile(r'(?:[^\s,(){}\[\]"/%]|/(?![/*]))+')
_COMMENTS = re.compile(COMMENT, re.S)
_BLANKS = re.compile(r"\s+")
# an operand: an optional shape, then a name
_OPERAND_NAME = re.compile(r"(%?)(" + IDENTIFIER + r")\s*$")
_TYPE_BEFORE_DIMS = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\[")
_DIMS = re.compile(r"\[\s*(?:(?:(?:<=\s*)?[0-9]+|\?)(?:\s*,\s*(?:(?:<=\s*)?[0-9]+|\?))*)?\s*\]")
_NUMBER = re.compile(r"[0-9]+")
# what may follow the "{" of a layout: a dimension number, ":" or the closing "}"
_LAYOUT_FIRST = frozenset("0123456789:}")
_STRING_OR_COMMENT = re.compile(DOUBLE_QUOTED + "|" + COMMENT, re.S)
# the pieces of a value as _clean_json reads them: a string, a comment, a brace, blanks, other text
_VALUE_PIECE = re.compile(DOUBLE_QUOTED + "|" + COMMENT + r'|[{}]|\s+|[^"/{}\s]+|[/"]', re.S)


def _clean(text: str, json_from: int = 0) -> str:
    """A value or shape as one line: comments dropped, a run of blanks holding a line end
    made one blank (strings left as they are). From brace depth ``json_from`` on (when not 0)
    the value is JSON text to XLA's lexer, where a comment and a line end are text and stay."""
    if "/*" not in text and "//" not in text and "\n" not in text and "\r" not in text:
        return text
    if json_from:
        return _clean_json(text, json_from)
    out = []
    code: list[str] = []  # the text since the last string, its comments made blanks
    pos = 0
    for m in _STRING_OR_COMMENT.finditer(text):  # whichever starts first: a string or a comment
        code.append(text[pos : m.start()])
        if m.group().startswith('"'):
            out.append(_clean_code("".join(code)))
            out.append(m.group())
            code = []
        else:
            code.append(" ")  # (a quote inside a comment is the comment's)
        pos = m.end()
    code.append(text[pos:])
    out.append(_clean_code("".join(code)))
    return "".join(out).strip()


def _clean_json(text: str, json_from: int) -> str:
    """:func:`_clean` of a value that is JSON text from brace depth ``json_from`` on: there its
    comments and line ends are text, and stay."""
    out = []
    depth = 0
    for m in _VALUE_PIECE.finditer(text):
        piece = m.group()
        first = piece[0]
        if first == "{":
            depth += 1
        elif first == "}":
            depth -= 1
        elif first == "/" and piece[1:2] in ("/", "*") and depth < json_from:
            piece = " "
        elif first.isspace() and ("\n" in piece or "\r" in piece) and depth < json_from:
            piece = " "  # (inside the JSON text a line end is the value's own, as a comment is)
        out.append(piece)
    return "".join(out).strip()


def _clean_code(text: str) -> str:
    text = _COMMENTS.sub(" ", text)
    return _BLANKS.sub(lambda m: " " if ("\n" in m.group() or "\r" in m.group()) else m.group(), text)


class TokenReader:
    """Reads one module text token by token (one use per text)."""

    def __init__(self, text: str, filename: str | None) -> None:
        self.text = text
        self.n = len(text)
        self.filename = filename
        self._starts: Sequence[int] | None = None
        self.module = Module(text, filename)
        # (computation, instruction) whose callees and control predecessors are checked at the end
        self.callers: list[tuple[Computation, Instruction]] = []
        # every instruction name read so far, module-wide (XLA's parser names the instructions
        # written as operands so that they differ from these)
        self.names_read: set[str] = set()
        # a text that is one instruction: the parameters its operands have made, so far
        self.implied: list[str] | None = None
        # the computation being read whose text holds any written inline (which stand before it)
        self.outermost: Computation | None = None
        # each instruction holding computations written inline: the attributes (by index) whose
        # values hold them, and its '%' (their names are given once the module is read)
        self.holders: list[tuple[Instruction, list[tuple[int, tuple[bool, list]]], str]] = []

    # ------------------------------------------------------------------ places
    @property
    def starts(self) -> Sequence[int]:
        """The line starts (worked out on first use: reading a header alone needs none)."""
        if self._starts is None:
            self._starts = self.module.line_starts = line_starts(self.text)
        return self._starts

    def line_of(self, offset: int) -> int:
        return bisect_right(self.starts, offset)

    def error(self, cls: type[HloError], message: str, offset: int) -> HloError:
        line = self.line_of(min(offset, self.n))
        begin = self.starts[line - 1]
        end = min(self.starts[line], self.n)
        src = self.text[begin:end].rstrip("\r\n")
        return cls(message, filename=self.filename, line=line, column=offset - begin + 1, source_line=src)

    def place(self, offset: int) -> tuple[int, int]:
        """(line, column) of ``offset``."""
        line = self.line_of(offset)
        return line, offset - self.starts[line - 1] + 1

    def _item_start(self, first: int, prev_end: int) -> int:
        """Where an item whose first token is at ``first`` starts: its line's start when only
        blanks stand before it on that line (after the previous item), else ``prev_end``."""
        begin = self.starts[self.line_of(first) - 1]
        if begin >= prev_end and not self.text[begin:first].strip(" \t"):
            return begin
        return prev_end

    def _item_end(self, last: int) -> int:
        """Where an item whose last token ends at ``last`` ends: past its line end when only
        blanks and comments follow on that line, else ``last``."""
        m = _REST_OF_LINE.match(self.text, last)
        return m.end() if m is not None else last

    # ------------------------------------------------------------------ tokens
    def skip(self, pos: int) -> int:
        """The offset of the next token at or after ``pos``."""
        pos = _SKIP.match(self.text, pos).end()  # type: ignore[union-attr]
        if self.text.startswith("/*", pos):
            raise self.error(HloParseError, "unterminated comment: '/*' is never closed with '*/'", pos)
        return pos

    def word(self, pos: int) -> re.Match[str] | None:
        return _WORD.match(self.text, pos)

    def expect(self, pos: int, char: str, what: str) -> int:
        """``pos`` (after skipping) must hold ``char``; returns the offset past it."""
        pos = self.skip(pos)
        if not self.text.startswith(char, pos):
            raise self.error(HloParseError, f"expected '{char}' {what}, found {self._found(pos)}", pos)
        return pos + 1

    def _found(self, pos: int) -> str:
        if pos >= self.n:
            return "the end of the input"
        m = _WORD.match(self.text, pos)
        return repr(m.group() if m is not None else self.text[pos])

    def string_end(self, pos: int) -> int:
        try:
            return skip_string(self.text, pos)
        except ValueError:
            raise self.error(HloParseError, "unterminated string: '\"' is never closed", pos) from None

    def group_end(self, pos: int) -> int:
        """``text[pos]`` opens a bracket; the offset just past its matching close."""
        try:
            return matching_close(self.text, pos)
        except ValueError as exc:
            raise self.error(HloParseError, f"the '{self.text[pos]}' opened here is not closed properly: {exc}",
                             pos) from None

    def brace_end(self, pos: int, json_from: int = 0) -> int:
        """``text[pos]`` is the '{' of an attribute value; the offset just past its '}'
        (:func:`~hlo_rewrite.lexicon.brace_group_end`: only braces count inside; ``json_from``
        as there)."""
        try:
            return brace_group_end(self.text, pos, json_from)
        except UnclosedError as exc:
            raise self.error(HloParseError, str(exc), exc.offset) from None

    def value_end(self, pos: int, json_from: int = 0) -> int:
        """The offset just past the attribute value starting at ``pos``: adjacent atoms and
        ``()``/``[]`` groups (``[2,4]<=[8]T(1,0)``), or one braced group or string, up to a
        blank, a comment, a ``,`` or an unmatched ``}``. As for XLA's lexer, a braced group or a
        string is a whole value and ``%`` starts a name: what follows them without a blank
        (``metadata={...}%next = ...``) is the next instruction."""
        text = self.text
        if text.startswith("{", pos):
            return self.brace_end(pos, json_from)
        if text.startswith('"', pos):
            return self.string_end(pos)
        i = pos + text.startswith("%", pos)
        while True:
            while i < self.n:
                ch = text[i]
                if ch in "([":
                    i = self.group_end(i)
                else:
                    m = _ATOM.match(text, i)
                    if m is None:
                        break
                    i = m.end()
            # an iota list's tokens may stand apart (``[2,4] <= [4,2]`` and ``T(1,0)`` after a line
            # break or a comment): XLA's lexer skips what is between them, and none of '<=', '['
            # or 'T(' can start what follows a value
            j = self.skip(i)
            if j == i or j >= self.n or not self._iota_goes_on(pos, i, j):
                return i
            i = j

    def _shaped_end(self, pos: int, literal: bool) -> int:
        """The offset just past a value that is a shape (``outfeed_shape=``), or a shape and
        then a literal (``literal=f32[] 0.1``, ``f32[2]{0} {1, 2}``); their tokens may stand
        apart."""
        end, shape = self._shape(pos)
        if shape is None:
            return self.value_end(pos)  # (for the value's reader to refuse)
        if not literal:
            return end
        text = self.text
        q = self.skip(end)
        if text.startswith("{", q):
            return self.brace_end(q)
        if text.startswith("(", q):
            return self.group_end(q)
        m = _ATOM.match(text, q)
        return end if m is None else m.end()

    def _iota_goes_on(self, pos: int, i: int, j: int) -> bool:
        """Whether the value read from ``pos`` to ``i`` goes on at ``j`` as an iota list does."""
        text = self.text
        before = text[i - 1]
        if before == "]":
            if text.startswith("<=", j):
                return True
            return "<=" in text[pos:i] and text.startswith("T", j) and text.startswith("(", self.skip(j + 1))
        if text.startswith("<=", i - 2):
            return text.startswith("[", j)
        return before == "T" and text.startswith("(", j) and "<=" in text[pos:i]

    # ------------------------------------------------------------------ module
    def run(self) -> Module:
        text = self.text
        if "\x00" in text:
            raise self.error(HloParseError, "NUL byte in the input: this is not HLO text", text.index("\x00"))
        if not text or text.isspace():
            raise HloParseError("empty input: expected an HLO module", filename=self.filename, line=1, column=1,
                                source_line="")
        mod = self.module
        mod.line_starts = self.starts
        prev_end = 0  # where the last item read ends
        raw_from = 0  # where the raw text not yet in a piece starts
        pos = self.skip(0)
        w = self.word(pos)
        if w is not None and w.group() == "HloModule":
            prev_end = self._header(w.end())
        elif self._one_instruction(pos):
            return self._single(pos)
        comp_names: set[str] = set()
        entry: Computation | None = None
        while True:
            pos = self.skip(prev_end)
            if pos >= self.n:
                break
            w = self.word(pos)
            if w is not None and w.group() in STACK_TABLES:
                prev_end = self._section(w.end(), w.group() in STRING_TABLES)
                continue
            if w is not None and w.group() == "HloModule":
                kind = "a second 'HloModule' header" if mod.name is not None else "'HloModule' after a computation"
                raise self.error(HloParseError, kind, pos)
            start = self._item_start(pos, prev_end)
            if start > raw_from:
                mod.pieces.append(text[raw_from:start])
            comp = self._computation(pos, start, comp_names)
            assert comp.source_span is not None
            prev_end = raw_from = comp.source_span[1]
            if comp.is_entry:
                if entry is not None:
                    raise self.error(HloVerifyError, "a second ENTRY computation: a module has only one", pos)
                entry = comp
        if raw_from < self.n:
            mod.pieces.append(text[raw_from:])
        if not mod.computations:
            raise self.error(HloParseError, "expected a computation, found the end of the input", self.n)
        self._name_inline()
        self._check_callees()
        return mod

    def _one_instruction(self, pos: int) -> bool:
        """Whether a text without an ``HloModule`` line is one instruction rather than
        computations: it starts with ``ROOT``, ``name =`` or a shape. (XLA's parser takes any text
        whose second token is not ``{`` for one; a computation with a signature but no
        ``HloModule`` line is read as a computation here, and refused in strict mode.)"""
        text = self.text
        if text.startswith("(", pos):
            return True
        w = self.word(pos + text.startswith("%", pos))
        if w is None or w.group() == "ENTRY":
            return False
        after = self.skip(w.end())
        if w.group() == "ROOT" or text.startswith("=", after):
            return True
        return w.group() in ELEMENT_TYPES and text.startswith("[", after)

    def _single(self, pos: int) -> Module:
        """A text that is one instruction, which XLA's parser makes a module of: an ENTRY
        computation ``_`` whose root it is, each operand it names with a shape and does not define
        a parameter of that name (``_0``, ``_1``, ... for a shape written alone)."""
        text = self.text
        mod = self.module
        mod.single_instruction = True
        comp = Computation("_", is_entry=True, head="", line=self.line_of(pos))
        mod.add_computation(comp)
        self.outermost = comp
        self.implied = []
        nested: list[dict] = []
        w = self.word(pos)
        if text.startswith("(", pos) or w is not None and w.group() in ELEMENT_TYPES:
            # no 'name =': XLA names the instruction after the module, '_'
            fields, last = self._rhs(pos, nested, True)
            line, column = self.place(pos)
            fields.update(name="_", is_root=False, line=line, column=column)
        else:
            fields, last, nested = self._instruction(pos)
        after = self.skip(last)
        if after < self.n:
            raise self.error(HloParseError, f"expected the end of the input after the instruction, found "
                             f"{self._found(after)}: a text without an 'HloModule' line that starts with "
                             "an instruction is that one instruction", after)
        item_start = self._item_start(pos, 0)
        end = self._item_end(last)
        instructions: list[Instruction] = []
        by_name: dict[str, Instruction] = {}
        instr = self._built(fields, nested, pos, (item_start, end), comp, by_name, instructions)
        if item_start:
            instr.prefix = text[:item_start]
        if instr.name in by_name:
            raise self.error(HloVerifyError, f"instruction '{instr.name}' is defined twice", pos)
        instructions.append(instr)
        by_name[instr.name] = instr
        comp.tail = text[end:]
        self._check_operands(comp, instructions, by_name, "computation '_'")
        comp.fill(instructions, by_name)
        comp.source_span = (0, self.n)
        if instr.opcode not in NON_CALLER_OPCODES:
            for callee in attributes.called_computation_names(instr.attrs):
                raise self.error(HloVerifyError, f"'{instr.name}' calls computation '{callee}', which is not "
                                 "defined (a text that is one instruction has no other computation)",
                                 self._name_offset(instr, callee))
        return mod

    def _implied(self, name: str, shape: str, at: int) -> dict:
        """The parameter XLA's parser makes for an operand ``shape name`` (``name`` empty: a
        shape written alone) of a text that is one instruction."""
        assert self.implied is not None
        number = len(self.implied)
        name = name or f"_{number}"
        line, column = self.place(at)
        fields = {"name": name, "opcode": "parameter", "shape": shape, "operands": [], "attrs": [],
                  "is_root": False, "line": line, "column": column,
                  "attrs_span": (at, at), "payload": str(number), "implied": True, "anon": (at, at)}
        self.implied.append(name)
        self.names_read.add(name)
        return fields

    def _header(self, pos: int) -> int:
        """``HloModule`` ends just before ``pos``: read the name and attributes; returns where
        the header ends."""
        start = pos - len("HloModule")
        last = self.header_last(pos)
        problem = header_problem(self.text, start, last)
        if problem is not None:
            raise self.error(HloParseError, problem[0], problem[1])
        return self._item_end(last)

    def header_last(self, pos: int) -> int:
        """``HloModule`` ends just before ``pos``: read the name and attributes; returns the
        end of the header's last token."""
        pos = self.skip(pos)
        percent = self.text.startswith("%", pos)
        w = self.word(pos + percent)
        if w is None or (not percent and w.group() == "ENTRY"):
            # (a bare ENTRY is the keyword, the start of the entry computation: the name is missing)
            raise self.error(HloParseError, "expected a module name after 'HloModule'", pos)
        self.module.name = w.group()
        last = w.end()
        if self.text.startswith(":", last):  # XLA's lexer reads "name:" as one name token
            last += 1
        while True:
            pos = self.skip(last)
            if not self.text.startswith(",", pos):
                break
            _, last, _ = self._attribute(pos)
        return last

    def _execution_thread(self, last: int) -> int:
        """A computation's ``}`` ends at ``last``; XLA's parser reads an optional
        ``, execution_thread="name"`` after it. Returns the end of the computation's last token."""
        pos = self.skip(last)
        if not self.text.startswith(",", pos):
            return last
        (name, value), end, _ = self._attribute(pos)
        if name != "execution_thread" or not value.startswith('"'):
            raise self.error(HloParseError, "expected execution_thread=\"...\" after a computation's '}'",
                             self.skip(pos + 1))
        return end

    def _section(self, pos: int, strings: bool) -> int:
        """A stack-frame table (``FileNames``, ..., ``StackFrames``) whose word ends at ``pos``:
        numbered entries of strings (``strings``: the string may be left out) or braced fields,
        kept verbatim with what stands before."""
        text = self.text
        last = pos
        while True:
            p = self.skip(last)
            m = _NUMBER.match(text, p)
            if m is None:
                break
            last = m.end()
            q = self.skip(last)
            if text.startswith('"', q):
                last = self.string_end(q)
            elif text.startswith("{", q):
                last = self.group_end(q)
            elif not strings:
                raise self.error(HloParseError, "expected '{' in the stack-frame table", q)
        return self._item_end(last)

    def _attribute(self, comma: int) -> tuple[tuple[str, str], int, tuple[bool, list] | None]:
        """An attribute after the ``,`` at ``comma``: ``((name, value text), end offset, inline)``,
        ``inline`` for a value that holds computations written inline (:meth:`_inline_value`)."""
        pos = self.skip(comma + 1)
        w = self.word(pos)
        if w is None or not self.text.startswith("=", w.end()):
            raise self.error(HloParseError, f"expected an attribute name and '=' after ',', found {self._found(pos)}",
                             pos)
        v = self.skip(w.end() + 1)
        json_from = json_text_from(w.group()) if self.text.startswith("{", v) else 0
        kind = ATTRIBUTE_KINDS.get(w.group())
        if kind in (Kind.COMPUTATION, Kind.COMPUTATION_LIST) and self.text.startswith("{", v):
            inline = self._inline_value(w.group(), v, kind == Kind.COMPUTATION_LIST)
            if inline is not None:
                parts, end = inline
                return (w.group(), ""), end, (kind == Kind.COMPUTATION_LIST, parts)
        if kind == Kind.SHAPE or kind == Kind.LITERAL:
            end = self._shaped_end(v, kind == Kind.LITERAL)
        else:
            end = self.value_end(v, json_from)
        if end == v:
            raise self.error(HloParseError, f"expected a value for attribute '{w.group()}'", v)
        return (w.group(), _clean(self.text[v:end], json_from)), end, None

    def _inline_value(self, key: str, opened: int, listed: bool) -> tuple[list[str | Computation], int] | None:
        """The value at ``opened`` of callee attribute ``key`` when it holds computations written
        inline: ``to_apply={ ... }``, or in a list (``listed``) such as
        ``branch_computations={{ ... }, %b}``; each element in order (a name as written, or the
        computation read) and the offset past the value. None for a list of names alone."""
        text = self.text
        if not listed:
            comp, end = self._inline_computation(key, opened)
            return [comp], end
        pos = self.skip(opened + 1)
        items: list[str | Computation] = []
        if text.startswith("}", pos):
            return None
        while True:
            if text.startswith("{", pos):
                comp, end = self._inline_computation(key, pos)
                items.append(comp)
            else:
                w = self.word(pos + text.startswith("%", pos))
                if w is None:
                    raise self.error(HloParseError, f"expected a computation name or a computation in braces in "
                                     f"{key}=, found {self._found(pos)}", pos)
                items.append(text[pos : w.end()])
                end = w.end()
            pos = self.skip(end)
            if text.startswith("}", pos):
                break
            if not text.startswith(",", pos):
                raise self.error(HloParseError, f"expected ',' or '}}' in {key}=, found {self._found(pos)}", pos)
            pos = self.skip(pos + 1)
        if all(isinstance(item, str) for item in items):
            return None
        return items, pos + 1

    def _inline_computation(self, key: str, opened: int) -> tuple[Computation, int]:
        """A computation written inline in the value of ``key``, its ``{`` at ``opened``: XLA's
        parser reads its instructions as a computation's, in a scope of their own, and adds it to
        the module once they are read, named ``_`` (``_.1``, ... when taken); so does this reader
        (the names are given once the module is read, :meth:`_name_inline`)."""
        comp = Computation("_", line=self.line_of(opened))
        comp.module = self.module  # (its instructions' places are the module's)
        end = self._body(comp, opened + 1, f"the computation written inline as the value of {key}=", opened)
        comp.source_span = (opened, end)
        self.module.add_inline_computation(comp, self.outermost)
        return comp, end

    def _name_inline(self) -> None:
        """Name the computations written inline as XLA's parser does, in the order it makes them:
        ``_``, else ``_.1``, ``_.2``, ... (the module's other computations keep their names), and
        write the names into their holders' attribute values."""
        if not self.holders:
            return
        inline = [c for c in self.module.computations if c.inline_in is not None]
        made = sorted(inline, key=lambda c: c.source_span[1] if c.source_span else 0)
        taken = {c.name for c in self.module.computations if c.inline_in is None}
        for comp in made:
            name, k = "_", 0
            while name in taken:
                k += 1
                name = f"_.{k}"
            taken.add(name)
            comp.name = name
        for holder, values, pct in self.holders:
            attrs = holder.attrs
            for index, (listed, items) in values:
                names = [item if isinstance(item, str) else pct + item.name for item in items]
                attrs[index] = (attrs[index][0], "{" + ", ".join(names) + "}" if listed else names[0])

    # ------------------------------------------------------------- computation
    def _computation(self, pos: int, start: int, comp_names: set[str]) -> Computation:
        text = self.text
        is_entry = False
        w = self.word(pos)
        if w is not None and w.group() == "ENTRY":
            is_entry = True
            pos = self.skip(w.end())
        name_at = pos
        if text.startswith("%", pos):
            pos += 1
        w = self.word(pos)
        if w is None:
            raise self.error(HloParseError, f"expected a computation or 'HloModule', found {self._found(pos)}", pos)
        name = w.group()
        if name in comp_names:
            raise self.error(HloVerifyError, f"computation '{name}' is defined twice", name_at)
        comp_names.add(name)
        pos = self.skip(w.end())
        if text.startswith("(", pos):  # the signature: (parameters) -> result shape
            pos = self.skip(self.group_end(pos))
            if text.startswith("->", pos):
                pos = self.skip(pos + 2)
                shape_end, _ = self._shape(pos)
                if shape_end == pos:
                    raise self.error(HloParseError, "expected the result shape after '->'", pos)
                pos = self.skip(shape_end)
        if not text.startswith("{", pos):
            raise self.error(HloParseError, f"expected '{{' to open the body of computation '{name}', found "
                             f"{self._found(pos)}", pos)
        head_end = self._item_end(pos + 1)
        comp = Computation(name, is_entry=is_entry, head=text[start:head_end], line=self.line_of(name_at))
        self.module.add_computation(comp)
        self.outermost = comp
        end = self._body(comp, head_end, f"computation '{name}'", None)
        comp.source_span = (start, end)
        return comp

    def _body(self, comp: Computation, prev_end: int, label: str, opened: int | None) -> int:
        """Read the instructions of ``comp`` from ``prev_end`` through its closing ``}`` (and
        what stands after it on its line), fill it, and return where it ends. ``label`` names it
        in messages; ``opened``: the ``{`` of a computation written inline, whose ``}`` ends it
        (no execution thread may follow)."""
        text = self.text
        instructions: list[Instruction] = []
        by_name: dict[str, Instruction] = {}
        root: Instruction | None = None
        while True:
            pos = self.skip(prev_end)
            if pos >= self.n:
                raise self.error(HloParseError, f"{label} is not closed: expected '}}' before the end of the input",
                                 self.starts[comp.line - 1] if opened is None else opened)
            if text.startswith("}", pos):
                end = pos + 1 if opened is not None else self._item_end(self._execution_thread(pos + 1))
                comp.tail = text[prev_end:end]
                break
            fields, last, nested = self._instruction(pos)
            item_start = self._item_start(pos, prev_end)
            end = self._item_end(last)
            instr = self._built(fields, nested, pos, (item_start, end), comp, by_name, instructions)
            if item_start > prev_end:
                instr.prefix = text[prev_end:item_start]
            if instr.name in by_name:
                raise self.error(HloVerifyError, f"instruction '{instr.name}' is defined twice in {label}", pos)
            if instr.is_root:
                if root is not None:
                    raise self.error(HloVerifyError, f"a second ROOT in {label} (the first is "
                                     f"'{root.name}' on line {root.line})", pos)
                root = instr
            instructions.append(instr)
            by_name[instr.name] = instr
            if instr.opcode not in NON_CALLER_OPCODES or any(k == "control-predecessors" for k, _ in instr.attrs):
                self.callers.append((comp, instr))
            prev_end = end
        if not instructions:
            raise self.error(HloVerifyError, f"{label} has no instructions",
                             self.starts[comp.line - 1] if opened is None else opened)
        self._check_operands(comp, instructions, by_name, label)
        comp.fill(instructions, by_name)
        return end

    def _built(self, fields: dict, nested: list[dict], pos: int, span: tuple[int, int], comp: Computation,
               by_name: dict[str, Instruction], instructions: list[Instruction]) -> Instruction:
        """The instruction read at ``pos`` (its ``fields``) whose text is ``span``, after the
        instructions ``nested`` holds: those written in its operand list, and the parameters its
        operands make in a text that is one instruction. Only it is added to the lists."""
        made = [self._written_inside(f, span[0], comp, by_name, instructions) for f in nested]
        inline = fields.pop("inline", None)
        callees = fields.pop("callees", None)
        instr = Instruction.from_text_span(
            **fields, nlines=self.line_of(max(span[1] - 1, pos)) - self.line_of(span[0]) + 1,
            span=span, computation=comp,
        )
        if callees:
            written = tuple(c for _, (_, items) in callees for c in items if isinstance(c, Computation))
            for c in written:
                c.inline_in = instr
            instr.inline_callees = written
            name_at = self.starts[instr.line - 1] + instr.column - 1
            self.holders.append((instr, callees, "%" if self.text.startswith("%", name_at) else ""))
        members = [m for m in made if not m.implied]
        if inline:
            instr.inline_operands = inline
        if members:
            instr.hold(members)
        return instr

    def _written_inside(self, fields: dict, at: int, comp: Computation, by_name: dict[str, Instruction],
                        instructions: list[Instruction]) -> Instruction:
        """An instruction written as an operand of the one whose text starts at ``at``: it has
        no text of its own (its text is inside that one's) and stands just before it."""
        anon = fields.pop("anon")
        inline = fields.pop("inline", None)
        implied = fields.pop("implied", False)
        name = fields["name"]
        if name in by_name:
            raise self.error(HloVerifyError, f"instruction '{name}' is defined twice in computation '{comp.name}'",
                             anon[0])
        instr = Instruction.from_text_span(**fields, nlines=1, span=(at, at), computation=comp)
        if implied:
            instr.implied = True
        else:
            instr.anonymous_span = anon
            self.module.writes_inline = True
            if inline:
                instr.inline_operands = inline
        instructions.append(instr)
        by_name[name] = instr
        return instr

    def _shape(self, pos: int) -> tuple[int, str | None]:
        """A shape at ``pos``, if one is there: (end offset, its text as one line)."""
        text = self.text
        if text.startswith("(", pos):
            end = self.group_end(pos)
            shape = _clean(text[pos:end])
            for m in _TYPE_BEFORE_DIMS.finditer(shape):
                if m.group(1) not in ELEMENT_TYPES:
                    raise self.error(HloParseError, f"unknown element type '{m.group(1)}'",
                                     pos + max(text.find(m.group(1), pos, end) - pos, 0))
            return end, shape
        w = self.word(pos)
        if w is None:
            return pos, None
        q = self.skip(w.end())
        if w.group() == "b" and text.startswith("(", q):
            return self._buffer_shape(pos, q)
        if not text.startswith("[", q):
            return pos, None
        if w.group() not in ELEMENT_TYPES:
            raise self.error(HloParseError, f"unknown element type '{w.group()}'", pos)
        end = self.group_end(q)
        if _DIMS.fullmatch(_clean(text[q:end])) is None:
            raise self.error(HloParseError, "expected dimension sizes (numbers, '<=N' or '?') between '[' and ']'", q)
        r = self.skip(end)
        first = self.skip(r + 1)
        if text.startswith("{", r) and (text[first : first + 1] in _LAYOUT_FIRST or (
            text.startswith("-", first) and text[first + 1 : first + 2].isdigit()  # XLA reads {-1,0} too
        )):
            end = self.group_end(r)  # a layout (a body's '{' is followed by a name)
            shape = _clean(text[pos:end])
            # its numbers with one ',' between each two, and its sections, as the line reader
            # reads them (their count against the dimensions is strict mode's)
            problem = shape_syntax_error(shape, counted=False)
            if problem is not None:  # (at the problem, when the text is the shape as written)
                at = pos + problem[0] if shape == text[pos:end] else r
                raise self.error(HloParseError, f"malformed layout in '{shape}': {problem[1]}", at)
            return end, shape
        return end, _clean(text[pos:end])

    def _buffer_shape(self, pos: int, q: int) -> tuple[int, str]:
        """``b(f32[2]{0})``, a buffer shape (``b`` at ``pos``, its ``(`` at ``q``): one array shape
        (not a token's or an opaque one's)."""
        inner = self.skip(q + 1)
        end, shape = self._shape(inner)
        if shape is None or shape.startswith("(") or is_buffer_start(shape, 0) or element_type_of(shape).rstrip() in NON_ARRAY_TYPES:
            raise self.error(HloParseError, "a buffer shape holds one array shape", inner)
        close = self.skip(end)
        if not self.text.startswith(")", close):
            raise self.error(HloParseError, "expects ')' at the end of buffer shape.", close)
        return close + 1, _clean(self.text[pos : close + 1])

    def _instruction(self, pos: int) -> tuple[dict, int, list[dict]]:
        """The instruction whose first token is at ``pos``: its fields (the arguments of
        :meth:`Instruction.from_text_span` but its place), where its last token ends, and the
        fields of the instructions written inside its operand list, in the order XLA's parser
        makes them (innermost first)."""
        text = self.text
        is_root = False
        w = self.word(pos)
        if w is not None and w.group() == "ROOT" and not text.startswith("=", w.end()):
            after = self.skip(w.end())
            if not text.startswith("=", after):  # 'ROOT = ...' names an instruction ROOT
                is_root = True
                pos = after
        name_at = pos
        pct = text.startswith("%", pos)
        w = self.word(pos + pct)
        if w is None:
            raise self.error(HloParseError, f"expected an instruction name, found {self._found(pos)}", pos)
        if not pct and text.startswith("=", w.end()):
            raise self.error(HloParseError, f"'{w.group()}=' reads as an attribute name: write a blank before '=' "
                             "(or '%' before the name)", w.end())
        name = w.group()
        if (problem := instruction_name_problem(name)) is not None:
            raise self.error(HloParseError, problem, name_at)
        pos = self.expect(w.end(), "=", f"after the instruction name '{name}'")
        nested: list[dict] = []
        fields, last = self._rhs(self.skip(pos), nested, True)
        fields["name"] = name
        fields["is_root"] = is_root
        fields["line"], fields["column"] = self.place(name_at)
        self.names_read.add(name)
        return fields, last, nested

    def _rhs(self, pos: int, nested: list[dict], allow_attributes: bool) -> tuple[dict, int]:
        """What follows ``name =``, from ``pos``: shape, opcode, operands and (when
        ``allow_attributes``) attributes; the fields read and where the last token ends. An
        instruction written as an operand (``add(f32[] negate(x), y)``) has no attributes: XLA's
        parser could not tell its ``,`` from the operand list's."""
        text = self.text
        shape_end, shape = self._shape(pos)
        pos = self.skip(shape_end)
        w = self.word(pos)
        if w is None:
            raise self.error(HloParseError, f"expected an opcode, found {self._found(pos)}", pos)
        opcode = w.group()
        if spec_of(opcode) is None:  # an opcode, or an async spelling such as custom-call-start
            raise self.error(HloParseError, unknown_opcode_message(opcode), pos)
        opened = self.expect(w.end(), "(", f"after the opcode '{opcode}'")
        close = self.group_end(opened - 1)
        inner = text[opened : close - 1]
        payload = None
        operands: list[str] = []
        inline: list[tuple[int, int, str]] = []
        if opcode in PAYLOAD_OPCODES:
            payload = inner
        else:
            operands = self._operands(inner, opened, nested, inline)
        last = close
        attrs: list[tuple[str, str]] = []
        attrs_start = -1
        callees: list[tuple[int, tuple[bool, list]]] = []
        while allow_attributes:
            p = self.skip(last)
            if not text.startswith(",", p):
                break
            if attrs_start < 0:
                attrs_start = p
            attr, last, written = self._attribute(p)
            if written is not None:
                callees.append((len(attrs), written))
            attrs.append(attr)
        fields: dict[str, object] = {
            "opcode": OPCODE_SPELLINGS.get(opcode, opcode), "shape": shape, "operands": operands, "attrs": attrs,
            "attrs_span": (attrs_start if attrs_start >= 0 else last, last), "payload": payload,
        }
        if inline:
            fields["inline"] = tuple(inline)
        if callees:
            fields["callees"] = callees
        return fields, last

    def _operands(self, inner: str, base: int, nested: list[dict], inline: list[tuple[int, int, str]]) -> list[str]:
        """Operand names from the text between an opcode's parentheses (at offset ``base``).
        An operand written as an instruction (XLA's nested form) is read into ``nested`` under
        the name XLA's parser gives it, and its place into ``inline``."""
        if not inner.strip() or not _clean(inner):
            return []
        names: list[str] = []
        for piece, at in _split_top_level(inner):
            cleaned = _clean(piece).strip()
            if not cleaned:
                raise self.error(HloParseError, "expected an operand after ','",
                                 base + at + len(piece) - len(piece.lstrip()))
            m = _OPERAND_NAME.search(cleaned)
            if m is None and cleaned.endswith(")"):
                name = self._nested(base + at, base + at + len(piece), nested, inline)
                if name is not None:
                    names.append(name)
                    continue
            if m is None and (cleaned.startswith("(") or _TYPE_BEFORE_DIMS.match(cleaned)):
                if self.implied is None:
                    # XLA's parser reads the shape and drops the operand
                    raise self.error(HloParseError, f"operand has a shape but no name: '{cleaned.strip()[:40]}'",
                                     base + at + len(piece))
                # in a text that is one instruction, a shape written alone: a parameter of its own, '_N'
                first = self.skip(base + at)
                fields = self._implied("", cleaned, first)
                nested.append(fields)
                inline.append((first, self._shape(first)[0], fields["name"]))
                names.append(fields["name"])
                continue
            if m is None:
                raise self.error(HloParseError, f"expected an operand name, found {cleaned[:40]!r}",
                                 base + at + len(piece) - len(piece.lstrip()))
            before = cleaned[: m.start()].strip()
            name = m.group(2)
            where = base + at + max(piece.rfind(name), 0)
            if before:
                if not (before.startswith("(") or _TYPE_BEFORE_DIMS.match(before) or is_buffer_start(before, 0)):
                    raise self.error(HloParseError, f"expected an operand, found {cleaned[:40]!r}",
                                     base + at + len(piece) - len(piece.lstrip()))
            elif not m.group(1) and name in ELEMENT_TYPES:
                # XLA's lexer reads the word as an element type and drops the operand
                raise self.error(HloParseError, f"operand '{name}' is spelled like an element type; write it "
                                 f"'%{name}' (XLA's parser does not read it as an operand)", where)
            if self.implied is not None and name not in self.names_read:
                if not before:
                    raise self.error(HloParseError, f"operand '{name}' has no shape: in a text that is one "
                                     "instruction, an operand it does not define names its shape (XLA: "
                                     "\"Operand had no shape in HLO text\")", where)
                nested.append(self._implied(name, before, where))
            names.append(name)
        return names

    def _nested(self, start: int, end: int, nested: list[dict], inline: list[tuple[int, int, str]]) -> str | None:
        """The operand from ``start`` to ``end`` as an instruction written in place (``[shape]
        opcode(operands)``, no name, no attributes): read into ``nested``; its name, or None when
        the operand is not written so."""
        text = self.text
        pos = self.skip(start)
        shape_end, shape = self._shape(pos)
        q = self.skip(shape_end)
        w = self.word(q)
        if w is None or not text.startswith("(", self.skip(w.end())) or self.skip(w.end()) >= end:
            return None
        if self.implied is not None and shape is not None and w.group() not in self.names_read:
            # XLA's parser first reads 'shape opcode' as an operand it does not know, and makes a
            # parameter of that name before it reads the instruction instead
            nested.append(self._implied(w.group(), shape, q))
        fields, last = self._rhs(pos, nested, False)
        after = self.skip(last)
        opcode = fields["opcode"]
        spec = spec_of(opcode)
        if spec is not None and split_async_opcode(opcode) is None:
            for a in spec.attrs.values():
                if a.required:
                    raise self.error(HloParseError, f"attribute {a.name} is expected but not seen: '{opcode}' is "
                                     "written as an operand, and such an instruction takes no attributes", after)
        if after < end:
            raise self.error(HloParseError, f"expected ',' or ')' after the instruction written as an operand "
                             f"('{fields['opcode']}(...)'), found {self._found(after)}: such an instruction takes "
                             "no attributes", after)
        name = self._anonymous_name(fields["opcode"])
        line, column = self.place(pos)
        fields.update(name=name, is_root=False, line=line, column=column, anon=(pos, last))
        nested.append(fields)
        inline.append((pos, last, name))
        return name

    def _anonymous_name(self, opcode: str) -> str:
        """The name XLA's parser gives an instruction written as an operand: ``opcode.anon``, or
        with ``.1``, ``.2``, ... when the module has that name already (its name uniquer knows
        every name read before)."""
        taken = self.names_read
        base = f"{opcode}.anon"
        name = base
        n = 0
        while name in taken:
            n += 1
            name = f"{base}.{n}"
        taken.add(name)
        return name

    # ------------------------------------------------------------------ checks
    def _check_operands(self, comp: Computation, instructions: list[Instruction],
                        by_name: dict[str, Instruction], label: str) -> None:
        seen: set[str] = set()
        for instr in instructions:
            for op in instr.operands:
                if op not in seen:
                    at = self._name_offset(instr, op)
                    if op not in by_name:
                        raise self.error(HloVerifyError, f"operand '{op}' of '{instr.name}' is not defined in "
                                         f"{label}", at)
                    raise self.error(HloVerifyError, f"operand '{op}' of '{instr.name}' is used before its "
                                     f"definition on line {by_name[op].line} (each operand must be defined before "
                                     "its use)", at)
            seen.add(instr.name)

    def _name_offset(self, instr: Instruction, name: str) -> int:
        """Offset of ``name`` in the instruction's text (its name's offset when not found)."""
        span = instr.source_span
        assert span is not None
        m = re.compile(r"(?<![A-Za-z0-9_.\-])" + re.escape(name) + r"(?![A-Za-z0-9_.\-])").search(
            self.text, span[0], span[1])
        if m is None:
            return self.starts[instr.line - 1] + instr.column - 1
        return m.start()

    def _check_callees(self) -> None:
        # a computation written inline has no name to be called by but in its holder's value
        known = {c.name for c in self.module.computations if c.inline_in is None}
        for comp, instr in self.callers:
            if instr.opcode not in NON_CALLER_OPCODES:
                own = {c.name for c in instr.inline_callees or ()}
                for callee in attributes.called_computation_names(instr.attrs):
                    if callee not in known and callee not in own:
                        raise self.error(HloVerifyError, f"'{instr.name}' calls computation '{callee}', which is not "
                                         "defined", self._name_offset(instr, callee))
            for key, value in instr.attrs:
                if key == "control-predecessors":
                    for pred in attributes.name_list(value):
                        if pred not in comp.by_name:
                            raise self.error(HloVerifyError, f"control predecessor '{pred}' of '{instr.name}' is not "
                                             f"defined in computation '{comp.name}'", self._name_offset(instr, pred))


def _split_top_level(text: str) -> list[tuple[str, int]]:
    """``text`` cut at the commas outside brackets, strings and comments: (piece, offset)."""
    pieces = []
    at = 0
    for piece in split_top_level(text):
        pieces.append((piece, at))
        at += len(piece) + 1
    return pieces


def read_tokens(text: str, filename: str | None) -> Module:
    """Read ``text`` token by token into a :class:`Module` (every computation built)."""
    return TokenReader(text, filename).run()


def header_last(text: str, after_word: int, filename: str | None = None) -> int:
    """The end of the last token of the module header whose ``HloModule`` ends at ``after_word``."""
    return TokenReader(text, filename).header_last(after_word)
