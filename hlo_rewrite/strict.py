"""Strict mode: reject what XLA's HLO parser rejects, with the place and the reason.

:func:`check_module` runs after the module has been read (every computation built) and walks
each instruction's source text once more with the opcode table (:mod:`hlo_rewrite.opcodes`),
the lexicon (:mod:`hlo_rewrite.lexicon`), the value readers (:mod:`hlo_rewrite.values`) and the
literal checks (:mod:`hlo_rewrite.literals`). Every step is linear in the text: no grammar runs
over whole modules or long literals.

What it rejects, as XLA's parser does:

- an opcode XLA does not know; an operand count other than the opcode's arity (and the
  even/odd/at-least counts of reduce, reduce-window, scatter, dynamic-slice, ...);
- an attribute the opcode does not take, an attribute given twice, a missing required one;
- an attribute value of the wrong kind (``constrain_layout=TRUE``, ``channel_id=x``,
  ``api_version=API_VERSION_NOPE``, iota groups without ``T(...)``, ...);
- a called computation that is not defined before its use (``true_computation= %nope``), a
  control predecessor that is not defined before its use;
- a constant out of its type's range or whose literal does not have the declared shape;
- a declared operand shape (``f32[4] %p``) that differs from the operand's own shape;
- the async rules: ``async-start`` has shape ``((operands), outputs, state)``,
  ``async-update``/``async-done`` take one async operand that is not an ``async-done``, keep
  the wrapped opcode and ``calls=`` of their start, and ``async-update`` keeps its shape;
- ``use_global_device_ids=true`` without a ``channel_id`` on an all-reduce (or its start) or a
  reduce-scatter, which XLA's parser refuses (it lets an all-gather have it);
- a duplicate parameter number; header attributes XLA does not know or cannot read;
- a layout whose sections after ``:`` XLA's parser does not read: out of their order
  (``S(1)E(4)``), twice, split configs without ``:``, a physical shape
  (:mod:`hlo_rewrite.layouts`, which also takes what XLA takes, a section that stops early);
- a shape left out where XLA's parser does not work it out (``opcodes.SHAPE_INFERRED``), or
  where the operands and attributes give none (:mod:`hlo_rewrite.inference`, whose shape the
  instructions after it are checked against); a tuple whose written shape has another number
  of elements than it has operands.

An instruction written as an operand of another (XLA's nested form) is checked as one of its
own, at its own place in the source.

``api_version=API_VERSION_UNSPECIFIED`` is accepted (see ``docs/decisions.md``).
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from . import escapes, lexicon
from .errors import HloError, HloParseError
from .inference import NoShape, Program, infer
from .opcodes import (
    BUILT_AFTER_DATA,
    BUILT_AS_OPERAND,
    BUILT_FROM_OPERAND,
    BUILT_SHAPES,
    MODULE_ATTRS,
    OPCODES,
    SHAPE_INFERRED,
    AttrSpec,
    Kind,
    OpcodeSpec,
    closest_opcode,
    spec_of,
    split_async_opcode,
)
from .regex import lazy_pattern
from .shapes import Shape, compatible, is_array, is_buffer_start, parse_shape, shape_end, shape_syntax_error
from .strict_heads import RESERVED, bare_name_problem, head_problems
from .values import UnexpandedGroups, ValueReadError, read

if TYPE_CHECKING:
    from .ir import Computation, Instruction, Module

__all__ = ["check_header", "check_module", "compatible"]

_NAME_AT = re.compile(r"%?(" + lexicon.IDENTIFIER + r")")
_ATTR_NAME_AT = lexicon.ATTRIBUTE_NAME_RE
_ELEMENT_TYPE_AT = re.compile(r"[a-z][a-z0-9]*")
_HEADER_WORD = re.compile(r"[^\s,{}()\[\]\"/]+")
# a string or a comment, whichever starts first (a quote inside a comment starts no string)
_STRING_OR_COMMENT = re.compile(lexicon.DOUBLE_QUOTED + "|" + lexicon.COMMENT, re.S)
_COMMENT = lazy_pattern(lexicon.COMMENT, re.S)

# the plain one-line spellings, for the fast reading
_ID = lexicon.IDENTIFIER
_ARRAY = r"[a-z][a-z0-9]*\[[0-9,<=? \t]*\](?:\{[^{}\n]*\})?"
_TUPLE = r"\((?:[^()\n]|\((?:[^()\n]|\((?:[^()\n]|\([^()\n]*\))*\))*\))*\)"
_SHAPE = "(?:" + _ARRAY + "|" + _TUPLE + ")"
_STR = r'"(?:[^"\\\n]|\\.)*"'
_B0 = r"\{(?:[^{}\"\n]|" + _STR + r")*\}"
_B1 = r"\{(?:[^{}\"\n]|" + _STR + "|" + _B0 + r")*\}"
_B2 = r"\{(?:[^{}\"\n]|" + _STR + "|" + _B1 + r")*\}"
_B3 = r"\{(?:[^{}\"\n]|" + _STR + "|" + _B2 + r")*\}"
_WORDS = r"[^,{}\"()\[\]\n]+"
_IOTA = r"\[[0-9, \t]*\][ \t]*<=[ \t]*\[[0-9, \t]*\](?:[ \t]*T\([0-9, \t]*\))?"
_OPERAND = r"(?:" + _SHAPE + r"[ \t]+)?%?" + _ID


class _Fast:
    """The patterns of the fast reading, compiled on first use (a module read without
    strict mode does not pay for them)."""

    def __init__(self) -> None:
        self.head = re.compile(r"[ \t]*(?:ROOT[ \t]+)?%?(" + _ID + r")[ \t]*=[ \t]*(?:(" + _SHAPE
                               + r")[ \t]+)?([a-z][a-z0-9\-]*)\(")
        # possessive repeats: no backtracking state is kept per operand of a long list
        self.plain_operands = re.compile(r"[ \t]*+(?:%?" + _ID + r"[ \t]*+(?:,[ \t]*+%?" + _ID
                                         + r"[ \t]*+)*+)?+")
        self.shaped_operands = re.compile(r"[ \t]*+" + _OPERAND + r"[ \t]*+(?:,[ \t]*+" + _OPERAND
                                          + r"[ \t]*+)*+")
        self.name = re.compile(r"%?(" + _ID + r")")
        self.shaped_operand = re.compile(r"(?:^|,)[ \t]*(?:(" + _SHAPE + r")[ \t]+)?%?(" + _ID + r")")
        self.operand = re.compile(r"[ \t]*(?:(" + _SHAPE + r")[ \t]+)?%?(" + _ID + r")[ \t]*(?:,|$)")
        self.attr = re.compile(r"[ \t]*,[ \t]*(" + _ID + r")=(" + _STR + "|" + _B3 + "|" + _IOTA + "|"
                               + _WORDS + r")[ \t]*(?=,|\r?\n?$)")


_fast: _Fast | None = None


def _fast_patterns() -> _Fast:
    global _fast
    if _fast is None:
        _fast = _Fast()
    return _fast


#: what is said of a problem in an instruction written as an operand: XLA's parser notes the
#: problem but goes on, and makes its holder without that operand (docs/decisions.md)
WRITTEN_AS_OPERAND = ("an instruction written as an operand: XLA's parser drops such an operand without "
                      "a word, or refuses the instruction holding it")


#: operand counts beyond a fixed arity: (test, message)
_COUNT_RULES = {
    "reduce": (lambda n: n % 2 == 0, "expects an even number of operands, but has {n} operands"),
    "reduce-window": (lambda n: n % 2 == 0, "expects an even number of operands, but has {n} operands"),
    "scatter": (lambda n: n % 2 == 1, "expects an odd number of operands, but has {n} operands"),
    "dynamic-slice": (lambda n: n >= 1, "Expected at least one operand."),
    "dynamic-update-slice": (lambda n: n >= 2, "Expected at least two operands."),
    "dynamic-reshape": (lambda n: n >= 1, "Expected at least one operand."),
    "conditional": (lambda n: n >= 2, "expects a branch index and at least one branch operand"),
    # counted from below only: XLA's parser reads more, and stops the process on fewer
    "dot": (lambda n: n >= 2, "expects at least 2 operands, but has {n} operands"),
    "rng-bit-generator": (lambda n: n >= 1, "expects at least 1 operands, but has {n} operands"),
}
_ASYNC = frozenset({"async-start", "async-update", "async-done"})
_UNUSUAL_DIMS = re.compile(r"[<=?]")
_REFERENCE_KINDS = frozenset({Kind.COMPUTATION, Kind.COMPUTATION_LIST, Kind.INSTRUCTION_LIST})
_CALLEE_KINDS = frozenset({Kind.COMPUTATION, Kind.COMPUTATION_LIST})
_CACHE_SIZE = 1 << 14

# an output index of input_output_alias, before its ':'
_ALIAS_OUTPUT = re.compile(r"\{([-0-9,\s]*)\}\s*:")
#: the collectives whose replica groups use_global_device_ids=true changes: XLA's parser demands a
#: channel_id with it (all-gather, which takes it too, it lets be)
_GROUP_MODE = frozenset({"all-reduce", "all-reduce-start", "reduce-scatter"})
#: opcodes whose ``dimensions`` must hold exactly one entry
_ONE_DIMENSION = {"sort", "concatenate", "scan", "all-to-all", "ragged-all-to-all"}
#: opcodes whose ``dimensions`` XLA's parser takes the first entry of: one at least (an empty
#: list it refuses, or stops the process on), more are read
_FIRST_DIMENSION = {"all-gather", "all-gather-start", "reduce-scatter", "get-dimension-size", "set-dimension-size"}


class _Instr:
    """One instruction's source read again: where each piece is, in its own text."""

    __slots__ = ("text", "shape_text", "opcode_at", "operands", "names", "shapes", "operands_at",
                 "operands_end", "attrs", "inline")

    def __init__(self, text: str, inline: dict[int, tuple[int, str]] | None = None) -> None:
        self.text = text
        #: operands written as instructions: where each starts -> (where it ends, its name)
        self.inline = inline
        self.shape_text: tuple[str, int] | None = None
        self.opcode_at = 0
        #: (shape, at, name, name_at) of each operand; None until needed when no operand has a shape
        self.operands: list[tuple[str | None, int, str, int]] | None = []
        self.names: list[str] = []
        #: the shape written before each operand (None: none), when the fast reading kept no places
        self.shapes: list[str | None] | None = None
        self.operands_at = 0
        self.operands_end = 0
        self.attrs: list[tuple[str, int, str, int]] = []  # name, at, value, value_at

    def with_shape(self, shape_text: str, at: int) -> _Instr:
        """The same instruction read with another shape (written at ``at``)."""
        view = copy.copy(self)
        view.shape_text = (shape_text, at)
        return view

    def value_at(self, key: str, default: int | None = None) -> int:
        """Where the value of attribute ``key`` starts (``default`` when it is not written)."""
        at = next((vat for k, _a, _v, vat in self.attrs if k == key), default)
        assert at is not None, key
        return at


