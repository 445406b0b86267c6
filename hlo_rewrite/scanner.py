"""The fast path from HLO text to :class:`~hlo_rewrite.ir.Module`.

XLA prints one instruction per line, so the scanner walks the text line by
line, joins the rare instruction that wraps over several lines (brackets not
yet balanced), and reads each instruction's skeleton with a few regular
expressions: ``[ROOT] name = shape opcode(operands)`` and the attribute text
after it, which is kept as it is. Whatever these expressions do not accept is
handed to the grammar of record (:mod:`hlo_rewrite.syntax`), which either
reads it or raises an error pointing at the exact line and column. With
``strict=True`` every computation is built and :mod:`hlo_rewrite.strict` then
checks the module against what XLA's parser accepts.

While scanning, the structural rules are checked: every operand and called
computation is defined, names are unique in their computation, at most one
ROOT per computation and one ENTRY per module.
"""

from __future__ import annotations

import gc
import re
import sys
from array import array
from bisect import bisect_right
from collections.abc import Sequence
from operator import itemgetter
from sys import intern

from . import attributes
from .errors import HloError, HloParseError, HloVerifyError
from .ir import NOTED_OPCODES, Computation, Instruction, Module
from .shapes import ELEMENT_TYPES

_IDENT = r"[A-Za-z_][A-Za-z0-9_.\-]*"
_INSTR_HEAD = re.compile(r"[ \t]*(ROOT[ \t]+)?(%?)(" + _IDENT + r")[ \t]*=[ \t]*")
# an array shape: element type, dimensions (sizes, `<=N`, `?`), optional layout;
# anything stranger (a layout with a P(<shape>) item, garbage) is left to the grammar
_DIMS_LAYOUT = (
    r"\[[0-9,<=? \t]*\]"
    r"(?:\{[0-9, \t]*(?::(?:[A-Z#*]*\([0-9A-Za-z,*+~ \t]*\)|[ \t])*)?\})?"
)
_ARRAY_SHAPE = re.compile(r"([a-z][a-z0-9]*)" + _DIMS_LAYOUT)
_OPCODE = re.compile(r"([a-z][a-z0-9\-]*)\(")
_SHAPE = r"(?:[a-z][a-z0-9]*" + _DIMS_LAYOUT + r"|\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\))"
_OPERAND = r"[ \t]*(?:" + _SHAPE + r"[ \t]+)?%?(" + _IDENT + r")[ \t]*"
_OPERAND_ITER = re.compile(r"(?:^|,)" + _OPERAND)
# operands written as bare names (XLA's default since 2025, JAX): checked in one match
_NAMES_ONLY = re.compile(r"[ \t]*%?" + _IDENT + r"[ \t]*(?:,[ \t]*%?" + _IDENT + r"[ \t]*)*")
_NAME_FIND = re.compile(_IDENT)
# a whole one-line instruction whose operand list holds no parentheses:
# ROOT, %, name, array shape or none, opcode, operand text, attribute text
_LINE = re.compile(
    r"[ \t]*(ROOT[ \t]+)?(%?)(" + _IDENT + r")[ \t]*=[ \t]*"
    r"(?:([a-z][a-z0-9]*" + _DIMS_LAYOUT + r")[ \t]+)?([a-z][a-z0-9\-]*)"
    r"\(([^()\n]*)\)([^\n]*)"
)
# name = [shape] opcode(   with an array shape or none: the common case in one match
_COMMON_HEAD = re.compile(
    r"[ \t]*(ROOT[ \t]+)?(%?)(" + _IDENT + r")[ \t]*=[ \t]*"
    r"(?:([a-z][a-z0-9]*" + _DIMS_LAYOUT + r")[ \t]+)?([a-z][a-z0-9\-]*)\("
)
_NEWLINE = re.compile("\n")
_PAREN_OR_QUOTE = re.compile(r'[()"]')
_MATCH_END = re.Match.end
_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_COMP_START = re.compile(r"[ \t]*(ENTRY[ \t]+)?%?(" + _IDENT + r")[ \t]*[({]")
_MODULE_NAME = re.compile(r"[ \t]*HloModule[ \t]+%?(" + _IDENT + r")")
_CALLEE_RE = re.compile(
    r"(?:to_apply|calls|condition|body|select|scatter|true_computation|false_computation"
    r"|branch_computations|called_computations|control-predecessors)="
)
_NEW_INSTRUCTION = re.compile(
    r"[ \t]*(?:ROOT[ \t]+)?%?" + _IDENT + r"[ \t]*=[ \t]*(?:\(|[a-z][a-z0-9]*\[|[a-z][a-z0-9\-]*\()"
)
# `, key=%name` or `, key={%a, %b}` for the attributes that name computations
_CALLEE_VALUES = re.compile(
    r",[ \t]*(to_apply|calls|condition|body|select|scatter|true_computation|false_computation"
    r"|branch_computations|called_computations)="
    r"(?:%?(" + _IDENT + r")|\{([^{}]*)\})"
)
_NEXT_IS_NAME = re.compile(r",[ \t]*%?" + _IDENT + r"[ \t]*(?:,|$)")
_SECTION_WORDS = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")
#: opcodes that never call a computation in XLA: their attributes are not read
#: for callees while scanning (any other opcode, known or not, is); an attribute
#: such as ``to_apply`` on them is kept verbatim like any attribute they cannot have
NON_CALLER_OPCODES: frozenset[str] = frozenset(
    "abs acos acosh add add-dependency after-all all-gather all-gather-done all-gather-start "
    "all-reduce-done all-to-all and asin asinh atan atan2 atanh batch-norm-grad "
    "batch-norm-inference batch-norm-training bitcast bitcast-convert broadcast cbrt ceil cholesky "
    "clamp count-leading-zeros collective-broadcast collective-permute collective-permute-done "
    "collective-permute-start compare complex concatenate constant convert convolution copy "
    "copy-done copy-start cosine cosh divide domain dot dynamic-reshape dynamic-slice "
    "dynamic-update-slice erf exponential exponential-minus-one fft floor gather "
    "get-dimension-size get-tuple-element imag infeed iota is-finite log log-plus-one logistic "
    "maximum minimum mulhi multiply negate not opt-barrier or outfeed pad parameter partition-id "
    "popcnt power ragged-all-to-all ragged-dot real recv recv-done reduce-precision remainder "
    "replica-id reshape reverse rng rng-bit-generator rng-get-and-update-state round-nearest-afz "
    "round-nearest-even rsqrt scaled-dot select send send-done set-dimension-size shift-left "
    "shift-right-arithmetic shift-right-logical sign sine sinh slice sqrt stochastic-convert "
    "subtract tan tanh topk transpose triangular-solve tuple xor".split()
)
# one operand written as a bare name, perhaps after XLA's /*index=N*/ comment
_BARE_OPERAND = r"[ \t]*(?:/\*index=[0-9]+\*/)?%?" + _IDENT + r"[ \t]*"
# a tuple shape: parentheses nested up to three deep, no quote (what is inside is read
# when asked, as on the line-by-line path, which would read a quote as a string)
_TUPLE_SHAPE = r'\((?:[^()"\n]|\((?:[^()"\n]|\([^()"\n]*\))*\))*\)'
# Python 3.11 has possessive quantifiers ("*+"): with them a line that is not plain
# fails sooner, and a name spelled ROOT followed by a blank goes line by line
_P = "+" if sys.version_info >= (3, 11) else ""
# one plain instruction line, for checking a whole computation body in one pass:
# name, element type (none for a tuple shape), opcode, then a parameter's number or a
# constant's literal, or for any other opcode text that may be bare operand names
# (checked afterwards for the whole body at once, by _NAMES_ONLY or _INDEXED_OPERAND_LIST)
_BLOCK_LINE = re.compile(
    rf"^[ \t]*{_P}(?:ROOT[ \t]+)?{_P}%?{_P}({_IDENT}{_P})[ \t]*{_P}=[ \t]*{_P}"
    rf"(?:([a-z][a-z0-9]*{_P}){_DIMS_LAYOUT}[ \t]+{_P}|{_TUPLE_SHAPE}[ \t]+{_P})?([a-z][a-z0-9\-]*{_P})"
    r"\((?:(?:(?<=[ \t=]parameter\()|(?<=[ \t=]constant\())[^()\n]*|([ \t%A-Za-z0-9_.,\-/*=]*))\).*\n",
    re.M,
)
_ROW_NAME, _ROW_TYPE, _ROW_OPCODE, _ROW_OPERANDS = map(itemgetter, range(4))
#: longest body checked in one pass: a longer one is read line by line, which holds
#: one line's reading at a time instead of the whole body's (and was as fast, measured)
_BLOCK_MAX_LINES = 5000
# the same line read for building it: ROOT, %, name, shape, opcode, operand text
_BUILT_LINE = re.compile(
    r"[ \t]*(ROOT[ \t]+)?(%?)(" + _IDENT + r")[ \t]*=[ \t]*"
    r"(?:([a-z][a-z0-9]*" + _DIMS_LAYOUT + r"|" + _TUPLE_SHAPE + r")[ \t]+)?([a-z][a-z0-9\-]*)\(([^()\n]*)\)"
)
_INDEXED_OPERAND_LIST = re.compile(_BARE_OPERAND + r"(?:," + _BARE_OPERAND + r")*")
_INDEXED_OPERAND = re.compile(r"(?:^|,)" + _BARE_OPERAND.replace("%?" + _IDENT, "%?(" + _IDENT + ")"))
# every byte but brackets and newlines, deleted to check bracket nesting line by line
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"(){}[]\n")
#: longest broken item (characters) the grammar is asked to explain precisely
_EXPLAIN_LIMIT = 1 << 20
_PAYLOAD_OPCODES = frozenset({"parameter", "constant"})
_OPCODE_NAMES: dict[str, str] = {}  # one string object per opcode spelling
_OPCODE_SETS: dict[frozenset[str], frozenset[str]] = {}  # one object per set of opcodes


