"""The grammar of record (``grammar/hlo.lark``) and the parser built from it.

The readers (:mod:`hlo_rewrite.reader`) read most of a module; this
module is the precise, slower reader it defers to.  It parses one instruction
(:func:`parse_instruction`) or a whole module (:func:`parse_module`) with Lark's
LALR(1) parser and contextual lexer, and turns attribute values into Python
values while parsing (the transformer runs inside the parser, so no parse tree
is built).  Every syntax error becomes an :class:`~hlo_rewrite.errors.HloParseError`
with the file, line, column, the offending source line and a message in words.
"""

from __future__ import annotations

import importlib.resources
import math
import pathlib
import re
import threading
from dataclasses import dataclass, field

import lark
from lark import Lark, Token
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from . import escapes
from .errors import HloParseError
from .lexicon import skip_trivia
from .opcodes import closest_opcode
from .values import expand_iota_replica_groups

__all__ = [
    "Attribute",
    "ComputationSyntax",
    "InstructionSyntax",
    "ModuleSyntax",
    "expand_iota_replica_groups",
    "expand_mesh_replica_groups",
    "grammar_path",
    "grammar_text",
    "parse_instruction",
    "parse_module",
]


# ----------------------------------------------------------------------- results


@dataclass(slots=True)
class Attribute:
    """One ``name=value`` attribute, as written.

    ``value_text`` is the exact source text of the value; ``value`` is its typed
    reading for the attributes the tool uses (see the module docs), else None.
    ``line``/``column`` (1-based) locate the attribute name in the input file.
    """

    name: str
    value_text: str
    value: object
    line: int
    column: int


@dataclass(slots=True)
class InstructionSyntax:
    """One instruction read by the grammar.

    ``operands`` are operand names without ``%`` (operand shapes and comments
    dropped; a compact get-tuple-element operand keeps its suffix, ``t#0#1``).
    ``parameter``/``constant`` have no operands: their payload is in
    ``parameter_number`` / ``literal_text``.
    """

    name: str
    is_root: bool
    shape: str | None
    opcode: str
    operands: list[str]
    attrs: list[Attribute]
    line: int
    column: int
    parameter_number: int | None = None
    literal_text: str | None = None

    def attr(self, name: str) -> Attribute | None:
        """The attribute called ``name``, or None."""
        for a in self.attrs:
            if a.name == name:
                return a
        return None


@dataclass(slots=True)
class ComputationSyntax:
    name: str
    is_entry: bool
    instructions: list[InstructionSyntax]
    line: int
    execution_thread: str | None = None


@dataclass(slots=True)
class ModuleSyntax:
    name: str | None
    header_attrs: list[Attribute]
    computations: list[ComputationSyntax] = field(default_factory=list)


# ------------------------------------------------------------------- the grammar


def grammar_path() -> pathlib.Path:
    """Where the grammar file is: package data first, else ``<repo>/grammar``."""
    try:
        res = importlib.resources.files("hlo_rewrite") / "grammar" / "hlo.lark"
        if res.is_file():
            return pathlib.Path(str(res))
    except (ModuleNotFoundError, TypeError, OSError):  # pragma: no cover - odd installs
        pass
    return pathlib.Path(__file__).resolve().parent.parent / "grammar" / "hlo.lark"


_grammar_text: str | None = None


def grammar_text() -> str:
    global _grammar_text
    if _grammar_text is None:
        _grammar_text = grammar_path().read_text(encoding="utf-8")
    return _grammar_text


# --------------------------------------------------------------- value helpers



def c_unescape(quoted: str) -> str:
    """Decode a C-escaped string literal (with its quotes), as absl::CUnescape."""
    return escapes.c_unescape(quoted[1:-1])