class _Checker:
    def __init__(self, module: Module) -> None:
        self.module = module
        self.filename = module.filename
        self.defined: set[str] = set()  # computations defined so far
        self.by_name: dict[str, Computation] | None = None  # every computation, once a rule asks
        #: tuple and dynamic shapes read already (long tuple shapes repeat in big modules)
        self.shapes: set[str | None] = set()
        #: (attribute, value text) -> value read, for the values a module repeats
        self.values: dict[tuple[str, str], object] = {}
        #: shape texts whose syntax is checked already (a module repeats its shapes)
        self.spelled: set[str] = set()
        #: the computation each async-start calls, and that start (XLA lets one async op call it)
        self.async_calls: dict[str, str] = {}
        #: the shape XLA's parser works out for each instruction written without one (by id)
        self.inferred: dict[int, str] = {}
        #: each computation checked: its parameters' names by number
        self.parameters: dict[str, dict[int, str]] = {}
        #: the signatures asked for so far (:meth:`program`)
        self.programs: dict[str, Program | None] = {}

    # ----------------------------------------------------------------- shapes
    def built(self, instr: Instruction) -> str | None:
        """The shape XLA's parser gives ``instr`` (:func:`_built_shape`); None when not known."""
        return _built_shape(instr, self.inferred)

    def operand_shape(self, r: _Instr, k: int, local: dict[str, Instruction]) -> Shape | None:
        """The shape of operand ``k``: as declared before its name, else as its instruction's
        shape; None when neither is known."""
        declared = r.shapes[k] if r.shapes is not None and k < len(r.shapes) else None
        producer = local.get(r.names[k]) if k < len(r.names) else None
        text = declared if declared is not None else (None if producer is None else self.built(producer))
        return None if text is None else _parsed_shape(text)

    def program(self, name: str) -> Program | None:
        """The signature of computation ``name`` as XLA's parser computes it from the body
        (``ComputeProgramShape``), once the computation is checked; None before."""
        if name in self.programs:
            return self.programs[name]
        params = self.parameters.get(name)
        comp = self.module.computation(name) if params is not None else None
        program = None
        if comp is not None and params is not None:
            def shape(instr: Instruction | None) -> Shape | None:
                text = None if instr is None else self.built(instr)
                return None if text is None else _parsed_shape(text)

            program = Program(tuple(shape(comp.get(params[n])) for n in range(len(params))), shape(comp.root))
        self.programs[name] = program
        return program

    def _infer(self, instr: Instruction, r: _Instr, opcode: str, attrs: dict[str, object],
               local: dict[str, Instruction]) -> None:
        """Work out the shape of ``instr``, written without one, as XLA's parser does
        (:mod:`hlo_rewrite.inference`), for the instructions after it; refuse it where XLA's parser
        finds none."""
        operands = []
        for name in r.names:
            producer = local.get(name)
            text = None if producer is None else self.built(producer)
            operands.append(None if text is None else _parsed_shape(text))
        try:
            shape = infer(opcode, operands, attrs, self.program)
        except NoShape as exc:
            raise self.error(instr, r.text, r.opcode_at,
                             f"failed to infer shape for opcode: {opcode}, error: {exc.message}") from None
        if shape is not None:
            self.inferred[id(instr)] = shape.text()

    # ----------------------------------------------------------------- errors
    def error(self, instr: Instruction, text: str, offset: int, message: str) -> HloParseError:
        line = instr.line + text.count("\n", 0, offset)
        start = text.rfind("\n", 0, offset) + 1
        end = text.find("\n", offset)
        src = text[start : end if end >= 0 else len(text)].rstrip("\r")
        return HloParseError(message, filename=self.filename, line=line, column=offset - start + 1,
                             source_line=src)

    # ----------------------------------------------------------------- reading
    def read(self, instr: Instruction, text: str, inline: dict[int, tuple[int, str]] | None = None,
             anonymous: bool = False) -> _Instr:
        if "/*" not in text and "//" not in text and inline is None and not anonymous:
            r = self._read_fast(instr, text)
            if r is not None:
                return r
        return self._read_careful(instr, text, inline, anonymous)

    def _read_fast(self, instr: Instruction, text: str) -> _Instr | None:
        """The plain one-line spellings XLA prints, read with a few regular expressions;
        None for anything else (then the careful reading decides)."""
        fast = _fast_patterns()
        m = fast.head.match(text)
        if m is None or m.group(3) != instr.opcode:
            return None
        r = _Instr(text)
        if m.group(2) is not None:
            r.shape_text = (m.group(2), m.start(2))
        r.opcode_at = m.start(3)
        open_at = m.end()
        if instr.opcode == "constant":
            try:
                close = lexicon.matching_close(text, open_at - 1)
            except ValueError:
                return None
        else:
            close = text.find(")", open_at) + 1
            if close <= 0 or text.find("(", open_at, close) >= 0:
                return None
        r.operands_at, r.operands_end = open_at, close - 1
        if instr.opcode not in ("parameter", "constant"):
            pos = open_at
            end = close - 1
            if fast.plain_operands.fullmatch(text, pos, end) is not None:
                r.operands = None
                r.names = fast.name.findall(text, pos, end)
            elif fast.shaped_operands.fullmatch(text[pos:end]) is not None:
                inner = text[pos:end]
                # every operand with or without its shape: shapes kept, places found if needed
                pairs = fast.shaped_operand.findall(inner)
                r.operands = None
                r.names = [name for _shape, name in pairs]
                r.shapes = [shape or None for shape, _name in pairs]
            elif text[pos:end].strip(" \t"):
                operand = fast.operand.match
                while True:
                    o = operand(text, pos, end)
                    if o is None:
                        return None
                    r.operands.append((o.group(1), o.start(1), o.group(2), o.start(2)))  # type: ignore[union-attr]
                    r.names.append(o.group(2))
                    pos = o.end()
                    if pos >= end:
                        break
        pos = close
        n = len(text)
        while n and text[n - 1] in "\r\n":
            n -= 1
        attr = fast.attr.match
        while pos < n:
            a = attr(text, pos, n)
            if a is None:
                rest = text[pos:n]
                if rest.strip(" \t"):
                    return None
                break
            r.attrs.append((a.group(1), a.start(1), a.group(2), a.start(2)))
            pos = a.end()
        return r

    def _read_careful(self, instr: Instruction, text: str, inline: dict[int, tuple[int, str]] | None = None,
                      anonymous: bool = False) -> _Instr:
        """``anonymous``: the text is an instruction written as an operand (shape, opcode and
        operands, no name); ``inline``: the operands written so in this one's text."""
        r = _Instr(text, inline)
        fail = self.error
        pos = lexicon.skip_trivia(text, 0)
        if not anonymous:
            if text.startswith("ROOT", pos):
                pos = lexicon.skip_trivia(text, pos + 4)
            m = _NAME_AT.match(text, pos)
            assert m is not None  # the reader has read the name
            pos = lexicon.skip_trivia(text, m.end())
            assert text.startswith("=", pos)
            pos = lexicon.skip_trivia(text, pos + 1)
        if not text.startswith(instr.opcode, pos) or _is_shape_start(text, pos):
            end = self._shape_end(instr, text, pos)
            r.shape_text = (text[pos:end], pos)
            pos = lexicon.skip_trivia(text, end)
        r.opcode_at = pos
        pos = lexicon.skip_trivia(text, pos + len(instr.opcode))
        if not text.startswith("(", pos):
            raise fail(instr, text, pos, f"expects '(' after the opcode {instr.opcode}")
        try:
            close = lexicon.matching_close(text, pos)
        except ValueError as exc:
            raise fail(instr, text, pos, str(exc)) from None
        r.operands_at, r.operands_end = pos + 1, close - 1
        if instr.opcode not in ("parameter", "constant"):
            self._read_operands(instr, r)
        self._read_attrs(instr, r, close)
        return r

    def _shape_end(self, instr: Instruction, text: str, pos: int) -> int:
        got = shape_end(text, pos)
        if isinstance(got, tuple):
            raise self.error(instr, text, got[0], f"malformed shape: {got[1]}" if got[0] > pos else "expects a shape")
        return got

    def _read_operands(self, instr: Instruction, r: _Instr) -> None:
        text = r.text
        pos = lexicon.skip_trivia(text, r.operands_at)
        if pos >= r.operands_end:
            return
        inline = r.inline or {}
        while True:
            shape: str | None = None
            shape_at = pos
            written = inline.get(pos)
            if written is not None:  # an instruction written as the operand: checked on its own
                after, name = written
            else:
                if text.startswith("(", pos) or _is_shape_start(text, pos):
                    end = self._shape_end(instr, text, pos)
                    shape = text[pos:end]
                    pos = lexicon.skip_trivia(text, end)
                m = _NAME_AT.match(text, pos)
                if m is None or m.end() > r.operands_end:
                    raise self.error(instr, text, pos, "expects an operand name")
                after, name = m.end(), m.group(1)
            r.operands.append((shape, shape_at, name, pos))  # type: ignore[union-attr]
            r.names.append(name)
            pos = lexicon.skip_trivia(text, after)
            if pos >= r.operands_end:
                return
            if text[pos] != ",":
                raise self.error(instr, text, pos, "expects ',' or ')' after an operand")
            pos = lexicon.skip_trivia(text, pos + 1)
            if pos >= r.operands_end:
                raise self.error(instr, text, pos, "expects an operand after ','")

    def _operand_at(self, instr: Instruction, r: _Instr, k: int) -> int:
        """Where operand ``k`` is written (read carefully when the fast reading kept no places)."""
        if r.operands is None:
            r.operands, names = [], r.names
            r.names = []
            self._read_operands(instr, r)
            r.names = names
        return r.operands[k][3]

    def _read_attrs(self, instr: Instruction, r: _Instr, pos: int) -> None:
        text = r.text
        n = len(text)
        while True:
            pos = lexicon.skip_trivia(text, pos)
            if pos >= n:
                return
            if text[pos] != ",":
                raise self.error(instr, text, pos, f"expects ',' before an attribute, found {text[pos]!r}")
            pos = lexicon.skip_trivia(text, pos + 1)
            m = _ATTR_NAME_AT.match(text, pos)
            if m is None:
                raise self.error(instr, text, pos, "expects an attribute name=value")
            vstart = m.end()
            try:
                vend = lexicon.attribute_value_end(text, vstart, m.group(1))
            except lexicon.UnclosedError as exc:
                raise self.error(instr, text, exc.offset, str(exc)) from None
            except ValueError as exc:
                raise self.error(instr, text, vstart, str(exc)) from None
            r.attrs.append((m.group(1), pos, text[vstart:vend], vstart))
            pos = vend

    # ----------------------------------------------------------------- checks
    def check(self) -> None:
        attrs = self.check_header()
        comps = [c for c in self.module.computations if c.inline_in is None]
        head = self.module.source[: comps[0].source_span[0]] if comps and comps[0].source_span else ""
        if "\\" in head:  # the header line's and the stack frame tables' strings
            for offset, message in _escape_problems(head):
                raise self._header_error(offset, message)
        results: dict[str, tuple[int, str]] = {}
        if not self.module.single_instruction:  # (a text that is one instruction has no heads)
            for offset, message in head_problems(self.module, attrs, results):
                raise self._header_error(offset, message)
        for comp in self.module.computations:
            self.check_computation(comp)
            if comp.inline_in is not None:
                continue  # (named by its holder's value alone)
            if comp.name in results:
                self._check_result(comp, *results[comp.name])
            self.defined.add(comp.name)
        for name, _at, value, vat in attrs:
            if name == "input_output_alias":
                self._check_alias_outputs(value, vat)

    def _check_alias_outputs(self, value: str, at: int) -> None:
        """Each output index of ``input_output_alias`` names a part of ENTRY's result shape, as
        XLA's alias configuration demands of the module it has read."""
        entry = next((c for c in self.module.computations if c.is_entry), None)
        declared = None if entry is None else self.built(entry.root)
        if declared is None:
            return
        result = _shape_of(declared)
        plain = value if "/" not in value else _no_comments(value)  # (offsets kept without comments)
        for m in _ALIAS_OUTPUT.finditer(plain):
            index = [int(i) for i in m.group(1).split(",") if i.strip()]
            shape: Shape | None = result
            for i in index:
                shape = shape.tuple_shapes[i] if shape is not None and shape.is_tuple and 0 <= i < len(shape.tuple_shapes) else None
            if shape is None:
                where = at + m.start() if plain is value else at
                raise self._header_error(where, f"Trying to set up alias at {{{','.join(map(str, index))}}} which is an "
                                         f"invalid index for shape {result.text()}")

    def _check_result(self, comp: Computation, offset: int, written: str) -> None:
        """The signature's result shape against the root's, as XLA's parser compares them once it
        has read the body (``ShapeUtil::Compatible``: layouts and dynamic bounds aside)."""
        root = comp.root
        declared = self.built(root)
        if declared is None:
            return
        try:
            ours, theirs = parse_shape(_no_comments(written)), _shape_of(declared)
        except HloError:  # the syntax is checked already: a spelling parse_shape does not take
            return
        if not compatible(ours, theirs):
            raise self._header_error(offset, f"Shape of computation {comp.name}, {ours.text()}, is not compatible "
                                     f"with that of its root instruction {root.name}, {theirs.text()}")

    def check_header(self) -> list[tuple[str, int, str, int]]:
        """Check the ``HloModule`` line's attributes; (name, offset, value, value offset) of each."""
        try:
            attrs = list(_header_attrs(self.module.source))
        except ValueReadError as exc:
            raise self._header_error(exc.offset, exc.message) from None
        seen: set[str] = set()
        for name, at, value, vat in attrs:
            spec = MODULE_ATTRS.get(name)
            if spec is None:
                raise self._header_error(at, f'unexpected attribute "{name}" in the module header. '
                                         f"Allowed attributes: {', '.join(sorted(MODULE_ATTRS))}")
            if name in seen:
                raise self._header_error(at, f"attribute {name} already exists")
            seen.add(name)
            self._value_in_header(spec, value, vat)
        return attrs

    def _header_error(self, offset: int, message: str) -> HloParseError:
        src = self.module.source
        line = src.count("\n", 0, offset) + 1
        start = src.rfind("\n", 0, offset) + 1
        end = src.find("\n", offset)
        return HloParseError(message, filename=self.filename, line=line, column=offset - start + 1,
                             source_line=src[start : end if end >= 0 else len(src)].rstrip("\r"))

    def _value_in_header(self, spec: AttrSpec, value: str, at: int) -> None:
        try:
            if spec.name == "entry_computation_layout":
                _check_layout(value)
            else:
                read(spec.kind, value, spec.name)
        except ValueReadError as exc:
            raise self._header_error(at + exc.offset, f"error parsing attribute {spec.name}: {exc.message}") from None
        if spec.name == "origin_recovery_table":
            self._check_recovery_modules(value, at)

    def _check_recovery_modules(self, value: str, at: int) -> None:
        """The modules an ``origin_recovery_table`` holds (the strings between its entries,
        each after the names it maps), each read in strict mode, as XLA's parser reads them; an
        error in one stands where it is in this file (XLA names only the attribute)."""
        from .reader import parse_module  # (the reader imports this module)

        for start, end in _strings_at_top(value):
            written = value[start:end]
            try:
                parse_module(escapes.c_unescape(written), self.filename, strict=True)
            except HloError as exc:
                message = f"in a module of origin_recovery_table: {exc.message}"
                if "\\" in written or exc.line is None:
                    # escapes move the columns: the module's own line and column are said instead
                    where = f" (its line {exc.line}, column {exc.column})" if exc.line is not None else ""
                    raise self._header_error(at + start, message + where) from None
                lines = written.split("\n")
                line = min(exc.line, len(lines))
                offset = sum(len(x) + 1 for x in lines[: line - 1]) + min((exc.column or 1) - 1, len(lines[line - 1]))
                raise self._header_error(at + start + offset, message) from None

    def check_computation(self, comp: Computation) -> None:
        params: dict[int, str] = {}
        local: dict[str, Instruction] = {}
        source = self.module.source
        for instr in comp.instructions:
            text = instr.text
            anon = instr.anonymous_span
            if anon is not None and instr.written_in is not None:
                # written inside another's text: its own part, from the start of its line (blanked
                # up to it) so that places are counted as in the source
                start = self.module.line_starts[instr.line - 1]
                text = " " * (anon[0] - start) + source[anon[0] : anon[1]]
                try:
                    self.check_instruction(instr, text, local, params, _inline(instr, start), True)
                except HloError as exc:
                    exc.reworded(f"{exc.message} ({WRITTEN_AS_OPERAND})")
                    raise
            elif text is not None and not instr.implied:
                span = instr.source_span if instr.inline_operands is not None else None
                inline = _inline(instr, span[0]) if span is not None else None
                # a text that is one instruction may leave out 'name ='
                unnamed = self.module.single_instruction and _is_shape_start(text, lexicon.skip_trivia(text, 0))
                self.check_instruction(instr, text, local, params, inline, unnamed)
            local[instr.name] = instr
        self.parameters[comp.name] = params
        beyond = [n for n in params if n >= len(params)]
        if beyond:
            # numbers with a gap: XLA's parser stops the process on it (a failed check)
            param = local[params[min(beyond)]]
            text = param.text or ""
            at = text.find("parameter(")
            raise self.error(param, text, at + len("parameter(") if at >= 0 else 0,
                             f"invalid parameter number: expected [0, {len(params)}), got {min(beyond)}")

    def check_instruction(self, instr: Instruction, text: str, local: dict[str, Instruction],
                          params: dict[int, str], inline: dict[int, tuple[int, str]] | None = None,
                          anonymous: bool = False) -> None:
        if instr.name in RESERVED and not anonymous:
            self._check_bare_name(instr, text)
        try:
            r = self.read(instr, text, inline, anonymous)
        except ValueError as exc:  # the walker's own words (an unterminated string or comment)
            raise self.error(instr, text, len(text) - len(text.lstrip(" \t")), str(exc)) from None
        text = r.text
        if "\\" in text:
            for offset, message in _escape_problems(text, _json_text_spans(r)):
                raise self.error(instr, text, offset, message)
        opcode = instr.opcode
        spec = spec_of(opcode)
        if spec is None:
            close = closest_opcode(opcode)
            hint = f" (did you mean '{close}'?)" if close else ""
            raise self.error(instr, text, r.opcode_at, f"unknown opcode '{opcode}'{hint}")
        self._check_spellings(instr, r)
        if r.shape_text is None and spec.name not in SHAPE_INFERRED:
            raise self.error(instr, text, r.opcode_at, f"cannot infer shape for opcode: {spec.name}")
        # the reader has checked a plain array shape's element type: any other shape is read
        # here, and a plain one only where a rule looks inside it
        shape_text = r.shape_text[0] if r.shape_text is not None else ""
        shape = None
        if opcode in ("constant", "infeed") or spec.name in _ASYNC:
            shape = self._shape(instr, r)
        elif (shape_text.startswith("(") or _UNUSUAL_DIMS.search(shape_text) is not None) and (
            instr.shape not in self.shapes
        ):
            self._shape(instr, r)
            if shape_text == instr.shape:
                self.shapes.add(instr.shape)  # the reader's own (shared) string: only a set entry
        wrapped = split_async_opcode(opcode)
        if opcode == "parameter":
            self._check_parameter(instr, r, params)
        elif opcode == "constant":
            if shape is None:
                raise self.error(instr, text, r.opcode_at, "a constant needs its shape")
            from .literals import check_literal

            try:
                check_literal(shape, text[r.operands_at : r.operands_end], r.operands_at)
            except ValueReadError as exc:
                raise self.error(instr, text, exc.offset, exc.message) from None
        else:
            self._check_operands(instr, r, spec, local)
            if wrapped is not None and wrapped[0] == "async-start":
                inner = spec_of(wrapped[1])
                assert inner is not None  # (split_async_opcode names known opcodes only)
                self._check_counts(instr, r, inner, local, preset=True)
        attrs = self._check_attrs(instr, r, spec, wrapped, local)
        self._check_rules(instr, r, spec, shape, attrs, local, wrapped)
        if r.shape_text is None and opcode not in BUILT_SHAPES:
            self._infer(instr, r, spec.name, attrs, local)

    def _check_bare_name(self, instr: Instruction, text: str) -> None:
        """A name XLA's lexer reads as a keyword or an element type, unless written with ``%``
        (``ROOT = f32[] ...`` is read as an instruction named ROOT, which XLA refuses)."""
        pos = lexicon.skip_trivia(text, 0)
        if instr.is_root and text.startswith("ROOT", pos):
            pos = lexicon.skip_trivia(text, pos + 4)
        problem = bare_name_problem(instr.name)
        if problem is not None and not text.startswith("%", pos):
            raise self.error(instr, text, pos, problem)

    def _check_spellings(self, instr: Instruction, r: _Instr) -> None:
        """The syntax of the instruction's shape and of the shapes written before its operands."""
        spelled = self.spelled
        if r.shape_text is not None and r.shape_text[0] not in spelled:
            self._spelled(instr, r.text, *r.shape_text)
        if r.shapes is not None:
            if all(s is None or s in spelled for s in r.shapes):
                return
            self._operand_at(instr, r, 0)  # the places of the shapes, then checked below
        for shape_text, at, _name, _name_at in r.operands or ():
            if shape_text is not None and shape_text not in spelled:
                self._spelled(instr, r.text, shape_text, at)

    def _spelled(self, instr: Instruction, text: str, shape_text: str, at: int) -> None:
        """The syntax of a shape, the instruction's or one declared before an operand, and, in a
        tuple, its elements' layouts: XLA's parser refuses, without a message, one that is not an
        order of the element's dimensions (it reads such a layout on an array of its own)."""
        problem = shape_syntax_error(shape_text)
        if problem is not None:
            raise self.error(instr, text, at + problem[0], f"malformed shape '{shape_text}': {problem[1]}")
        if _no_comments(shape_text).lstrip().startswith("("):
            shape = _parsed_shape(shape_text)
            if shape is not None:
                self._check_layouts(instr, text, _array_leaves(shape), at)
        self.spelled.add(shape_text)

    def _check_layouts(self, instr: Instruction, text: str, leaves: list[Shape], at: int) -> None:
        problem = _unordered_layout(leaves)
        if problem is not None:
            raise self.error(instr, text, at, problem)

    def _shape(self, instr: Instruction, r: _Instr) -> Shape | None:
        if r.shape_text is None:
            return None
        text, at = r.shape_text
        try:
            shape = _shape_of(_no_comments(text))
        except HloError as exc:
            raise self.error(instr, r.text, at, exc.message) from None
        # XLA's parser stops the process on a constant's layout that is not an order of its
        # dimensions (a tuple's elements are checked with the spelling)
        if instr.opcode == "constant" and not shape.is_tuple:
            self._check_layouts(instr, r.text, [shape], at)
        return shape

    def _check_parameter(self, instr: Instruction, r: _Instr, params: dict[int, str]) -> None:
        body = r.text[r.operands_at : r.operands_end]
        try:
            number = read(Kind.INT, body)
        except ValueReadError as exc:
            raise self.error(instr, r.text, r.operands_at + exc.offset,
                             f"expects a parameter number: {exc.message}") from None
        assert isinstance(number, int)
        if number < 0:
            raise self.error(instr, r.text, r.operands_at, "parameter number must be >= 0")
        if number in params:
            raise self.error(instr, r.text, r.operands_at, f"Duplicate parameter number {number} "
                             f"(also '{params[number]}')")
        params[number] = instr.name

    def _check_counts(self, instr: Instruction, r: _Instr, spec: OpcodeSpec, local: dict[str, Instruction],
                      preset: bool = False) -> None:
        """The number of operands ``spec``'s opcode takes. ``preset``: the instruction a shorthand
        start wraps (``add-start(a, b)``), which XLA's parser makes from the start's operands
        without counting them: on fewer than its opcode takes it stops the process, more it
        reads; the rules after the count hold."""
        n = len(r.names)
        if spec.arity is not None and n < spec.arity and preset:
            raise self.error(instr, r.text, r.operands_at - 1, f"the {spec.name} that {instr.opcode} wraps takes "
                             f"{spec.arity} operand{'s' if spec.arity != 1 else ''}, and it has {n}")
        if spec.arity is not None and n != spec.arity and not preset:
            raise self.error(instr, r.text, r.operands_at - 1,
                             f"expects {spec.arity} operands, but has {n} operands")
        rule = _COUNT_RULES.get(spec.name)
        if rule is not None and not rule[0](n):
            raise self.error(instr, r.text, r.operands_at - 1, rule[1].format(n=n))
        first_index = _FIRST_INDEX.get(spec.name)
        if first_index is not None:
            self._check_index_count(instr, r, first_index, local)

    def _check_operands(self, instr: Instruction, r: _Instr, spec: OpcodeSpec,
                        local: dict[str, Instruction]) -> None:
        self._check_counts(instr, r, spec, local)
        if r.shapes is not None:
            for k, (shape_text, name) in enumerate(zip(r.shapes, r.names, strict=True)):
                producer = local.get(name)
                if shape_text is not None and producer is not None and self.built(producer) not in (None, shape_text):
                    self._operand_at(instr, r, k)  # finds the places, then checks below
                    break
        for shape_text, at, name, _name_at in r.operands or ():
            if shape_text is None:
                continue
            producer = local.get(name)
            built = None if producer is None else self.built(producer)
            if built is None or built == shape_text:
                continue
            try:
                declared = _shape_of(_no_comments(shape_text))
            except HloError as exc:
                raise self.error(instr, r.text, at, exc.message) from None
            own = _shape_of(built)
            if not compatible(declared, own):
                raise self.error(instr, r.text, at,
                                 f"the declared operand shape {declared.text()} is not compatible with "
                                 f"the shape {own.text()} of '{name}'")

    def _check_attrs(self, instr: Instruction, r: _Instr, spec: OpcodeSpec,
                     wrapped: tuple[str, str] | None, local: dict[str, Instruction]) -> dict[str, object]:
        allowed, required = _allowed(instr.opcode, spec, wrapped)
        values: dict[str, object] = {}
        cache = self.values
        for name, at, value, vat in r.attrs:
            if name in values:
                raise self.error(instr, r.text, at, f"attribute {name} already exists")
            a = allowed.get(name)
            if a is None:
                listed = ", ".join(sorted(allowed))
                raise self.error(instr, r.text, at, f'unexpected attribute "{name}" for {instr.opcode}. '
                                 f"Allowed attributes: {listed}")
            if (instr.inline_callees is not None and a.kind in _CALLEE_KINDS
                    and value.startswith("{", lexicon.skip_trivia(value, 0))):
                value = instr.attr_text(name) or value  # computations written inline: their names
            key = (name, value)
            got = cache.get(key, cache)
            if got is cache:
                try:
                    got = read(a.kind, value, name)
                except UnexpandedGroups:
                    got = None  # XLA's parser reads them (a pass that needs them says where they fail)
                except ValueReadError as exc:
                    raise self.error(instr, r.text, vat + exc.offset,
                                     f"error parsing attribute {name}: {exc.message}") from None
                if len(cache) > _CACHE_SIZE:
                    cache.clear()
                cache[key] = got
            values[name] = got
            if a.kind in _REFERENCE_KINDS:
                self._check_reference(instr, r, name, a.kind, got, vat, local)
        spec_name = spec.name
        if spec_name == "conditional" and r.names:
            required = required | self._branch_attrs(instr, r, local)
        if spec_name == "broadcast" and r.names:
            operand_shape = self.operand_shape(r, 0, local)
            if operand_shape is not None and (operand_shape.rank or not is_array(operand_shape)):
                # only a scalar may leave them out (not a tuple, a token or an opaque value)
                required = required | {"dimensions"}
        if len(values) >= len(required) and required.issubset(values):
            return values
        for name in sorted(required):
            if name not in values:
                raise self.error(instr, r.text, r.operands_end + 1,
                                 f"attribute {name} is expected but not seen")
        return values

    def _branch_attrs(self, instr: Instruction, r: _Instr, local: dict[str, Instruction]) -> set[str]:
        index = self.operand_shape(r, 0, local)
        if index is None:
            return set()
        if index.is_tuple or index.rank:
            raise self.error(instr, r.text, self._operand_at(instr, r, 0), "The first operand must be a scalar")
        if index.element_type == "pred":
            names = {"true_computation", "false_computation"}
        elif index.element_type == "s32":
            names = {"branch_computations"}
        else:
            raise self.error(instr, r.text, self._operand_at(instr, r, 0),
                             "The first operand must be a scalar of PRED or S32")
        other = {"true_computation", "false_computation", "branch_computations"} - names
        for name, at, _value, _vat in r.attrs:
            if name in other:
                raise self.error(instr, r.text, at, f'unexpected attribute "{name}" for a conditional on '
                                 f"{index.element_type}")
        return names

    def _check_reference(self, instr: Instruction, r: _Instr, name: str, kind: str, value: object,
                         at: int, local: dict[str, Instruction]) -> None:
        if kind == Kind.COMPUTATION:
            names = [str(value)]
        elif kind in (Kind.COMPUTATION_LIST, Kind.INSTRUCTION_LIST):
            names = [str(v) for v in value]  # type: ignore[attr-defined]
        else:
            return
        for ref in names:
            if kind == Kind.INSTRUCTION_LIST:
                if ref not in local:
                    raise self.error(instr, r.text, _find_word(r.text, ref, at),
                                     f"instruction '{ref}' is not defined")
            elif ref not in self.defined and not any(c.name == ref for c in instr.inline_callees or ()):
                known = any(c.name == ref for c in self.module.computations)
                why = "is defined after its use" if known else "does not exist"
                raise self.error(instr, r.text, _find_word(r.text, ref, at),
                                 f"computation '{ref}' {why} (XLA reads callees before their callers)")

    def _check_rules(self, instr: Instruction, r: _Instr, spec: OpcodeSpec, shape: Shape | None,
                     attrs: dict[str, object], local: dict[str, Instruction],
                     wrapped: tuple[str, str] | None, preset: bool = False) -> None:
        """The rules of ``spec``'s opcode; ``preset``: for the instruction a shorthand start
        wraps, which XLA's parser makes from the start's operands without counting them."""
        name = spec.name
        if name == "tuple" and r.shape_text is not None and not preset:
            self._check_tuple(instr, r)
        if name in _ARRAY_SHAPED and r.shape_text is not None:
            written = _parsed_shape(r.shape_text[0])
            if written is not None and not is_array(written):
                raise self.error(instr, r.text, r.shape_text[1], f"a {name} gives an array, not "
                                 f"{_no_comments(r.shape_text[0])}")
        for k in _ARRAY_OPERANDS.get(name, ()):
            self._check_array_operand(instr, r, k, local)
        if name == "recv" and r.shape_text is not None:
            written = _parsed_shape(r.shape_text[0])
            if written is not None and not (written.is_tuple and written.tuple_shapes):
                # XLA's parser makes the recv from the first element (and stops the process without it)
                raise self.error(instr, r.text, r.shape_text[1], "a recv's shape is a tuple whose first element "
                                 f"is the data received, not {_no_comments(r.shape_text[0])}")
        if name in _ONE_DIMENSION and "dimensions" in attrs:
            dims = attrs["dimensions"]
            if len(dims) != 1:  # type: ignore[arg-type]
                at = r.value_at("dimensions")
                raise self.error(instr, r.text, at, f"{instr.opcode} expects exactly one dimension")
        if name in _FIRST_DIMENSION and attrs.get("dimensions") == []:
            at = r.value_at("dimensions")
            raise self.error(instr, r.text, at, f"{instr.opcode} takes its dimension from the first of "
                             "dimensions={...}, and there is none")
        if name == "dynamic-reshape" and r.shape_text is not None:
            written = _parsed_shape(r.shape_text[0])
            if written is not None and len(r.names) != 1 + written.rank:
                raise self.error(instr, r.text, r.operands_at - 1, f"a dynamic-reshape takes its operand and one "
                                 f"size for each dimension of its shape, {1 + written.rank} "
                                 f"operand{'s' if written.rank else ''}; it has "
                                 f"{len(r.names)}")
        if name in ("reshape", "dynamic-reshape") and r.shape_text is not None and r.names:
            self._check_reshape(instr, r, local)
        if name == "recv-done" and r.names:
            operand = self.operand_shape(r, 0, local)
            if operand is not None and not operand.is_tuple:
                # XLA's parser makes the recv-done from the first element of its operand's shape
                at = self._operand_at(instr, r, 0)
                raise self.error(instr, r.text, at, f"a recv-done's operand is a recv, whose shape is a tuple; "
                                 f"'{r.names[0]}' is {operand.text()}")
        if name in ("partition-id", "replica-id") and r.shape_text is not None:
            # another shape stops XLA's parser (a failed check making the instruction)
            written = _parsed_shape(r.shape_text[0])
            if written is not None and (written.is_tuple or written.element_type != "u32" or written.dims):
                raise self.error(instr, r.text, r.shape_text[1], f"a {name} gives a u32[] scalar, "
                                 f"not {_no_comments(r.shape_text[0]).strip()}")
        if name == "conditional" and r.names:
            branches = attrs.get("branch_computations")
            count = len(branches) if isinstance(branches, list) else 2  # (the true and false ones)
            if len(r.names) != count + 1:
                raise self.error(instr, r.text, r.operands_at - 1, f"a conditional of {count} branches takes "
                                 f"{count + 1} operands, the index and one for each branch; it has {len(r.names)}")
        if name == "scan":
            self._check_scan(instr, r, attrs)
        if "parameter_replication" in attrs:
            self._check_replication(instr, r, name, shape, attrs["parameter_replication"])  # type: ignore[arg-type]
        collective = wrapped[1] if wrapped is not None and wrapped[0] == "async-start" else name
        if collective in _GROUP_MODE and attrs.get("use_global_device_ids") is True and "channel_id" not in attrs:
            raise self.error(instr, r.text, r.operands_at - 1,
                             "Cannot have use_global_device_ids=true without channel_id")
        if name == "collective-permute" or name == "collective-permute-start":
            pairs = attrs.get("source_target_pairs", [])
            if any(len(p) != 2 for p in pairs):  # type: ignore[attr-defined]
                at = r.value_at("source_target_pairs")
                raise self.error(instr, r.text, at, "expects 'source_target_pairs=' to be a list of pairs")
            if "slice_sizes" in attrs and len(r.names) != 4:  # the in-place form; without it, any count
                raise self.error(instr, r.text, r.operands_at - 1, "CollectivePermute and CollectivePermuteStart "
                                 "must have exactly four operands with slice_sizes")
        if name == "custom-call" and "to_apply" in attrs and "called_computations" in attrs:
            at = next(a for k, a, _v, _vat in r.attrs if k == "to_apply")
            raise self.error(instr, r.text, at, "A single instruction can't have both to_apply and "
                             "called_computations")
        if name == "custom-call" and "operand_layout_constraints" in attrs:
            self._check_layout_constraints(instr, r, attrs["operand_layout_constraints"], local)  # type: ignore[arg-type]
        if name == "infeed" and shape is not None and not (shape.is_tuple and shape.tuple_shapes):
            raise self.error(instr, r.text, r.opcode_at, "infeed must have a non-empty tuple shape")
        if name in ("async-start", "async-update", "async-done"):
            self._check_async(instr, r, name, shape, attrs, local, wrapped)
            if wrapped is not None and wrapped[0] == "async-start" and shape is not None:
                # the wrapped instruction gives the second element of the start's shape
                inner, inner_shape = spec_of(wrapped[1]), shape.tuple_shapes[1]
                assert inner is not None and r.shape_text is not None
                view = r.with_shape(inner_shape.text(), r.shape_text[1])
                self._check_rules(instr, view, inner, inner_shape, attrs, local, None, preset=True)
        if name in _CHANNEL_DONES and len(r.names) == 1:
            self._check_done_channel(instr, r, name, attrs, local)
        if name == "get-tuple-element" and len(r.names) == 1:
            self._check_tuple_index(instr, r, attrs, local)

    def _check_tuple_index(self, instr: Instruction, r: _Instr, attrs: dict[str, object],
                           local: dict[str, Instruction]) -> None:
        """A get-tuple-element of a ``tuple`` takes one of its operands: XLA's parser stops the
        process on an index beyond them (of any other operand it reads any index)."""
        producer = local.get(r.names[0])
        index = attrs.get("index")
        if producer is None or producer.opcode != "tuple" or not isinstance(index, int) or r.shape_text is None:
            return  # (without a shape, the shape inference refuses it)
        count = len(producer.operands)
        if not 0 <= index < count:
            raise self.error(instr, r.text, r.value_at("index", r.operands_end),
                             f"index {index} is out of range for the tuple '{producer.name}' of {count} operands")

    def _check_scan(self, instr: Instruction, r: _Instr, attrs: dict[str, object]) -> None:
        """A scan takes one operand for each parameter of its computation, and at least its
        ``num_carries`` of them (XLA's parser counts both)."""
        n = len(r.names)
        callee = attrs.get("to_apply")
        if self.by_name is None:
            self.by_name = {c.name: c for c in self.module.computations}
        comp = self.by_name.get(callee) if isinstance(callee, str) else None
        if comp is not None and len(comp.parameters()) != n:
            raise self.error(instr, r.text, r.operands_at - 1, f"expects {n} operands to match the number of "
                             f"parameters of to_apply, but to_apply has {len(comp.parameters())} parameters")
        carries = attrs.get("num_carries")
        if isinstance(carries, int) and not 0 <= carries <= n:
            at = r.value_at("num_carries")
            raise self.error(instr, r.text, at, f"expects at least {carries} operands to match the number of "
                             f"carries, but has {n} operands")

    def _check_reshape(self, instr: Instruction, r: _Instr, local: dict[str, Instruction]) -> None:
        """A reshape keeps its operand's number of elements (a bounded dimension counts its
        bound): on another, XLA's parser stops the process (a failed check making the
        instruction)."""
        result = _parsed_shape(r.shape_text[0])  # type: ignore[index]
        operand = self.operand_shape(r, 0, local)
        if result is None or operand is None or result.is_tuple or operand.is_tuple:
            return
        if -1 in result.dims or -1 in operand.dims:
            return  # an unbounded dimension ('?'): not counted here
        before, after = math.prod(operand.dims), math.prod(result.dims)
        if before != after:
            raise self.error(instr, r.text, r.opcode_at, f"a {instr.opcode} keeps the number of elements: its operand "
                             f"has {before}, its shape {after}")

    def _check_replication(self, instr: Instruction, r: _Instr, name: str, shape: Shape | None,
                           flags: list[bool]) -> None:
        """``parameter_replication``: one flag for each leaf of the shape, and on a parameter
        only (elsewhere XLA's parser stops the process on it, a failed check)."""
        at = r.value_at("parameter_replication")
        shape = shape if shape is not None else self._shape(instr, r)
        leaves = _leaf_count(shape) if shape is not None else len(flags)
        if leaves != len(flags):
            raise self.error(instr, r.text, at, f"parameter has {leaves} leaf buffers, but parameter_replication "
                             f"has {len(flags)} elements.")
        if name != "parameter":
            raise self.error(instr, r.text, at, "parameter_replication is for parameters only")

    def _check_done_channel(self, instr: Instruction, r: _Instr, name: str, attrs: dict[str, object],
                            local: dict[str, Instruction]) -> None:
        """A send-done or recv-done of an instruction that takes a channel (a send, a recv, a
        collective) has that one's channel (or none, as it), which XLA's parser demands, without a
        message of its own."""
        producer = local.get(r.names[0])
        spec = None if producer is None else OPCODES.get(producer.opcode)
        if producer is None or spec is None or "channel_id" not in spec.attrs:
            return
        written = producer.attr_text("channel_id")
        try:
            theirs = None if written is None else read(Kind.INT, written)
        except ValueReadError:
            return  # not a number: refused where the send or recv is checked
        mine = attrs.get("channel_id")
        if mine != theirs:
            at = r.value_at("channel_id", r.operands_at - 1)
            said = "no channel_id" if mine is None else f"channel_id={mine}"
            other = "none" if theirs is None else f"channel_id={theirs}"
            raise self.error(instr, r.text, at, f"{name} has {said}, but its operand '{producer.name}' has {other}: "
                             "a -done must have the channel of its operand")

    def _check_tuple(self, instr: Instruction, r: _Instr) -> None:
        """A tuple's operands, one for each element of the tuple shape it writes."""
        written = _no_comments(r.shape_text[0]).strip()  # type: ignore[index]
        if not written.startswith("("):
            # XLA's parser reads the elements of the shape written (and stops the process on another)
            raise self.error(instr, r.text, r.shape_text[1], f"a tuple's shape is a tuple, not {written}")  # type: ignore[index]
        inner = written[1:-1]
        count = len(lexicon.split_top_level(inner)) if inner.strip() else 0
        if count != len(r.names):
            raise self.error(instr, r.text, r.operands_at - 1,
                             f"expects {count} operands, but has {len(r.names)} operands")

    def _check_index_count(self, instr: Instruction, r: _Instr, first: int, local: dict[str, Instruction]) -> None:
        """A dynamic slice's start indices, from operand ``first`` on: one scalar for each
        dimension of operand 0, or one vector of them, as XLA's parser counts them."""
        n = len(r.names)
        if n == first + 1:  # XLA's parser first looks whether the one index is a vector of them
            index = self._check_array_operand(instr, r, first, local)
            if index is not None and index.rank == 1:
                return  # the start indices as one vector
        operand = self._check_array_operand(instr, r, 0, local)
        if operand is None or n == first + operand.rank:
            return
        rank = operand.rank
        raise self.error(instr, r.text, r.operands_at - 1,
                         f"Wrong number of operands. (operand 0 has {rank} dimensions: {instr.opcode} takes "
                         f"{first + rank} operands, one start index a dimension, or {first + 1} with the "
                         f"indices in one vector; it has {n})")

    def _check_array_operand(self, instr: Instruction, r: _Instr, k: int,
                             local: dict[str, Instruction]) -> Shape | None:
        """Operand ``k``'s shape, when it is known, and an array: XLA's parser reads its dimensions
        or its element type, and stops the process on a tuple, a token or an opaque value."""
        if k >= len(r.names):
            return None
        shape = self.operand_shape(r, k, local)
        if shape is not None and not is_array(shape):
            at = self._operand_at(instr, r, k)
            raise self.error(instr, r.text, at, f"operand {k} of {instr.opcode} must be an array, and "
                             f"'{r.names[k]}' is {shape.text()}")
        return shape

    def _check_layout_constraints(self, instr: Instruction, r: _Instr, shapes: list[Shape],
                                  local: dict[str, Instruction]) -> None:
        """A custom-call's ``operand_layout_constraints``: one shape per operand, each
        compatible with that operand's."""
        at = r.value_at("operand_layout_constraints")
        if len(shapes) != len(r.names):
            raise self.error(instr, r.text, at, f"Expected {len(r.names)} operand layout constraints, "
                             f"{len(shapes)} given")
        for k, (constraint, operand) in enumerate(zip(shapes, r.names, strict=True)):
            producer = local.get(operand)
            built = None if producer is None else self.built(producer)  # (as written, or worked out)
            if built is None:
                continue
            if not compatible(constraint, _shape_of(built)):
                raise self.error(instr, r.text, at, f"Operand layout constraint shape {constraint.text()} for operand "
                                 f"{k} is not compatible with operand shape {built}")

    def _check_async(self, instr: Instruction, r: _Instr, name: str, shape: Shape | None,
                     attrs: dict[str, object], local: dict[str, Instruction],
                     wrapped: tuple[str, str] | None) -> None:
        if name == "async-start":
            if shape is None or not shape.is_tuple or len(shape.tuple_shapes) < 2 or (
                not shape.tuple_shapes[0].is_tuple
            ):
                at = r.shape_text[1] if r.shape_text else r.opcode_at
                raise self.error(instr, r.text, at, "AsyncStart expects the op shape to be in the form of "
                                 "((async-operands), async-outputs, state).")
            called = attrs.get("calls")
            if isinstance(called, str):
                if called in self.async_calls:
                    at = r.value_at("calls")
                    raise self.error(instr, r.text, at, f"Computation {called} is called by more than one async op "
                                     f"('{self.async_calls[called]}' calls it too).")
                self.async_calls[called] = instr.name
            return
        producer = local.get(r.names[0]) if len(r.names) == 1 else None
        start_op = producer.opcode if producer is not None else ""
        start_spec = spec_of(start_op)
        if producer is None or start_spec is None or start_spec.name not in ("async-start", "async-update"):
            raise self.error(instr, r.text, r.operands_at - 1,
                             "AsyncUpdate and AsyncDone expect a single async op as their operand.")
        if name == "async-update" and shape is not None and producer.shape is not None:
            if not _same_shape(shape, _shape_of(producer.shape)):
                raise self.error(instr, r.text, r.shape_text[1] if r.shape_text else r.opcode_at,
                                 "AsyncUpdate expects the op shape to be the same as the operand shape.")
        start_wrapped = split_async_opcode(start_op)
        if wrapped is not None:
            mine = wrapped[1]
            theirs = start_wrapped[1] if start_wrapped else None
            if theirs != mine:
                raise self.error(instr, r.text, r.opcode_at,
                                 f"Expect async wrapped opcode to be {theirs or 'the one of ' + producer.name}, "
                                 f"but got {mine}")
        # an execution thread written on an update or done must be the chain's (the start's,
        # "main" when it names none); one not written is the chain's
        start_thread = _execution_thread(producer, local)
        thread = attrs.get("async_execution_thread", start_thread)
        if start_thread is not None and thread != start_thread:
            at = r.value_at("async_execution_thread", r.opcode_at)
            raise self.error(instr, r.text, at, f"Expect async_execution_thread to be {start_thread}, but got {thread}")
        if "calls" in attrs:
            theirs = _calls_of(producer, local)
            if theirs is not None and theirs != attrs["calls"]:
                at = r.value_at("calls")
                raise self.error(instr, r.text, at, f"Expect async_wrapped_computation to be {theirs}, "
                                 f"but got {attrs['calls']}")