class _FastFail(Exception):
    """The fast path does not accept this text; ask the grammar."""


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
    if d == 0:
        return 0
    if '"' in line:
        line = _STRING.sub("", line)
    if "/" in line:
        if "/*" in line:
            line = _COMMENT.sub("", line)
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
    search = _PAREN_OR_QUOTE.search
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
    m = _COMMON_HEAD.match(body)
    if m is not None:
        root, pct, name, shape, opcode = m.groups()
        if shape is None or shape[: shape.index("[")] in ELEMENT_TYPES:
            pos = m.end()
            close = _close_operands(body, pos)
            column = m.start(3) + 1 - len(pct)
            if opcode in _PAYLOAD_OPCODES:
                return name, pct, root is not None, shape, opcode, [], close + 1, body[pos:close], column
            inner = body[pos:close]
            if _NAMES_ONLY.fullmatch(inner) is not None:
                operands = _NAME_FIND.findall(inner)
            else:
                operands = _read_operands(inner)
            return name, pct, root is not None, shape, opcode, operands, close + 1, None, column
    m = _INSTR_HEAD.match(body)
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
        ms = _ARRAY_SHAPE.match(body, pos)
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
    mo = _OPCODE.match(body, pos)
    if mo is None:
        raise _FastFail
    opcode = mo.group(1)
    pos = mo.end()
    close = _close_operands(body, pos)
    inner = body[pos:close]
    payload = None
    if opcode in _PAYLOAD_OPCODES:
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
        if _INDEXED_OPERAND_LIST.fullmatch(inner) is not None:
            return _INDEXED_OPERAND.findall(inner)  # bare names with XLA's /*index=N*/
        inner = _COMMENT.sub("", inner)
    if inner.lstrip().startswith(","):
        raise _FastFail
    names = []
    pos = 0
    for mm in _OPERAND_ITER.finditer(inner):
        if mm.start() != pos:
            raise _FastFail
        names.append(mm.group(1))
        pos = mm.end()
    if pos != len(inner) or not names:
        raise _FastFail
    return names


