"""The line reader: the fast path from HLO text as XLA prints it to a
:class:`~hlo_rewrite.ir.Module`.

XLA prints one instruction per line, so the line reader walks the text line by
line, joins the rare instruction that wraps over several lines (brackets not
yet balanced), and reads each instruction's skeleton with a few regular
expressions: ``[ROOT] name = shape opcode(operands)`` and the attribute text
after it, which is kept as it is. Whatever these expressions do not accept is
handed to the grammar of record (:mod:`hlo_rewrite.syntax`), which either
reads it or raises an error pointing at the exact line and column. With
``strict=True`` every computation is built, for :mod:`hlo_rewrite.strict` to
check the module against what XLA's parser accepts.

While scanning, the structural rules are checked: every operand and called
computation is defined, names are unique in their computation, at most one
ROOT per computation and one ENTRY per module, and every opcode is one XLA knows.

Text this reader cannot vouch for (two instructions on one line, an instruction continued
after a trailing comma, ...) raises :class:`NotPlain` or an error; :func:`hlo_rewrite.reader.
parse_module` then reads the module with the token reader (:mod:`.general`), which reads
whatever XLA's parser reads.
"""

from __future__ import annotations

import gc
import re
from bisect import bisect_right
from sys import intern
from typing import TYPE_CHECKING

from .. import attributes
from ..errors import HloError, HloParseError, HloVerifyError
from ..ir import Computation, Instruction, Module
from ..lexicon import STACK_TABLES, instruction_name_problem
from ..opcodes import CALLEE_ATTRS, CALLEE_LIST_ATTRS, split_async_opcode
from ..printer import detect_style
from ..regex import lazy_pattern
from ..shapes import ELEMENT_TYPES
from .block import OPCODE_SETS, BodyChecker, build_block, callees_plainly_known, top_level
from .checks import header_problem, unknown_opcode_message
from .lazy import NOTED_OPCODES, LazyBody
from .lines import Lines
from .parallel import MISSING, Prechecked

if TYPE_CHECKING:
    from ..syntax import InstructionSyntax
from .patterns import (
    ARRAY_SHAPE,
    CALLEE_RE,
    COMMENT,
    COMMON_HEAD,
    COMP_START,
    EXPLAIN_LIMIT,
    HEADER_LAYOUT,
    INDEXED_OPERAND,
    INDEXED_OPERAND_LIST,
    INSTR_HEAD,
    LINE,
    MODULE_NAME,
    NAME_FIND,
    NAMES_ONLY,
    NEW_INSTRUCTION,
    NON_CALLER_OPCODES,
    OPCODE,
    OPCODE_SPELLINGS,
    OPERAND_ITER,
    PAREN_OR_QUOTE,
    PAYLOAD_OPCODES,
    STRING,
)


class GrammarError(HloParseError):
    """An error the grammar of record found in one instruction the line reader handed it: a
    located syntax error in general terms, which the token reader may state more precisely."""


def _grammar_reads(text: str, filename: str | None, line: int) -> InstructionSyntax:
    from .. import syntax

    try:
        return syntax.parse_instruction(text, filename=filename, line=line)
    except HloParseError as exc:
        if _at_inline_computation(text, (exc.line or line) - line, exc.column or 1):
            raise NotPlain from None  # the grammar reads a callee's name only: the token reader reads it
        raise GrammarError(exc.message, filename=exc.filename, line=exc.line, column=exc.column,
                           source_line=exc.source_line) from None


#: a callee attribute's '=' then '{' (a computation written inline, or a list of callees)
_INLINE_CALLEE = lazy_pattern(r"\b(?:" + "|".join(sorted(CALLEE_ATTRS | CALLEE_LIST_ATTRS)) + r")=\s*\Z")


def _at_inline_computation(text: str, line: int, column: int) -> bool:
    """Whether the place (``line`` lines into ``text``, ``column``) is the ``{`` of a callee
    attribute's value where the grammar reads none (it reads names, and lists of names, only):
    XLA reads a computation written there."""
    at = 0
    for _ in range(line):
        at = text.find("\n", at) + 1
        if at == 0:
            return False
    at += column - 1
    return text.startswith("{", at) and _INLINE_CALLEE.search(text, 0, at) is not None


class NotPlain(Exception):
    """The text is not in the form this reader vouches for (the token reader reads it)."""



class _FastFail(Exception):
    """The fast path does not accept this text; ask the grammar."""


def _header_braces(line: str) -> tuple[int, int]:
    """How many '{' and '}' a header line holds outside its layouts."""
    bare = HEADER_LAYOUT.sub("]", line)
    return bare.count("{"), bare.count("}")