def _inline(instr: Instruction, base: int) -> dict[int, tuple[int, str]] | None:
    """The operands ``instr`` writes as instructions, placed in a text that starts at ``base``
    in the source."""
    written = instr.inline_operands
    if not written:
        return None
    return {start - base: (end - base, name) for start, end, name in written}


def _execution_thread(op: Instruction, local: dict[str, Instruction]) -> str | None:
    """The execution thread of the async chain ``op`` belongs to (None when unreadable)."""
    seen = 0
    while True:
        text = op.attr_text("async_execution_thread")
        if text is not None:
            try:
                return str(read(Kind.STRING, text))
            except ValueReadError:  # refused where that instruction itself is checked
                return None
        before = local.get(op.operands[0]) if op.operands else None
        spec = spec_of(op.opcode)
        if spec is None or spec.name == "async-start" or before is None or seen > len(local):
            return "main"
        op = before
        seen += 1


_ALLOWED: dict[str, tuple[dict[str, AttrSpec], frozenset[str]]] = {}


def _allowed(opcode: str, spec: OpcodeSpec, wrapped: tuple[str, str] | None,
             ) -> tuple[dict[str, AttrSpec], frozenset[str]]:
    """The attributes an opcode as written takes, and those it requires."""
    got = _ALLOWED.get(opcode)
    if got is not None:
        return got
    allowed = dict(spec.attrs)
    if wrapped is not None:
        allowed.pop("calls", None)  # the shorthand builds the async computation itself
    if wrapped is not None and wrapped[0] == "async-start":
        # custom-call-start: async-start's own attributes and the wrapped opcode's, its own
        # calls= among them (fusion-start)
        inner = spec_of(wrapped[1])
        assert inner is not None
        allowed.update(inner.attrs)
    required = frozenset(k for k, a in allowed.items() if a.required)
    got = _ALLOWED[opcode] = (allowed, required)
    return got