def _name_column(line: str) -> int:
    """1-based column of the instruction name on a line (with its '%')."""
    m = _INSTR_HEAD.match(line)
    return m.start(3) + 1 - len(m.group(2)) if m is not None else 1


def _line_operands(inner: str) -> list[str] | None:
    """Operand names of a one-line instruction, or None to take the slow path."""
    if not inner:
        return []
    if _NAMES_ONLY.fullmatch(inner) is not None:
        return _NAME_FIND.findall(inner)
    try:
        return _read_operands(inner)
    except _FastFail:
        return None


def _operands_have_shapes(body: str) -> bool:
    m = _INSTR_HEAD.match(body)
    if m is None:
        return False
    mo = _OPCODE.search(body, m.end())
    if mo is None:
        return False
    rest = body[mo.end() :].lstrip()
    return bool(rest) and (rest[0] == "(" or (rest[0].islower() and "[" in rest[:12].split(" ")[0]))


class _Lines:
    """The lines of a text (without their "\\n"), sliced out of it on demand.

    Only the start offsets are stored, so a 50 MB module does not hold a second
    copy of itself as a list of line strings.
    """

    __slots__ = ("text", "starts")

    def __init__(self, text: str, starts: Sequence[int] | None = None) -> None:
        self.text = text
        if starts is None:
            new = array("q", [0])
            new.extend(map(_MATCH_END, _NEWLINE.finditer(text)))
            new.append(len(text) + 1)  # sentinel: the last line has no "\n"
            starts = new
        self.starts = starts

    def __len__(self) -> int:
        return len(self.starts) - 1

    def __getitem__(self, i: int) -> str:
        if i < 0:
            i += len(self)
        return self.text[self.starts[i] : self.starts[i + 1] - 1]

    def start(self, i: int) -> int:
        return self.starts[i]

    def end(self, j: int) -> int:
        """Offset just past line ``j`` including its newline."""
        return min(self.starts[j + 1], len(self.text))

    def block(self, i: int, j: int) -> str:
        """Lines i..j joined, without the final newline."""
        return self.text[self.starts[i] : self.starts[j + 1] - 1]