def _depth_delta(line: str) -> int:
    """Opening minus closing brackets on one line, strings and comments ignored.

    A line whose brackets balance when strings are counted too is taken as
    balanced without looking inside its strings: an unbalanced line could only
    look balanced if a string on it closed more brackets than it opened by
    exactly the amount the line leaves open, and then the next line, read as an
    instruction of its own, fails with a located error rather than passing.
    """
    d = (
        line.count("(") + line.count("{") + line.count("[")
        - line.count(")") - line.count("}") - line.count("]")
    )
    if d == 0 or ('"' not in line and "/" not in line):
        return d  # balanced, or nothing on the line to leave out
    if '"' in line:
        line = STRING.sub("", line)
    if "/" in line:
        if "/*" in line:
            line = COMMENT.sub("", line)
        cut = line.find("//")
        if cut >= 0:
            line = line[:cut]
    return (
        line.count("(") + line.count("{") + line.count("[")
        - line.count(")") - line.count("}") - line.count("]")
    )


def _match_paren(text: str, pos: int) -> int:
    """``text[pos]`` is '('; index just past its matching ')'."""
    depth = 0
    search = PAREN_OR_QUOTE.search
    m = search(text, pos)
    while m is not None:
        ch = m.group()
        i = m.start()
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        else:
            try:
                i = attributes.skip_string(text, i) - 1
            except ValueError:
                raise _FastFail from None
        m = search(text, i + 1)
    raise _FastFail


def _close_operands(text: str, pos: int) -> int:
    """``pos`` is just after the opcode's '('; index of the matching ')'."""
    close = text.find(")", pos)
    if close < 0:
        raise _FastFail
    opening = text.find("(", pos, close)
    if opening < 0 and text.find('"', pos, close) < 0:
        return close
    return _match_paren(text, pos - 1) - 1


def _scan_instruction(body: str) -> tuple:
    """Read the skeleton of one instruction (text without its newline)."""
    m = COMMON_HEAD.match(body)
    if m is not None:
        root, pct, name, shape, opcode = m.groups()
        if shape is None or shape[: shape.index("[")] in ELEMENT_TYPES:
            pos = m.end()
            close = _close_operands(body, pos)
            column = m.start(3) + 1 - len(pct)
            if opcode in PAYLOAD_OPCODES:
                return name, pct, root is not None, shape, opcode, [], close + 1, body[pos:close], column
            inner = body[pos:close]
            if NAMES_ONLY.fullmatch(inner) is not None:
                operands = NAME_FIND.findall(inner)
            else:
                operands = _read_operands(inner)
            return name, pct, root is not None, shape, opcode, operands, close + 1, None, column
    m = INSTR_HEAD.match(body)
    if m is None:
        raise _FastFail
    is_root = m.group(1) is not None
    pct = m.group(2)
    name = m.group(3)
    pos = m.end()
    shape = None
    if body.startswith("(", pos):
        end = _match_paren(body, pos)
        shape = body[pos:end]
        pos = end
    else:
        ms = ARRAY_SHAPE.match(body, pos)
        if ms is not None and ms.group(1) in ELEMENT_TYPES:
            shape = ms.group()
            pos = ms.end()
    if shape is not None:
        n = len(body)
        start = pos
        while pos < n and body[pos] in " \t":
            pos += 1
        if pos == start:
            raise _FastFail
    mo = OPCODE.match(body, pos)
    if mo is None:
        raise _FastFail
    opcode = mo.group(1)
    pos = mo.end()
    close = _close_operands(body, pos)
    inner = body[pos:close]
    payload = None
    if opcode in PAYLOAD_OPCODES:
        payload = inner
        operands = []
    elif not inner.strip():
        operands = []
    else:
        operands = _read_operands(inner)
    column = m.start(3) + 1 - len(pct)
    return name, pct, is_root, shape, opcode, operands, close + 1, payload, column


def _read_operands(inner: str) -> list[str]:
    """Operand names from the text between an opcode's parentheses."""
    if not inner or inner.isspace():
        return []
    if "/*" in inner:
        if INDEXED_OPERAND_LIST.fullmatch(inner) is not None:
            return INDEXED_OPERAND.findall(inner)  # bare names with XLA's /*index=N*/
        inner = COMMENT.sub("", inner)
    if inner.lstrip().startswith(","):
        raise _FastFail
    names = []
    pos = 0
    for mm in OPERAND_ITER.finditer(inner):
        if mm.start() != pos:
            raise _FastFail
        names.append(mm.group(1))
        pos = mm.end()
    if pos != len(inner) or not names:
        raise _FastFail
    return names