def _calls_of(instr: Instruction, local: dict[str, Instruction]) -> str | None:
    """The computation an async chain runs (from its start)."""
    seen = 0
    while instr is not None and seen < 10000:
        spec = spec_of(instr.opcode)
        if spec is not None and spec.name == "async-start":
            text = instr.attr_text("calls")
            return text.strip().lstrip("%") if text else None
        if not instr.operands:
            return None
        instr = local.get(instr.operands[0])  # type: ignore[assignment]
        seen += 1
    return None


def _shape_of(text: str) -> Shape:
    """``parse_shape``, without keeping a long tuple shape in its cache."""
    return parse_shape(text) if len(text) < 256 else parse_shape.__wrapped__(text)


def _is_shape_start(text: str, pos: int) -> bool:
    if text.startswith("(", pos) or is_buffer_start(text, pos):
        return True  # a tuple, or a buffer shape b(...)
    m = _ELEMENT_TYPE_AT.match(text, pos)
    return (m is not None and m.group() in lexicon.ELEMENT_TYPES
            and text.startswith("[", lexicon.skip_trivia(text, m.end())))


def _find_word(text: str, word: str, at: int) -> int:
    i = text.find(word, at)
    return i if i >= 0 else at


def _escape_problems(text: str, text_spans: Sequence[tuple[int, int]] = ()) -> Iterator[tuple[int, str]]:
    """(offset, why) of each escape in ``text``'s strings that XLA's lexer cannot unescape, but
    in ``text_spans`` (JSON text to the lexer, :func:`_json_text_spans`: not unescaped)."""
    for m in _STRING_OR_COMMENT.finditer(text):
        if m.group().startswith('"') and not any(s <= m.start() < e for s, e in text_spans):
            problem = escapes.c_escape_problem(m.group()[1:-1])
            if problem is not None:
                yield m.start() + 1 + problem[0], f"Failed unescaping string: {problem[1]}"