def _may_name_computations(opcode: str, attrs: str) -> bool:
    """Whether an instruction's attribute text may name called computations or
    control predecessors, which are then checked once all computations are known."""
    if opcode not in NON_CALLER_OPCODES and _CALLEE_RE.search(attrs) is not None:
        return True
    return "control-predecessors" in attrs


def _brackets_nest_on_each_line(body: str, lines: int) -> bool:
    """Whether (), {} and [] pair up properly on each of the ``lines`` lines of
    ``body`` (strings not told apart: a bracket in a string may say no)."""
    nested = body.encode().translate(None, _NOT_BRACKETS)  # brackets and newlines only
    while True:
        reduced = nested.replace(b"()", b"").replace(b"{}", b"").replace(b"[]", b"")
        if len(reduced) == len(nested):
            return len(nested) == lines  # only the newlines are left
        nested = reduced


def _operands_defined_before_use(operands: list[str], position: dict[str, int], comments: bool) -> bool:
    """Whether the operand texts of a body's lines (``operands[k]`` for line k)
    are bare names, each defined on an earlier line (``position``)."""
    joined = ",".join(filter(None, operands))
    if not joined:
        return True
    if comments:  # XLA's /*index=N*/ may stand before a name
        if _INDEXED_OPERAND_LIST.fullmatch(joined) is None:
            return False
        find = _INDEXED_OPERAND.findall
    elif _NAMES_ONLY.fullmatch(joined) is None:
        return False  # operands written with shapes, or not plain names
    get = position.get
    k = -1
    for names in operands:
        k += 1
        if not names:
            continue
        if comments:
            for op in find(names):
                if get(op, k) >= k:
                    return False  # not defined, or not on an earlier line
        else:  # bare names, as checked above: the text between commas, trimmed
            for op in names.split(","):
                if get(op.strip(" \t%"), k) >= k:
                    return False
    return True