def _check_one_instruction(attrs: str) -> None:
    """Raise :class:`NotPlain` unless ``attrs`` (the text after an operand list) can only be
    attributes: it is empty or starts with ``,``, and holds no `` =`` (the head of an
    instruction as XLA prints it) that could start a second instruction."""
    rest = attrs.lstrip(" \t\r\n")
    if rest and rest[0] != "," and not rest.startswith("//"):
        raise NotPlain
    last = rest.rstrip(" \t\r\n")
    if last.endswith((",", "=")):
        raise NotPlain  # the attributes continue on the next line
    if last.endswith("ROOT"):
        raise NotPlain  # XLA's lexer reads the word as the start of the next line's instruction
    if " =" in attrs or "\t=" in attrs:
        top = top_level(attrs)
        if " =" in top or "\t=" in top:
            raise NotPlain


def _name_end(line: str, name: str) -> int:
    """Offset just past the instruction name ``name`` on its first line."""
    at = line.find(name)
    return at + len(name) if at >= 0 else 0


def _name_column(line: str) -> int:
    """1-based column of the instruction name on a line (with its '%')."""
    m = INSTR_HEAD.match(line)
    return m.start(3) + 1 - len(m.group(2)) if m is not None else 1


def _line_operands(inner: str) -> list[str] | None:
    """Operand names of a one-line instruction, or None to take the slow path."""
    if not inner:
        return []
    if NAMES_ONLY.fullmatch(inner) is not None:
        return NAME_FIND.findall(inner)
    try:
        return _read_operands(inner)
    except _FastFail:
        return None


def _may_name_computations(opcode: str, attrs: str, maybe_control: bool) -> bool:
    """Whether an instruction's attribute text may name called computations or
    control predecessors (only looked for when the text has the word anywhere), which
    are then checked once all computations are known."""
    if opcode not in NON_CALLER_OPCODES and CALLEE_RE.search(attrs) is not None:
        return True
    return maybe_control and "control-predecessors" in attrs