def expand_mesh_replica_groups(axes: list[tuple[str, int]], grouped: list[str]) -> list[list[int]]:
    """``mesh['a'=2,'b'=4] {'b'}``: devices are numbered row-major over the mesh
    axes; a group is the devices that differ only in the listed axes (row-major
    over those axes, in the listed order); groups are ordered row-major over the
    other axes."""
    names = [a for a, _ in axes]
    sizes = dict(axes)
    for g in grouped:
        if g not in sizes:
            raise ValueError(f"replica_groups names axis '{g}' that the mesh does not have")
    if len(set(grouped)) != len(grouped):
        raise ValueError("replica_groups names a mesh axis twice")
    others = [a for a in names if a not in grouped]
    perm = [names.index(a) for a in others + grouped]
    dims = [s for _, s in axes]
    gsize = math.prod(sizes[a] for a in grouped)
    n = math.prod(dims)
    return expand_iota_replica_groups(n // gsize, gsize, dims, perm)


class _Span:
    """The source extent of a parsed value, with its typed reading."""

    __slots__ = ("start", "end", "value")

    def __init__(self, start: int, end: int, value: object = None) -> None:
        self.start = start
        self.end = end
        self.value = value


class _ValueError(Exception):
    """A value that parses but makes no sense (raised inside the transformer)."""

    def __init__(self, message: str, pos: int) -> None:
        super().__init__(message)
        self.message = message
        self.pos = pos


def _start(x) -> int:
    return int(x.start_pos or 0) if isinstance(x, Token) else x.start


def _end(x) -> int:
    return int(x.end_pos or 0) if isinstance(x, Token) else x.end


def _span(children: list) -> _Span:
    return _Span(_start(children[0]), _end(children[-1]))


def _name(tok: str) -> str:
    return tok[1:] if tok.startswith("%") else str(tok)


# ---------------------------------------------------------------- transformer


class _Ctx(threading.local):
    text: str = ""
    line: int = 1
    column: int = 1


_ctx = _Ctx()


def _token_text(tok: Token) -> str:
    """What a string or braced value read as one token holds: a string unescaped, JSON text
    (``JSON_TEXT``) as written."""
    return str(tok) if tok.type == "JSON_TEXT" else c_unescape(tok)


def _pos(tok: Token) -> tuple[int, int]:
    """(line, column) of a token in the real file."""
    line = tok.line or 1
    col = tok.column or 1
    if line == 1:
        col += _ctx.column - 1
    return line + _ctx.line - 1, col


def _int_list(children: list) -> list:
    out: list = []
    for c in children:
        if isinstance(c, Token):
            if c.type == "INT":
                out.append(int(c))
        else:
            out.append(c.value)
    return out


def _list_of_lists(value: list, what: str, pos: int) -> list[list[int]]:
    for g in value:
        if not isinstance(g, list) or any(isinstance(x, list) for x in g):
            raise _ValueError(f"{what} must be a list of integer lists like {{{{0,1}},{{2,3}}}}", pos)
    return value


class _Builder:
    """Callbacks the LALR parser calls on each reduction (a Lark transformer)."""

    # --- names, shapes, literals ----------------------------------------------
    def tuple_shape(self, c):
        return _span(c)

    def buffer_shape(self, c):
        return _span(c)

    def lit_item(self, c):
        return _span(c)

    def operand(self, c):
        name = c[-1]
        if name.type == "GTE_SUFFIX":
            return _name(c[-2]) + str(name)
        return _name(name)

    def op_generic(self, c):
        return (str(c[0]), c[1:], None, None)

    def op_parameter(self, c):
        return ("parameter", [], int(c[1]), None)

    def op_constant(self, c):
        lit = c[1]
        return ("constant", [], None, _ctx.text[lit.start : lit.end])

    def instr_lhs(self, c):
        return c[0]

    def instr_lhs_glued(self, c):
        tok = c[0]
        return Token.new_borrow_pos("IDENT", tok[:-1], tok)

    def instruction(self, c):
        i = 0
        is_root = False
        if isinstance(c[0], Token) and c[0].type == "ROOT":
            is_root = True
            i = 1
        lhs = c[i]
        i += 1
        shape = None
        nxt = c[i]
        if not isinstance(nxt, tuple):
            shape = str(nxt) if isinstance(nxt, Token) else _ctx.text[nxt.start : nxt.end]
            i += 1
        opcode, operands, pnum, lit = c[i]
        line, col = _pos(c[0] if is_root else lhs)
        return InstructionSyntax(_name(lhs), is_root, shape, opcode, operands, c[i + 1 :], line, col, pnum, lit)

    def single_instruction(self, c):
        return c[0]

    # --- structure -------------------------------------------------------------
    def signature(self, c):
        return _SIGNATURE

    def exec_thread(self, c):
        return ("execution_thread", c_unescape(c[1]))

    def computation(self, c):
        is_entry = isinstance(c[0], Token) and c[0].type == "ENTRY"
        name_tok = c[1] if is_entry else c[0]
        instrs = [x for x in c if isinstance(x, InstructionSyntax)]
        thread = None
        if isinstance(c[-1], tuple):
            thread = c[-1][1]
        line, _ = _pos(c[0])
        return ComputationSyntax(_name(name_tok), is_entry, instrs, line, thread)

    def header(self, c):
        return ("header", _name(c[1]), c[2:])

    def stack_sections(self, c):
        return None

    def module(self, c):
        name = None
        attrs: list[Attribute] = []
        comps = []
        for x in c:
            if isinstance(x, ComputationSyntax):
                comps.append(x)
            elif isinstance(x, tuple):
                name, attrs = x[1], x[2]
        return ModuleSyntax(name, attrs, comps)

    def start(self, c):
        return c[0]

    # --- value pieces ------------------------------------------------------------
    def int_tree(self, c):
        return _Span(c[0].start_pos, c[-1].end_pos, _int_list(c[1:-1]))

    def name_list(self, c):
        return _Span(c[0].start_pos, c[-1].end_pos, [_name(x) for x in c[1:-1] if x.type in ("NAME", "IDENT")])

    def ints(self, c):
        return [int(x) for x in c]

    def rg_explicit(self, c):
        s = c[0]
        return _Span(s.start, s.end, _list_of_lists(s.value, "replica_groups", s.start))

    def rg_iota(self, c):
        ints = [x for x in c if isinstance(x, list) or (isinstance(x, Token) and x.type == "INT")]
        g, s, dims = int(ints[0]), int(ints[1]), ints[2]
        perm = ints[3] if len(ints) > 3 else None
        try:
            value = expand_iota_replica_groups(g, s, dims, perm)
        except ValueError as e:
            raise _ValueError(str(e), c[0].start_pos) from None
        return _Span(c[0].start_pos, c[-1].end_pos, value)

    def mesh_axis(self, c):
        if c[0].type == "SQ_STRING":
            return (c[0][1:-1], int(c[1]))
        return (c[0][:-1], int(c[1]))

    def mesh_ref(self, c):
        t = c[0]
        return t[1:-1] if t.type == "SQ_STRING" else str(t)

    def rg_mesh(self, c):
        axes = [x for x in c if isinstance(x, tuple)]
        refs = [x for x in c if type(x) is str]
        try:
            value = expand_mesh_replica_groups(axes, refs)
        except ValueError as e:
            raise _ValueError(str(e), c[0].start_pos) from None
        return _Span(c[0].start_pos, c[-1].end_pos, value)

    def fa_item(self, c):
        key = c[0][:-1]
        v = c[1]
        if isinstance(v, Token):
            return (key, _token_text(v))
        return (key, _ctx.text[v.start : v.end])

    def frontend_dict(self, c):
        return _Span(c[0].start_pos, c[-1].end_pos, dict(x for x in c if isinstance(x, tuple)))

    def gvalue(self, c):
        return _span(c)

    def gbraces(self, c):
        return _span(c)

    gbrackets = gparens = gbraces
    window = slice_ranges = shape_list = aliasing = buffer_donor = gbraces
    entry_layout = bool_list_value = gbraces

    # --- attributes -------------------------------------------------------------
    @staticmethod
    def _attr(name_tok: Token, val, value: object) -> Attribute:
        line, col = _pos(name_tok)
        return Attribute(name_tok[:-1], _ctx.text[_start(val) : _end(val)], value, line, col)

    def attr_inttree(self, c):
        v = c[1]
        value = v.value
        if c[0] == "source_target_pairs=":
            value = _list_of_lists(value, "source_target_pairs", v.start)
        return self._attr(c[0], v, value)

    def attr_int(self, c):
        return self._attr(c[0], c[1], int(c[1]))

    def attr_bool(self, c):
        return self._attr(c[0], c[1], c[1] == "true")

    def attr_comp(self, c):
        return self._attr(c[0], c[1], _name(c[1]))

    def attr_complist(self, c):
        return self._attr(c[0], c[1], c[1].value)

    def attr_replica_groups(self, c):
        return self._attr(c[0], c[1], c[1].value)

    def attr_string(self, c):
        value = c_unescape(c[1]) if c[0] == "custom_call_target=" else None
        return self._attr(c[0], c[1], value)

    def attr_enum(self, c):
        value = str(c[1]) if c[0] == "api_version=" else None
        return self._attr(c[0], c[1], value)

    def attr_backend_config(self, c):
        v = c[1]
        if isinstance(v, Token):
            return self._attr(c[0], v, _token_text(v))
        return self._attr(c[0], v, _ctx.text[v.start : v.end])

    def attr_frontend_attributes(self, c):
        return self._attr(c[0], c[1], c[1].value)

    def _untyped(self, c):
        return self._attr(c[0], c[1], None)

    attr_metadata = attr_window = attr_dim_labels = attr_slice = attr_padding = _untyped
    attr_shape_list = attr_aliasing = attr_buffer_donor = attr_entry_layout = _untyped
    attr_bool_list = attr_generic = _untyped

    def attr_literal(self, c):
        line, col = _pos(c[0])
        return Attribute("literal", _ctx.text[_start(c[1]) : _end(c[2])], None, line, col)


_SIGNATURE = object()


# ------------------------------------------------------------------- the parser

_parser: Lark | None = None
_parser_lock = threading.Lock()


def _get_parser() -> Lark:
    global _parser
    if _parser is None:
        with _parser_lock:
            if _parser is None:
                kwargs = dict(
                    parser="lalr",
                    lexer="contextual",
                    start=["start", "single_instruction"],
                    transformer=_Builder(),
                    maybe_placeholders=False,
                )
                try:
                    _parser = Lark(grammar_text(), cache=True, **kwargs)
                except OSError:  # pragma: no cover - no writable temp dir
                    _parser = Lark(grammar_text(), **kwargs)
    return _parser


# ----------------------------------------------------------------------- errors

_TERMINAL_WORDS = {
    "IDENT": "a name",
    "NAME": "a %name",
    "ATTR_NAME": "an attribute (name=value)",
    "SIG_NAME": "a parameter 'name:'",
    "INT": "an integer",
    "FLOAT": "a number",
    "SHAPE_ARRAY": "a shape",
    "BUFFER_OPEN": "'b('",
    "STRING": "a string",
    "SQ_STRING": "a quoted axis name",
    "DXD": "window dimensions like 3x3",
    "PAD": "padding like 0_0x1_1",
    "DIM_LABELS": "dim_labels like b01f_01io->b01f",
    "GTE_SUFFIX": "'#index'",
    "NAN_PAYLOAD": "nan(0x...)",
    "G_WORD": "a value",
    "G_INNER": "a value",
    "G_CALLWORD": "a value",
    "OPCODE": "an opcode",
    "$END": "end of input",
}


def _describe(term: str) -> str:
    if term.startswith("A_"):
        return "an attribute (name=value)"
    if term in _TERMINAL_WORDS:
        return _TERMINAL_WORDS[term]
    parser = _get_parser()
    td = parser._terminals_dict.get(term) if hasattr(parser, "_terminals_dict") else None
    if td is None:
        td = {t.name: t for t in parser.terminals}.get(term)
    if td is not None and td.pattern.type == "str":
        return f"'{td.pattern.value}'"
    return term.lower()


_PREFERRED = ["')'", "']'", "'}'", "','", "'='", "'('", "'['", "'{'", "':'", "'->'"]


def _expected_words(expected) -> str:
    words: list[str] = []
    for t in expected:
        if t == "GTE_SUFFIX":
            continue
        w = _describe(t)
        if w not in words:
            words.append(w)

    def key(w: str):
        return (_PREFERRED.index(w) if w in _PREFERRED else len(_PREFERRED), w)

    words.sort(key=key)
    if len(words) > 6:
        words = words[:6] + ["..."]
    if len(words) == 1:
        return words[0]
    return ", ".join(words[:-1]) + " or " + words[-1]


def _shown(text: str) -> str:
    text = text.replace("\r", "").split("\n", 1)[0]
    if len(text) > 40:
        text = text[:37] + "..."
    return repr(text)


class _Locator:
    """Turns offsets of the parsed text into real file positions and lines."""

    def __init__(self, text: str, filename: str | None, line: int, column: int) -> None:
        self.text = text
        self.filename = filename
        self.line0 = line
        self.col0 = column

    def at(self, pos: int) -> tuple[int, int, str]:
        text = self.text
        pos = max(0, min(pos, len(text)))
        ls = text.rfind("\n", 0, pos) + 1
        le = text.find("\n", pos)
        if le < 0:
            le = len(text)
        rel_line = text.count("\n", 0, pos)
        col = pos - ls + 1
        src = text[ls:le].rstrip("\r")
        if rel_line == 0 and self.col0 > 1:
            col += self.col0 - 1
            src = " " * (self.col0 - 1) + src
        return self.line0 + rel_line, col, src

    def error(self, message: str, pos: int) -> HloParseError:
        line, col, src = self.at(pos)
        return HloParseError(message, filename=self.filename, line=line, column=col, source_line=src)


def _context(e: UnexpectedToken) -> str:
    if "GTE_SUFFIX" in (e.expected or ()):
        return " after operand"
    state = getattr(e, "state", None)
    stack = getattr(state, "value_stack", None) if state is not None else None
    if stack:
        top = stack[-1]
        if type(top) is str:
            return " after operand"
        if isinstance(top, Token):
            return f" after {_shown(str(top))}"
        if isinstance(top, Attribute):
            return " after attribute"
        if isinstance(top, InstructionSyntax):
            return " after instruction"
    hist = getattr(e, "token_history", None)
    if hist:
        last = hist[-1]
        if last is not None and str(last):
            return f" after {_shown(str(last))}"
    return ""


def _unknown_opcode(word: str) -> str:
    close = closest_opcode(word)
    hint = f" (did you mean '{close}'?)" if close else ""
    return f"unknown opcode '{word}'{hint}"


def _skip_blank(text: str, pos: int) -> int:
    try:
        return skip_trivia(text, pos)
    except ValueError:
        return pos


def _convert(e: Exception, loc: _Locator) -> HloParseError:
    text = loc.text
    if isinstance(e, _ValueError):
        return loc.error(e.message, e.pos)
    if isinstance(e, UnexpectedCharacters):
        pos = e.pos_in_stream or 0
        ch = text[pos : pos + 1]
        if ch == '"':
            return loc.error("unterminated string", pos)
        if text.startswith("/*", pos):
            return loc.error("unterminated comment: '/*' without '*/'", pos)
        if ch == "/":
            return loc.error("unexpected '/' (comments are /* ... */ or // ...)", pos)
        allowed = getattr(e, "allowed", None)
        exp = f"expected {_expected_words(allowed)}, " if allowed else ""
        return loc.error(f"{exp}found unexpected character {ch!r}", pos)
    if isinstance(e, UnexpectedToken):
        tok = e.token
        if "OPCODE" in (e.expected or ()) and tok.type in ("IDENT", "G_CALLWORD", "G_WORD") and (
            text.startswith("(", _skip_blank(text, _end(tok)))
        ):
            return loc.error(_unknown_opcode(str(tok)), tok.start_pos)
        exp = _expected_words(e.expected) if e.expected else "nothing more"
        ctx = _context(e)
        if tok.type == "$END":
            pos = len(text.rstrip())
            return loc.error(f"expected {exp}{ctx}, found end of input", pos)
        return loc.error(f"expected {exp}{ctx}, found {_shown(str(tok))}", tok.start_pos)
    if isinstance(e, UnexpectedInput):  # pragma: no cover - other lark input errors
        return loc.error(f"syntax error: {e}", getattr(e, "pos_in_stream", 0) or 0)
    return loc.error(f"syntax error: {e}", 0)  # pragma: no cover


_BLANK_RE = re.compile(r"(?:\s+|/\*[\s\S]*?\*/|//[^\r\n]*)*")


def _run(text: str, start: str, filename: str | None, line: int, column: int):
    loc = _Locator(text, filename, line, column)
    nul = text.find("\0")
    if nul >= 0:
        raise loc.error("NUL byte in input", nul)
    m = _BLANK_RE.match(text)
    if m is not None and m.end() == len(text):
        what = "an HLO module" if start == "start" else "an instruction"
        raise loc.error(f"empty input: expected {what}", 0)
    parser = _get_parser()
    _ctx.text, _ctx.line, _ctx.column = text, line, column
    try:
        return parser.parse(text, start=start)
    except (lark.exceptions.LarkError, _ValueError) as e:
        raise _convert(e, loc) from None
    finally:
        _ctx.text = ""


def parse_instruction(text: str, *, filename: str | None = None, line: int = 1, column: int = 1) -> InstructionSyntax:
    """Parse one instruction. ``line``/``column`` say where ``text`` starts in
    the file, so that errors and attribute positions point into the real file."""
    return _run(text, "single_instruction", filename, line, column)


def parse_module(text: str, *, filename: str | None = None) -> ModuleSyntax:
    """Parse a whole module with the full grammar."""
    return _run(text, "start", filename, 1, 1)