class Scanner:
    """Turns HLO text into a Module (one use per text)."""

    #: check the body of a computation that is not built yet in one pass over its
    #: text when it allows (tests turn it off to compare with the line-by-line reading)
    check_blocks = True

    def __init__(self, text: str, filename: str | None, strict: bool) -> None:
        self.text = text
        self.filename = filename
        self.strict = strict
        self.lines = _Lines(text)
        self.module = Module(text, filename)
        self.module.line_starts = self.lines.starts
        # (computation, instruction name) of instructions with attributes naming
        # computations or control predecessors, checked once all are known
        # and the 0-based line each is on
        self.callers: list[tuple[Computation, str, int]] = []
        # whether the text has comments or control predecessors anywhere (one
        # look at the whole text spares a look into every computation)
        self.maybe_comments = self.module.source_has("/*")
        self.maybe_control = self.module.source_has("control-predecessors")

    # ------------------------------------------------------------------ helpers
    def _raw(self, i: int) -> str:
        return self.text[self.lines.start(i) : self.lines.end(i)]

    def _raw_block(self, i: int, j: int) -> str:
        return self.text[self.lines.start(i) : self.lines.end(j)]

    def error(self, cls: type[HloError], message: str, line: int, column: int | None = 1) -> HloError:
        src = self.lines[line - 1] if 0 < line <= len(self.lines) else None
        return cls(message, filename=self.filename, line=line, column=column, source_line=src)

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
                self.lines[j].rstrip() == "}" or _NEW_INSTRUCTION.match(self.lines[j]) is not None
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
        from . import syntax

        text = self.lines.block(i, j)
        if len(text) > _EXPLAIN_LIMIT:
            return  # the grammar needs about a minute for 10 MB: the caller's own message will do
        syntax.parse_instruction(text, filename=self.filename, line=i + 1)

    # --------------------------------------------------------------------- scan
    def run(self) -> Module:
        text = self.text
        if "\x00" in text:
            off = text.index("\x00")
            nul_line = text.count("\n", 0, off) + 1
            nul_col = off - (text.rfind("\n", 0, off) + 1) + 1
            raise self.error(HloParseError, "NUL byte in the input: this is not HLO text", nul_line, nul_col)
        if not text.strip():
            raise HloParseError("empty input: expected an HLO module", filename=self.filename, line=1, column=1, source_line="")
        mod = self.module
        lines = self.lines
        n = len(lines)
        if lines[0].endswith("\r"):
            mod.style.newline = "\r\n"
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
            line = lines[i]
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
                m = _MODULE_NAME.match(line)
                if m is None:
                    raise self.error(HloParseError, "expected a module name after 'HloModule'", i + 1, len(line) + 1)
                mod.name = m.group(1)
                seen_header = True
                j = self._gather(i)
                pending.append(self._raw_block(i, j))
                i = j + 1
                continue
            if stripped.startswith(_SECTION_WORDS) or stripped[0].isdigit():
                # stack-frame tables (FileNames ... StackFrames): kept verbatim
                j = self._gather(i)
                pending.append(self._raw_block(i, j))
                i = j + 1
                continue
            m = _COMP_START.match(line)
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
        self._detect_style()
        return mod

    def _computation(
        self, i: int, m: re.Match, comp_names: set[str], into: Computation | None = None
    ) -> int:
        """Read the computation whose header starts on line ``i``; returns the
        line after it. Unless ``strict`` or it is ENTRY, only the checks run
        and the instruction objects are built later, on first use (``into`` is
        then the computation to fill)."""
        lines = self.lines
        n = len(lines)
        name = m.group(2)
        # the header runs until a line that ends with '{' with brackets balanced
        depth = 0
        j = i
        while True:
            line = lines[j]
            depth += _depth_delta(line)
            if depth == 1 and line.rstrip().endswith("{"):
                break
            if depth <= 0 and j > i:
                raise self.error(HloParseError, f"expected '{{' to open the body of computation '{name}'", j + 1)
            j += 1
            if j >= n:
                raise self.error(
                    HloParseError, f"computation '{name}' is never opened with '{{'", i + 1,
                )
        # ENTRY is built at once: every pass looks at it
        build = self.strict or into is not None or m.group(1) is not None
        if into is not None:
            comp = into
        else:
            if name in comp_names:
                raise self.error(HloVerifyError, f"computation '{name}' is defined twice", i + 1, m.start(2) + 1)
            comp_names.add(name)
            comp = Computation(
                name,
                is_entry=m.group(1) is not None,
                head=self._raw_block(i, j),
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
        opcodes = _OPCODE_NAMES
        root_seen: tuple[str, int] | None = None  # name and line of the ROOT
        strict = self.strict
        # building: name -> instruction; checking only: name -> line
        by_name: dict = comp._by_name if build else {}
        instructions = comp._instructions
        count = 0
        opcodes_seen: set[str] = set()
        noted: list[tuple[str, str, int]] = []
        text = self.text
        starts = lines.starts
        new_instruction = Instruction.from_scan
        line_re = _LINE.match
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
                ):
                    if opcode in _PAYLOAD_OPCODES or not inner:
                        operands = []
                    elif _NAMES_ONLY.fullmatch(inner) is not None:
                        operands = _NAME_FIND.findall(inner)
                    else:
                        operands = _line_operands(inner)  # type: ignore[assignment]
            if lm is not None and operands is not None:
                j = i
                is_root = root is not None
                calls = _may_name_computations(opcode, attrs)
                calls_text = attrs
                if build:
                    col = lm.start(3) + 1 - len(pct) - start
                    attrs_at = lm.start(7) - start
                    payload = inner if opcode in _PAYLOAD_OPCODES else None
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
                    mc = _COMP_START.match(line)
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
                calls = _may_name_computations(opcode, calls_text)
            # both paths: check the instruction against what came before (and build it)
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
            if calls and into is None and not self._callees_plainly_known(calls_text, comp_names):
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
        if not build:
            comp._lazy = comp.line - 1  # built from its header line on first use
            comp._names_hint = by_name
            comp._opcodes_hint = opcodes_seen
            comp._noted_hint = noted
        return i

    def _check_block(self, comp: Computation, first: int, comp_names: set[str]) -> int | None:
        """Check the body of a computation that is not built yet in one pass over
        its text, when every line of it is one plain instruction (XLA prints
        nothing else); returns the line after the computation, or None when the
        body needs the line-by-line reading (which also locates every error).

        The same rules hold as line by line: each line is a whole instruction
        (brackets nest properly on it), names are unique, element types known,
        at most one ROOT, every operand defined on an earlier line, and every
        called computation known or noted for the check at the end.
        """
        text = self.text
        starts = self.lines.starts
        s = starts[first]
        close = text.find("\n}", s - 1)
        if close < s:
            return None  # no body, or its end is not a '}' line: read line by line
        e = close + 1
        last = bisect_right(starts, e, first) - 1  # the '}' line
        if last - first > _BLOCK_MAX_LINES:
            return None  # a long body: line by line keeps what is held in memory small
        if last <= first or _BLOCK_LINE.match(text, starts[last - 1], e) is None:
            return None  # the last line (most often the ROOT, with operands) already is not plain
        rows = _BLOCK_LINE.findall(text, s, e)
        n = len(rows)
        if n != last - first:
            return None  # some line is not one plain instruction
        if not _brackets_nest_on_each_line(text[s:e], n):
            return None  # brackets left over on some line (or inside a string there)
        comments = self.maybe_comments and text.find("/*", s, e) >= 0
        if comments and not self._comments_closed(s, e):
            return None
        position = dict(zip(map(_ROW_NAME, rows), range(n), strict=True))
        if len(position) != n:
            return None  # a name defined twice
        types = set(map(_ROW_TYPE, rows))
        types.discard("")
        if not types <= ELEMENT_TYPES:
            return None
        if text.count("ROOT", s, e) > 1:
            return None  # two ROOTs, or the word elsewhere: line by line tells
        if not _operands_defined_before_use(list(map(_ROW_OPERANDS, rows)), position, comments):
            return None
        opcodes = set(map(_ROW_OPCODE, rows))
        callers = []
        if not opcodes <= NON_CALLER_OPCODES:
            for k, row in enumerate(rows):
                if row[2] not in NON_CALLER_OPCODES:
                    line = text[starts[first + k] : starts[first + k + 1] - 1]
                    if _CALLEE_RE.search(line) is not None and not self._callees_plainly_known(line, comp_names):
                        callers.append((comp, row[0], first + k))
        if self.maybe_control:
            at = text.find("control-predecessors", s, e)
            while at >= 0:
                k = bisect_right(starts, at) - 1
                callers.append((comp, rows[k - first][0], k))
                at = text.find("control-predecessors", starts[k + 1], e)
        # the computation checks out: keep what passes ask before building it
        self.callers.extend(callers)
        comp._lazy = comp.line - 1
        comp._block = (s, e)
        present = frozenset(_OPCODE_NAMES.setdefault(o, o) for o in opcodes)
        comp._opcodes_hint = _OPCODE_SETS.setdefault(present, present)
        comp._noted_hint = [
            (r[0], _OPCODE_NAMES[r[2]], first + k + 1) for k, r in enumerate(rows) if r[2] in NOTED_OPCODES
        ]
        after = starts[last + 1]
        if text.startswith("}\n", e) and after == e + 2:
            comp.tail = "}\n"  # the common close, alone on its line
            return last + 1
        j = self._gather_tail(last)
        comp.tail = self._raw_block(last, j)
        return j + 1

    def _comments_closed(self, s: int, e: int) -> bool:
        """Every line between offsets s and e that opens a ``/*`` comment closes it."""
        text = self.text
        at = text.find("/*", s, e)
        while at >= 0:
            begin = text.rfind("\n", s, at) + 1
            end = text.find("\n", at, e)
            line = text[begin:end]
            if line.count("/*") != line.count("*/"):
                return False
            at = text.find("/*", end, e)
        return True

    def _gather_tail(self, i: int) -> int:
        return self._gather(i) if _depth_delta(self.lines[i]) > 0 else i

    def _slow_instruction(self, body: str, i: int) -> tuple:
        """Read an instruction the fast path refused, through the grammar."""
        from . import syntax

        syn = syntax.parse_instruction(body, filename=self.filename, line=i + 1)
        head = _INSTR_HEAD.match(body)
        pct = head.group(2) if head else ""
        mo = _OPCODE.search(body, head.end() if head else 0)
        payload = None
        attrs_at = len(body)
        if mo is not None:
            try:
                attrs_at = _match_paren(body, mo.end() - 1)
            except _FastFail:
                pass
            if syn.opcode in _PAYLOAD_OPCODES:
                payload = body[mo.end() : attrs_at - 1]
        return syn.name, pct, syn.is_root, syn.shape, syn.opcode, list(syn.operands), attrs_at, payload, syn.column

    def _check_with_grammar(self, instr: Instruction, body: str, i: int) -> None:
        from . import syntax

        syn = syntax.parse_instruction(body, filename=self.filename, line=i + 1)
        instr._syntax = syn
        fast = (instr.name, instr.is_root, instr.shape, instr.opcode, instr.operands)
        full = (syn.name, syn.is_root, syn.shape, syn.opcode, list(syn.operands))
        if fast != full:
            raise self.error(
                HloParseError,
                f"internal error: the fast scanner read {fast!r} but the grammar read {full!r}",
                i + 1,
            )
        names = [a.name for a in syn.attrs]
        if names != [k for k, _ in instr.attrs]:
            raise self.error(
                HloParseError,
                f"internal error: attribute names differ between scanner {instr.attrs!r} and grammar {names!r}",
                i + 1,
            )

    def _check_callees(self) -> None:
        known = {c.name for c in self.module.computations}
        for comp, iname, line in self.callers:
            text = self._attrs_text_of(comp, iname, line)
            if self._callees_plainly_known(text, known):
                continue
            instr = comp.by_name[iname]  # builds the computation's instructions
            attrs = instr._attrs
            if attrs is None:
                attrs = attributes.split_attributes(instr.attrs_text or "", instr)
            for callee in attributes.called_computation_names(attrs):
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
        m = _LINE.match(self.lines[i])
        if m is not None and m.group(3) == iname:
            return m.group(7).rstrip("\r")
        return comp.by_name[iname].attrs_text or ""  # a rarer form: build and ask

    @staticmethod
    def _callees_plainly_known(text: str, known: set[str]) -> bool:
        """The quick check: every ``, key=value`` naming a computation names a
        known one. A match inside a string can only
        add names to check (a name that is not known sends the instruction to
        the proper reading), never hide a real attribute; only when the quick
        check fails are the attributes split properly and the error located."""
        if "control-predecessors" in text:
            # rare; split so the attributes are checked as the verifier will read them
            return False
        for m in _CALLEE_VALUES.finditer(text):
            key, single, many = m.groups()
            if key == "calls" and _NEXT_IS_NAME.match(text, m.end()):
                return False  # `calls=%a, %b`: let the splitter read it
            names = [single] if single else [n.strip().lstrip("%") for n in many.split(",") if n.strip()]
            for n in names:
                if n not in known:
                    return False
        return True

    def _detect_style(self) -> None:
        style = self.module.style
        first = None
        # look at what is built already (ENTRY, where passes add instructions)
        built = [c for c in self.module.computations if c._lazy is None] or [self.module.entry]
        for comp in built:
            if comp.instructions:
                first = comp.instructions[0]
                break
        if first is not None and first.text is not None:
            stripped = first.text.lstrip()
            if stripped.startswith("ROOT"):
                stripped = stripped[4:].lstrip()
            style.percent = stripped.startswith("%")
            style.indent = first.text[: len(first.text) - len(first.text.lstrip(" \t"))]
        for comp in built:
            for instr in comp.instructions:
                if instr.operands and instr.text is not None:
                    style.operand_shapes = _operands_have_shapes(instr.text)
                    break
            else:
                continue
            break
        style.index_comments = ("/*index=" in self.text) or style.percent