class Scanner:
    """Turns HLO text into a Module (one use per text)."""

    #: check the body of a computation that is not built yet in one pass over its
    #: text when it allows (tests turn it off to compare with the line-by-line reading)
    check_blocks = True

    def __init__(
        self, text: str, filename: str | None, strict: bool, *, module: Module | None = None,
        prechecked: Prechecked | None = None, build_entry_for: frozenset[str] = frozenset(),
    ) -> None:
        """A reader of ``text``; with ``module`` (read from ``text`` before), one that builds
        that module's unbuilt computations. ``prechecked`` are the workers checking the
        bodies of a large module (:mod:`.parallel`); the reader ends them when it is done.
        ``build_entry_for``: opcodes for which ENTRY's instructions are wanted; when a worker
        checked ENTRY and it holds one, they are built as soon as that worker's findings are in
        (:meth:`_build_entry_early`)."""
        self.text = text
        self.filename = filename
        self.strict = strict
        if module is None:
            # the line starts a worker found for the reader, else found here
            self.lines = Lines(text, None if prechecked is None else prechecked.line_starts(len(text)))
            self.module = Module(text, filename)
            self.module.line_starts = self.lines.starts
        else:
            self.lines = Lines(text, module.line_starts)
            self.module = module
        self.instruction_count = 0
        # (computation, instruction name) of instructions with attributes naming
        # computations or control predecessors, checked once all are known
        # and the 0-based line each is on
        self.callers: list[tuple[Computation, str, int]] = []
        self.bodies = BodyChecker.of(text, self.lines.starts, self.module.source_has)
        # whether the text has comments or control predecessors anywhere (one
        # look at the whole text spares a look into every computation)
        self.maybe_tabs = self.bodies.tabs
        self.maybe_comments = self.bodies.comments
        self.maybe_control = self.bodies.control
        self.prechecked = prechecked  # what worker processes found (parallel.start)
        # ENTRY's body offsets and the instructions built for them before it is reached
        self._entry_built: tuple[tuple[int, int], Computation] | None = None
        self._build_entry_for = build_entry_for
        if prechecked is not None and build_entry_for:
            prechecked.when_first_in(self._build_entry_early)

    # ------------------------------------------------------------------ helpers
    def _raw(self, i: int) -> str:
        return self.text[self.lines.start(i) : self.lines.end(i)]

    def _raw_block(self, i: int, j: int) -> str:
        return self.text[self.lines.start(i) : self.lines.end(j)]

    def error(self, cls: type[HloError], message: str, line: int, column: int | None = 1) -> HloError:
        src = self.lines[line - 1] if 0 < line <= len(self.lines) else None
        return cls(message, filename=self.filename, line=line, column=column, source_line=src)

    def located(self, cls: type[HloError], message: str, offset: int) -> HloError:
        """An error at an offset into the text."""
        line = bisect_right(self.lines.starts, offset)
        return self.error(cls, message, line, offset - self.lines.starts[line - 1] + 1)

    def _gather(self, i: int, in_body: bool = False) -> int:
        """Index of the last line of the bracket-balanced item starting at line ``i``.

        In a computation body, a line that starts a new instruction or closes
        the body cannot continue the item: the item itself is unbalanced.
        """
        depth = _depth_delta(self.lines[i])
        j = i
        n = len(self.lines)
        while depth > 0:
            j += 1
            if in_body and j < n and (
                self.lines[j].rstrip() == "}" or NEW_INSTRUCTION.match(self.lines[j]) is not None
            ):
                self._grammar_error(i, i)
                line = self.lines[i]
                raise self.error(
                    HloParseError,
                    "unbalanced brackets: a bracket opened on this line is never closed",
                    i + 1,
                    len(line) - len(line.lstrip()) + 1,
                )
            if j >= n:
                raise self.error(
                    HloParseError,
                    "unbalanced brackets: this item is never closed before the end of the input",
                    i + 1,
                    len(self.lines[i]) - len(self.lines[i].lstrip()) + 1,
                )
            depth += _depth_delta(self.lines[j])
        if depth < 0:
            self._grammar_error(i, j)
            raise self.error(HloParseError, "unbalanced brackets: too many closing brackets", j + 1)
        return j

    def _grammar_error(self, i: int, j: int) -> None:
        """Let the grammar explain what is wrong with lines i..j (raises)."""

        text = self.lines.block(i, j)
        if len(text) > EXPLAIN_LIMIT:
            return  # the grammar needs about a minute for 10 MB: the caller's own message will do
        _grammar_reads(text, self.filename, i + 1)

    # --------------------------------------------------------------------- scan
    def run(self) -> Module:
        try:
            return self._run()
        finally:
            if self.prechecked is not None:
                self.prechecked.close()
                self.prechecked = None

    def _run(self) -> Module:
        text = self.text
        if "\x00" in text:
            off = text.index("\x00")
            nul_line = text.count("\n", 0, off) + 1
            nul_col = off - (text.rfind("\n", 0, off) + 1) + 1
            raise self.error(HloParseError, "NUL byte in the input: this is not HLO text", nul_line, nul_col)
        if not text or text.isspace():  # (no stripped copy of a whole module)
            raise HloParseError("empty input: expected an HLO module", filename=self.filename, line=1, column=1, source_line="")
        mod = self.module
        lines = self.lines
        n = len(lines)
        pending: list[str] = []
        i = 0
        seen_header = False
        entry_seen = False
        comp_names: set[str] = set()
        starts = lines.starts
        while i < n:
            if starts[i + 1] - starts[i] == 1 and i + 1 < n:
                pending.append("\n")  # an empty line (most often between computations)
                i += 1
                continue
            line = text[starts[i] : starts[i + 1] - 1]
            # a computation's header as XLA prints it: none of the other kinds of line starts
            # so (they start with blanks, '/', 'HloModule', a section word or a digit)
            m = COMP_START.match(line) if line.startswith(("%", "ENTRY")) else None
            if m is None:
                stripped = line.strip()
                if not stripped or stripped.startswith("//"):
                    pending.append(self._raw(i))
                    i += 1
                    continue
                if stripped.startswith("/*") and stripped.endswith("*/") and "*/" not in stripped[2:-2]:
                    pending.append(self._raw(i))
                    i += 1
                    continue
                if stripped.startswith("HloModule") and (len(stripped) == 9 or stripped[9] in " \t"):
                    if seen_header or mod.computations:
                        raise self.error(HloParseError, "a second 'HloModule' header", i + 1)
                    m = MODULE_NAME.match(line)
                    if m is None:
                        raise NotPlain  # the name on a later line (XLA's lexer reads it there), or none
                    mod.name = m.group(1)
                    seen_header = True
                    j = self._gather(i)
                    # not as XLA prints it: perhaps a computation follows (or its ENTRY, its name on
                    # the next line)
                    if j > i or line.rstrip().endswith("{") or "ENTRY" in line:
                        from .general import header_last  # rare: not as XLA prints it

                        last = header_last(text, starts[i] + line.index("HloModule") + 9, self.filename)
                        if text[last : lines.end(j)].strip():
                            raise NotPlain  # something follows the header on its line
                    problem = header_problem(text, starts[i], lines.end(j))
                    if problem is not None and problem[1] >= lines.end(j):
                        raise NotPlain  # a value after the header's lines: the token reader reads it
                    if problem is not None:
                        raise self.located(HloParseError, problem[0], problem[1])
                    pending.append(self._raw_block(i, j))
                    i = j + 1
                    continue
                if stripped.startswith(STACK_TABLES) or stripped[0].isdigit():
                    # stack-frame tables (FileNames ... StackFrames): kept verbatim
                    j = self._gather(i)
                    pending.append(self._raw_block(i, j))
                    i = j + 1
                    continue
                m = COMP_START.match(line)
                if m is None and mod.name is None and not mod.computations:
                    raise NotPlain  # no header, no computation: perhaps a text that is one instruction
                if m is None:
                    self._grammar_error(i, i)
                    raise self.error(
                        HloParseError, f"expected a computation or 'HloModule', found {stripped[:40]!r}", i + 1,
                        len(line) - len(line.lstrip()) + 1,
                    )
            if pending:
                mod.pieces.append("".join(pending))
                pending = []
            start = i
            i = self._computation(i, m, comp_names)
            comp = mod.computations[-1]
            comp.source_span = (starts[start], min(starts[i], len(text)))
            if comp.is_entry:
                if entry_seen:
                    raise self.error(HloVerifyError, "a second ENTRY computation: a module has only one", comp.line)
                entry_seen = True
        if pending:
            mod.pieces.append("".join(pending))
        if not mod.computations:
            raise self.error(HloParseError, "expected a computation, found the end of the input", n, len(lines[-1]) + 1)
        self._check_callees()
        return mod

    def _computation(
        self, i: int, m: re.Match, comp_names: set[str], into: Computation | None = None
    ) -> int:
        """Read the computation whose header starts on line ``i``; returns the
        line after it. Unless ``strict`` or it is ENTRY, only the checks run
        and the instruction objects are built later, on first use (``into`` is
        then the computation to fill)."""
        lines = self.lines
        starts = lines.starts
        text = self.text
        n = len(starts) - 1
        name = m.group(2)
        # the header runs until a line that ends with '{' with brackets balanced
        depth = 0
        j = i
        while True:
            line = text[starts[j] : starts[j + 1] - 1]
            depth += _depth_delta(line)
            if depth == 1 and line.rstrip().endswith("{"):
                if (line.count("{") > 1 or "}" in line) and _header_braces(line) != (1, 0):
                    raise NotPlain  # a body opened (and perhaps closed) before the line's end
                break
            if ("{" in line or "}" in line) and _header_braces(line) != (0, 0) or depth <= 0 and j > i:
                raise NotPlain  # a body opened mid-line, or no '{' where expected: the token reader reads it
            j += 1
            if j >= n:
                raise NotPlain
        # strict mode builds every computation (its checks look at every instruction); otherwise
        # a computation, ENTRY too, is built on first use (a pass asks its opcodes first)
        build = self.strict or into is not None
        if into is not None:
            comp = into
        else:
            if name in comp_names:
                raise self.error(HloVerifyError, f"computation '{name}' is defined twice", i + 1, m.start(2) + 1)
            comp_names.add(name)
            comp = Computation(
                name,
                is_entry=m.group(1) is not None,
                head_length=min(starts[j + 1], len(text)) - starts[i],
                line=i + 1,
            )
            self.module.add_computation(comp)
        i = j + 1
        if not build and self.check_blocks:
            after = self._check_block(comp, i, comp_names)
            if after is not None:
                return after
        prefix: list[str] = []
        forward: list[tuple[str, str, int, int]] = []  # operand, user, line, column
        forward_names: list[str] = []
        opcodes = OPCODE_SPELLINGS
        root_seen: tuple[str, int] | None = None  # name and line of the ROOT
        strict = self.strict
        # building: name -> instruction; checking only: name -> line
        by_name: dict = {}
        instructions: list[Instruction] = []
        count = 0
        opcodes_seen: set[str] = set()
        noted: list[tuple[str, str, int]] = []
        text = self.text
        starts = lines.starts
        new_instruction = Instruction.from_scan
        line_re = LINE.match
        maybe_tabs, maybe_control = self.maybe_tabs, self.maybe_control
        while True:
            if i >= n:
                raise self.error(
                    HloParseError,
                    f"computation '{name}' is not closed: expected '}}' before the end of the input",
                    comp.line,
                )
            start = starts[i]
            lm = line_re(text, start)
            operands = None
            if lm is not None:
                # the common case: one complete instruction on this line
                root, pct, iname, shape, opcode, inner, attrs = lm.groups()
                if (
                    (shape is None or shape[: shape.index("[")] in ELEMENT_TYPES)
                    and attrs.count("{") == attrs.count("}")
                    and attrs.count("(") == attrs.count(")")
                    and attrs.count("[") == attrs.count("]")
                    and "/*" not in attrs
                    and iname not in by_name
                    and (not attrs or attrs[0] == "," or attrs == "\r")
                    and " =" not in attrs
                    and not (maybe_tabs and "\t=" in attrs)
                    and not attrs.rstrip().endswith("ROOT")  # it marks the next line's instruction
                ):
                    if opcode in PAYLOAD_OPCODES or not inner:
                        operands = []
                    elif NAMES_ONLY.fullmatch(inner) is not None:
                        operands = NAME_FIND.findall(inner)
                    else:
                        operands = _line_operands(inner)  # type: ignore[assignment]
            fast = operands is not None  # and so lm is not None
            if fast:
                j = i
                is_root = root is not None
                calls = _may_name_computations(opcode, attrs, maybe_control)
                calls_text = attrs
                if build:
                    assert lm is not None
                    col = lm.start(3) + 1 - len(pct) - start
                    attrs_at = lm.start(7) - start
                    payload = inner if opcode in PAYLOAD_OPCODES else None
                    body = lm.group().rstrip("\r") if strict else ""
                else:
                    col = 0  # worked out from the line if an error needs it
            else:
                line = text[start : starts[i + 1] - 1]
                stripped = line.lstrip()
                if not stripped or stripped.startswith("//") or stripped[0] == "\r":
                    prefix.append(self._raw(i))
                    i += 1
                    continue
                if stripped[0] == "}":
                    j = self._gather_tail(i)
                    comp.tail = "".join(prefix) + self._raw_block(i, j)
                    i = j + 1
                    break
                delta = _depth_delta(line)
                if delta > 0 and line.rstrip().endswith("{"):
                    mc = COMP_START.match(line)
                    if mc is not None and "=" not in line[: mc.end()]:
                        raise self.error(
                            HloParseError,
                            f"computation '{name}' (line {comp.line}) is not closed: expected '}}' "
                            f"before computation '{mc.group(2)}' starts",
                            i + 1, len(line) - len(stripped) + 1,
                        )
                if delta == 0:
                    j = i
                    body = line[:-1] if line.endswith("\r") else line
                else:
                    j = self._gather(i, in_body=True)
                    body = lines.block(i, j).rstrip("\r")
                try:
                    iname, pct, is_root, shape, opcode, operands, attrs_at, payload, col = _scan_instruction(body)
                except _FastFail:
                    iname, pct, is_root, shape, opcode, operands, attrs_at, payload, col = self._slow_instruction(
                        body, i
                    )
                if iname in by_name:
                    raise self.error(
                        HloVerifyError, f"instruction '{iname}' is defined twice in computation '{name}'", i + 1, col
                    )
                if "/*" in body and body.count("/*", attrs_at) > body.count("*/", attrs_at):
                    self._grammar_error(i, j)  # an unterminated comment: the grammar locates it
                calls_text = body[attrs_at:]
                _check_one_instruction(calls_text)
                calls = _may_name_computations(opcode, calls_text, maybe_control)
            # both paths: check the instruction against what came before (and build it)
            if not pct and text[lm.end(3) if fast and lm is not None else starts[i] + _name_end(lines[i], iname)] == "=":
                raise NotPlain  # 'name=' is an attribute name to XLA's lexer: the token reader says so
            if (iname in ELEMENT_TYPES or iname[0] == "_") and (problem := instruction_name_problem(iname)):
                raise self.error(HloParseError, problem, i + 1, col or _name_column(lines[i]))
            if opcode not in OPCODE_SPELLINGS and split_async_opcode(opcode) is None:
                line = lines[i]
                at = line.find(opcode + "(")
                raise self.error(HloParseError, unknown_opcode_message(opcode), i + 1, at + 1 if at >= 0 else 1)
            if build:
                ops: list[str] = []
                for op in operands:
                    producer = by_name.get(op)
                    if producer is None:
                        forward_names.append(op)  # defined later, or nowhere: checked at '}'
                        ops.append(op)
                    else:
                        ops.append(producer.name)  # share the name string
                instr = new_instruction(
                    iname, opcodes.setdefault(opcode, opcode), None if shape is None else intern(shape),
                    ops, is_root, i + 1, col, j - i + 1, attrs_at, payload, comp,
                )
                if prefix:
                    instr.prefix = "".join(prefix)
                instructions.append(instr)
                by_name[iname] = instr
            else:
                for op in operands:
                    if op not in by_name:
                        forward_names.append(op)
                by_name[iname] = i + 1
                opcodes_seen.add(opcode)
                if opcode in NOTED_OPCODES:
                    noted.append((iname, opcode, i + 1))
            prefix = []
            count += 1
            if calls and into is None and not callees_plainly_known(calls_text, comp_names):
                # a callee not seen yet (it may be defined further down), or text the
                # quick reading cannot vouch for: checked once all computations are known
                self.callers.append((comp, iname, i))
            if is_root:
                if root_seen is not None:
                    raise self.error(
                        HloVerifyError,
                        f"a second ROOT in computation '{name}' (the first is "
                        f"'{root_seen[0]}' on line {root_seen[1]})",
                        i + 1, col or _name_column(lines[i]),
                    )
                root_seen = (iname, i + 1)
            if forward_names:
                forward.extend((op, iname, i + 1, col) for op in forward_names)
                forward_names = []
            i = j + 1
        if not count:
            raise self.error(HloVerifyError, f"computation '{name}' has no instructions", comp.line)
        for op, user, user_line, user_col in forward:
            src = self.lines[user_line - 1]
            column = (src.find(op) + 1) or user_col or _name_column(src)
            if op not in by_name and op in ELEMENT_TYPES and f"%{op}" not in src:
                # XLA's lexer reads the word as an element type and drops the operand
                raise HloParseError(
                    f"operand '{op}' is spelled like an element type; write it '%{op}' (XLA's parser does "
                    "not read it as an operand)",
                    filename=self.filename, line=user_line, column=column, source_line=src,
                )
            if op not in by_name:
                raise HloVerifyError(
                    f"operand '{op}' of '{user}' is not defined in computation '{name}'",
                    filename=self.filename, line=user_line, column=column, source_line=src,
                )
            # XLA's parser rejects a use before the definition, and the verifier (after every
            # pass, and in safe mode) requires definition-before-use order: reject it here
            defined = by_name[op] if not build else by_name[op].line
            raise HloVerifyError(
                f"operand '{op}' of '{user}' is used before its definition on line "
                f"{defined} (each operand must be defined before its use)",
                filename=self.filename, line=user_line, column=column, source_line=src,
            )
        if build:
            comp.fill(instructions, by_name)
        else:  # built from its header line on first use
            comp._lazy = LazyBody(comp.line - 1, names=by_name, opcodes=opcodes_seen, noted=noted)
        self.instruction_count += count
        return i

    def _check_block(self, comp: Computation, first: int, comp_names: set[str]) -> int | None:
        """Check the body of a computation that is not built yet in one pass over its
        text (:meth:`.block.BodyChecker.check`, or its result from a worker process);
        returns the line after the computation, or None when the body needs the
        line-by-line reading (which also locates every error)."""
        found = self.prechecked.take(first, self.lines.starts[first]) if self.prechecked is not None else MISSING
        checked = self.bodies.check(first, comp_names) if found is MISSING else found
        if checked is None:
            return None
        s, e, last, n, opcodes, noted, callers = checked
        present = OPCODE_SETS.get(opcodes)  # one object per set of opcodes
        if present is None:
            # a set first seen here; a worker's strings are its own: spelled as the table does
            spelled = opcodes if found is MISSING else frozenset(OPCODE_SPELLINGS[o] for o in opcodes)
            present = OPCODE_SETS.setdefault(spelled, spelled)
        if found is not MISSING:
            # a worker knew none of the computations: keep the callers as reading here would
            if noted:
                noted = [(name, OPCODE_SPELLINGS[op], line) for name, op, line in noted]
            if callers:
                callers = [c for c in callers if c[2] is None or not comp_names.issuperset(c[2])]
        # the computation checks out: keep what passes ask before building it
        if callers:
            self.callers.extend((comp, name, line) for name, line, _ in callers)
        comp._lazy = LazyBody(comp.line - 1, block=(s, e), opcodes=present, noted=noted)
        if self._entry_built is not None and comp.is_entry and self._entry_built[0] == (s, e):
            self._take_entry_built(comp)
        self.instruction_count += n
        text = self.text
        after = self.lines.starts[last + 1]
        if text.startswith("}\n", e) and after == e + 2:
            comp.tail = "}\n"  # the common close, alone on its line
            return last + 1
        j = self._gather_tail(last)
        comp.tail = self._raw_block(last, j)
        return j + 1

    def _build_entry_early(self, found: dict[int, tuple | None]) -> None:
        """Build ENTRY's instructions from a worker's findings for the stretch that holds it
        (the passes will ask for them), while the other workers still check: after the reading,
        the other processors have nothing to do. Only a body the worker checked out is built,
        from its offsets, just as :func:`build_body` would; the reading takes it when it
        reaches that very body (:meth:`_take_entry_built`), else it is dropped."""
        text = self.text
        at = text.rfind("\nENTRY ") + 1  # XLA prints ENTRY last, its header on one line
        if at == 0:
            return
        checked = found.get(bisect_right(self.lines.starts, at))  # the line after the header's
        if checked is None or self._build_entry_for.isdisjoint(checked[4]):
            return  # not plainly checked, or nothing the passes look for
        block = (checked[0], checked[1])
        holder = Computation("")
        build_block(holder, block, text, self.lines.starts)  # (parse_module holds the collector off)
        self._entry_built = (block, holder)

    def _take_entry_built(self, comp: Computation) -> None:
        """ENTRY's body was checked out at the offsets its instructions were built for early."""
        assert self._entry_built is not None
        holder = self._entry_built[1]
        self._entry_built = None
        instructions = holder.instructions
        for instr in instructions:
            instr.computation = comp
        comp._lazy = None
        comp.fill(instructions, holder.by_name)

    def _gather_tail(self, i: int) -> int:
        """The closing '}' of a body is on line ``i``: only a line comment may follow it there
        (anything else, perhaps a computation, is the token reader's to read)."""
        rest = self.lines[i].strip()[1:].lstrip()
        if rest and not rest.startswith("//"):
            raise NotPlain
        return i

    def _slow_instruction(self, body: str, i: int) -> tuple:
        """Read an instruction the fast path refused, through the grammar."""

        try:
            syn = _grammar_reads(body, self.filename, i + 1)
        except GrammarError as exc:
            if exc.line == i + 1 + body.count("\n") and (exc.column or 0) > len(body.rsplit("\n", 1)[-1].rstrip()):
                raise NotPlain from None  # the line ends before the instruction does: it goes on
            raise
        head = INSTR_HEAD.match(body)
        pct = head.group(2) if head else ""
        mo = OPCODE.search(body, head.end() if head else 0)
        if mo is None or mo.group(1) != syn.opcode:
            raise NotPlain  # the opcode stands apart from its '(': the token reader reads it
        try:
            attrs_at = _match_paren(body, mo.end() - 1)
        except _FastFail:
            raise NotPlain from None  # (nor would the attributes be found after the operands)
        payload = body[mo.end() : attrs_at - 1] if syn.opcode in PAYLOAD_OPCODES else None
        return syn.name, pct, syn.is_root, syn.shape, syn.opcode, list(syn.operands), attrs_at, payload, syn.column

    def _check_callees(self) -> None:
        known = {c.name for c in self.module.computations}
        for comp, iname, line in self.callers:
            text = self._attrs_text_of(comp, iname, line)
            if callees_plainly_known(text, known):
                continue
            instr = comp.by_name[iname]  # builds the computation's instructions
            attrs = instr._attrs
            if attrs is None:
                attrs = attributes.split_attributes(instr.attrs_text or "", instr)
            for callee in attributes.called_computation_names(attrs):
                if callee.startswith("{"):
                    raise NotPlain  # a computation written inline: the token reader reads it
                if callee not in known:
                    src = (instr.text or "").split("\n")[0]
                    col = src.find(callee) + 1 if callee in src else instr.column
                    raise HloVerifyError(
                        f"'{instr.name}' calls computation '{callee}', which is not defined",
                        filename=self.filename, line=instr.line, column=col, source_line=src,
                    )
            for key, value in attrs:
                if key != "control-predecessors" or instr.computation is None:
                    continue
                for pred in attributes.name_list(value):
                    if pred not in instr.computation.by_name:
                        src = (instr.text or "").split("\n")[0]
                        col = src.find(pred) + 1 if pred in src else instr.column
                        raise HloVerifyError(
                            f"control predecessor '{pred}' of '{instr.name}' is not defined in "
                            f"computation '{instr.computation.name}'",
                            filename=self.filename, line=instr.line, column=col, source_line=src,
                        )

    def _attrs_text_of(self, comp: Computation, iname: str, i: int) -> str:
        """The attribute text of instruction ``iname`` on line ``i``, built or not."""
        if comp._lazy is None:
            return comp.by_name[iname].attrs_text or ""
        m = LINE.match(self.lines[i])
        if m is not None and m.group(3) == iname:
            return m.group(7).rstrip("\r")
        return comp.by_name[iname].attrs_text or ""  # a rarer form: build and ask


def build_body(comp: Computation, lazy: LazyBody) -> None:
    """Build the instruction objects of a computation that was only checked."""
    module = comp.module
    assert module is not None
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        if lazy.block is not None:
            build_block(comp, lazy.block, module.source, module.line_starts)
        else:  # read line by line again, this time building
            reader = Scanner(module.source, module.filename, False, module=module)
            m = COMP_START.match(reader.lines[lazy.header])
            assert m is not None
            reader._computation(lazy.header, m, set(), into=comp)
        if comp.is_entry and not module.style_known:
            module.style = detect_style(module)  # from ENTRY as read, before any edit
    finally:
        if was_enabled:
            gc.enable()


def read_plain(text: str, filename: str | None, strict: bool, prechecked: Prechecked | None = None,
               build_entry_for: frozenset[str] = frozenset()) -> Module:
    """Read text as XLA prints it; raises :class:`NotPlain` for text it cannot vouch for.
    ``strict`` builds every computation (for the strict checks that follow); ``prechecked``
    are the workers checking the bodies of a large module (:func:`.parallel.start`), and
    ``build_entry_for`` the opcodes for which ENTRY is built while they check."""
    return Scanner(text, filename, strict, prechecked=prechecked, build_entry_for=build_entry_for).run()