def _json_text_spans(r: _Instr) -> list[tuple[int, int]]:
    """Where the instruction's text is JSON text to XLA's lexer, which takes it whole (strings
    and all, never unescaped): a braced ``backend_config``, and each braced value of
    ``frontend_attributes`` (``lexicon.JSON_TEXT_FROM``)."""
    spans = []
    for name, _at, value, vat in r.attrs:
        depth = lexicon.json_text_from(name)
        if not depth or not value.startswith("{"):
            continue
        if depth == 1:
            spans.append((vat, vat + len(value)))
            continue
        pos, n = 1, len(value) - 1
        while (pos := lexicon.skip_trivia(value, pos, n)) < n:
            if value[pos] == '"':
                pos = lexicon.skip_string(value, pos)
            elif value[pos] == "{":
                end = lexicon.brace_group_end(value, pos, 1)
                spans.append((vat + pos, vat + end))
                pos = end
            else:
                pos += 1
    return spans


def _no_comments(text: str) -> str:
    if "/" not in text:
        return text.strip()
    return _COMMENT.sub(" ", text).strip()


def _leaf_count(shape: Shape) -> int:
    """The arrays in a shape, however deep its tuples."""
    count, todo = 0, [shape]
    while todo:
        s = todo.pop()
        if s.is_tuple:
            todo.extend(s.tuple_shapes)
        else:
            count += 1
    return count