def block_names(text: str, start: int, end: int) -> list[str]:
    """Instruction names of a body checked by ``Scanner._check_block``."""
    return list(map(_ROW_NAME, _BLOCK_LINE.findall(text, start, end)))


def _build_block(comp: Computation, text: str, starts: Sequence[int]) -> None:
    """Build the instructions of a body ``Scanner._check_block`` accepted: one
    plain instruction on each of its lines, all checked already."""
    assert comp._block is not None
    begin, end = comp._block
    first = bisect_right(starts, begin) - 1
    comments = text.find("/*", begin, end) >= 0
    find = _INDEXED_OPERAND.findall if comments else _NAME_FIND.findall
    instructions = comp._instructions
    by_name = comp._by_name
    new_instruction = Instruction.from_scan
    opcodes = _OPCODE_NAMES
    match = _BUILT_LINE.match
    i = first
    start = starts[i]
    while start < end:
        m = match(text, start)
        assert m is not None
        root, pct, name, shape, opcode, inner = m.groups()
        if opcode in _PAYLOAD_OPCODES:
            operands, payload = [], inner
        else:
            operands, payload = [by_name[op].name for op in find(inner)], None
        instr = new_instruction(
            name, opcodes.setdefault(opcode, opcode), None if shape is None else intern(shape), operands,
            root is not None, i + 1, m.start(3) + 1 - len(pct) - start, 1, m.end() - start, payload, comp,
        )
        instructions.append(instr)
        by_name[name] = instr
        i += 1
        start = starts[i]


def materialize(comp: Computation) -> None:
    """Build the instruction objects of a computation that was only checked."""
    module = comp.module
    assert module is not None and comp._lazy is not None
    header = comp._lazy
    comp._lazy = None
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        if comp._block is not None:
            _build_block(comp, module.source, module.line_starts)
        else:  # read line by line again, this time building
            scanner = Scanner.__new__(Scanner)
            scanner.text = module.source
            scanner.filename = module.filename
            scanner.strict = False
            scanner.lines = _Lines(module.source, module.line_starts)
            scanner.module = module
            scanner.callers = []
            scanner.maybe_comments = module.source_has("/*")
            scanner.maybe_control = module.source_has("control-predecessors")
            m = _COMP_START.match(scanner.lines[header])
            assert m is not None
            scanner._computation(header, m, set(), into=comp)
    finally:
        if was_enabled:
            gc.enable()
    comp._names_hint = None
    comp._block = None
    comp._opcodes_hint = None
    comp._noted_hint = None


def parse_module(text: str, filename: str | None = None, *, strict: bool = False) -> Module:
    """Read HLO module text into a :class:`Module`.

    Raises :class:`~hlo_rewrite.errors.HloError` with the file, line and column
    of the first problem. ``strict`` also checks the module against what XLA's
    parser accepts (:func:`hlo_rewrite.strict.check_module`).
    """
    was_enabled = gc.isenabled()
    gc.disable()  # the scan allocates many small objects and frees none of them
    try:
        module = Scanner(text, filename, strict).run()
        from . import strict as strict_checks

        if strict:
            strict_checks.check_module(module)
        else:  # the header line alone: XLA reads its attribute values, so they must be right
            strict_checks.check_header(module)
        return module
    finally:
        if was_enabled:
            gc.enable()