def _same_shape(a: Shape, b: Shape) -> bool:
    if a.layout and b.layout:
        return a.text() == b.text()
    return compatible(a, b) and a.dims == b.dims and (a.dynamic or (False,) * a.rank) == (b.dynamic or (False,) * b.rank)


def _check_layout(value: str) -> None:
    """``{(f32[2]{0}, s32[])->f32[2]{0}}``: the shapes of an entry computation layout."""
    pos = lexicon.skip_trivia(value, 0)
    if not value.startswith("{", pos):
        raise ValueReadError("expects {(parameter shapes)->result shape}", pos)
    pos = lexicon.skip_trivia(value, pos + 1)
    if not value.startswith("(", pos):
        raise ValueReadError("expects ( before parameter shape list", pos)
    close = shape_end(value, pos, listed=True)  # the parameter shapes
    if isinstance(close, tuple):
        raise ValueReadError(close[1], close[0])
    arrow = lexicon.skip_trivia(value, close)
    if not value.startswith("->", arrow):
        raise ValueReadError("expects -> before result shape", arrow)
    end = value.rfind("}")
    if end < arrow or lexicon.skip_trivia(value, end + 1) < len(value):
        raise ValueReadError("expects '}' to end the layout", max(end, arrow))
    problem = shape_syntax_error(value, arrow + 2, end)
    if problem is not None:
        raise ValueReadError(problem[1], problem[0])
    # a tuple's elements have layouts that are orders of their dimensions, as in an instruction's
    # shape; an array of its own may have any
    params, result = _parsed_shape(value[pos:close]), _parsed_shape(value[arrow + 2 : end])
    for shape, at in [(p, pos) for p in (params.tuple_shapes if params is not None else ())] + [(result, arrow + 2)]:
        unordered = _unordered_layout(_array_leaves(shape)) if shape is not None and shape.is_tuple else None
        if unordered is not None:
            raise ValueReadError(unordered, at)


def _unordered_layout(leaves: list[Shape]) -> str | None:
    """What is wrong with the first of the arrays ``leaves`` whose layout is not an order of its
    dimensions; None when each one's is."""
    for leaf in leaves:
        order = leaf.minor_to_major()
        if order is not None and sorted(order) != list(range(leaf.rank)):
            return f"the layout {_no_comments(leaf.layout or '')} of {leaf.text()} is not an order of its dimensions"
    return None


#: the dynamic slices: the operand their start indices begin at
_FIRST_INDEX = {"dynamic-slice": 1, "dynamic-update-slice": 2}
#: opcodes whose own shape XLA's parser reads as an array (its dimensions), stopping the process
#: on a tuple, a token or an opaque value
_ARRAY_SHAPED = frozenset({"reshape", "dynamic-reshape", "map"})
#: the operands whose shape XLA's parser reads as an array, by opcode (a reshape's number of
#: elements, a compare's element type; the dynamic slices' are checked with their indices)
_ARRAY_OPERANDS = {"reshape": (0,), "dynamic-reshape": (0,), "compare": (0,)}


def _strings_at_top(value: str) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of the text of each quoted string directly inside the braced ``value``
    (not inside a group of its own), between its quotes."""
    pos, n = 1, len(value) - 1
    while (pos := lexicon.skip_trivia(value, pos, n)) < n:
        ch = value[pos]
        if ch == '"':
            end = lexicon.skip_string(value, pos)
            yield pos + 1, end - 1
            pos = end
        elif ch in "{[(":
            pos = lexicon.matching_close(value, pos, n)
        else:
            pos += 1


def _array_leaves(shape: Shape) -> list[Shape]:
    """The arrays in tuple ``shape``, however deep (iteratively: tuples nest thousands deep)."""
    leaves, stack = [], [shape]
    while stack:
        s = stack.pop()
        if s.is_tuple:
            stack.extend(s.tuple_shapes)
        elif is_array(s):
            leaves.append(s)
    return leaves


def _parsed_shape(text: str) -> Shape | None:
    """The shape ``text`` spells, None when it spells none (its syntax is checked elsewhere)."""
    try:
        return _shape_of(_no_comments(text))
    except HloError:
        return None


#: how long a chain of instructions whose shape is built from their operand's is followed
_BUILT_DEPTH = 64

#: the -done instructions whose operand, when it takes a channel, must share theirs
_CHANNEL_DONES = frozenset({"send-done", "recv-done"})


def _built_shape(instr: Instruction, inferred: dict[int, str], depth: int = 0) -> str | None:
    """The shape XLA's parser gives ``instr``: the written one, but for
    :data:`~hlo_rewrite.opcodes.BUILT_SHAPES`, :data:`~hlo_rewrite.opcodes.BUILT_AFTER_DATA`,
    :data:`~hlo_rewrite.opcodes.BUILT_FROM_OPERAND` and :data:`~hlo_rewrite.opcodes.BUILT_AS_OPERAND`
    (``depth``: how many of those led here), and for an instruction written without one, the
    shape in ``inferred`` (by its id)."""
    built = BUILT_SHAPES.get(instr.opcode)
    if built is not None:
        return built
    after = BUILT_FROM_OPERAND.get(instr.opcode)
    if after is not None or instr.opcode in BUILT_AS_OPERAND:
        comp = instr.computation
        producer = comp.get(instr.operands[0]) if comp is not None and instr.operands else None
        data = None if producer is None or depth > _BUILT_DEPTH else _built_shape(producer, inferred, depth + 1)
        if after is None:
            return data if data is not None else instr.shape if instr.shape is not None else inferred.get(id(instr))
        if data is not None and instr.opcode == "recv-done":
            shape = _parsed_shape(data)
            data = shape.tuple_shapes[0].text() if shape is not None and shape.is_tuple and shape.tuple_shapes else None
        return instr.shape if data is None else "(" + ", ".join((data, *after)) + ")"
    if instr.shape is None:
        return inferred.get(id(instr))
    tail = BUILT_AFTER_DATA.get(instr.opcode)
    if tail is None:
        return instr.shape
    shape = _parsed_shape(instr.shape)
    if shape is None or not shape.is_tuple or not shape.tuple_shapes:
        return instr.shape  # refused where the instruction is checked (_check_rules)
    return "(" + ", ".join((shape.tuple_shapes[0].text(), *tail)) + ")"


def _header_attrs(source: str) -> Iterator[tuple[str, int, str, int]]:
    """``(name, offset, value, value offset)`` of each attribute on the ``HloModule`` line;
    ValueReadError (with the offset in the source) for a comment that does not end."""
    try:
        yield from _header_attrs_unchecked(source)
    except ValueReadError:
        raise
    except ValueError as exc:
        at = source.find("/*")
        raise ValueReadError(str(exc), max(at, 0)) from None


def _header_attrs_unchecked(source: str) -> Iterator[tuple[str, int, str, int]]:
    pos = lexicon.skip_trivia(source, 0)
    if not source.startswith("HloModule", pos):
        return
    m = _NAME_AT.match(source, lexicon.skip_trivia(source, pos + len("HloModule")))
    if m is None:
        return
    pos = m.end() + source.startswith(":", m.end())  # 'm:' is one name token to XLA's lexer
    while True:
        pos = lexicon.skip_trivia(source, pos)
        if not source.startswith(",", pos):
            return
        pos = lexicon.skip_trivia(source, pos + 1)
        a = _ATTR_NAME_AT.match(source, pos)
        if a is None:
            return
        vstart = lexicon.skip_trivia(source, a.end())  # XLA's lexer skips blanks and comments there
        if source.startswith("{", vstart):  # a braced value ends at its '}', over lines or not
            try:
                vend = lexicon.brace_group_end(source, vstart, lexicon.json_text_from(a.group(1)))
            except ValueError:
                return
        elif source.startswith('"', vstart):
            try:
                vend = lexicon.skip_string(source, vstart)
            except ValueError:
                return
        else:  # a word or a number: one token, as every unbraced value XLA takes here (``=2 sum {``
            # on one line is the value 2, then the first computation)
            w = _HEADER_WORD.match(source, vstart)
            vend = w.end() if w is not None else vstart
        yield a.group(1), pos, source[vstart:vend], vstart
        pos = vend


def check_header(module: Module) -> None:
    """Check the attributes of the ``HloModule`` line (names and values), as XLA reads them."""
    _Checker(module).check_header()


def check_module(module: Module) -> None:
    """Raise :class:`~hlo_rewrite.errors.HloParseError` at the first thing in ``module`` that
    XLA's parser rejects (see the module documentation)."""
    _Checker(module).check()
