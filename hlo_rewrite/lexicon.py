"""The words of HLO text, as XLA's lexer (``xla/hlo/parser/hlo_lexer.cc``) reads them.

One home for the lexical facts every other module uses:

- ``IDENTIFIER`` (a regular-expression source) and ``IDENTIFIER_RE``: ``[a-zA-Z_][a-zA-Z0-9_.-]*``.
  ``NAME`` / ``NAME_RE`` also take the optional ``%`` XLA's printer puts before a name (``%`` must
  be followed directly by the identifier). ``ATTRIBUTE_NAME_RE``: an identifier glued to its ``=``
  (XLA's lexer reads ``name=`` as one token, so ``name =`` is not an attribute name).
- ``ELEMENT_TYPES``: every primitive type name XLA's parser accepts in a shape (``tuple`` and
  ``buffer`` excluded: those are written with parentheses), with ``INTEGRAL_TYPES``,
  ``FLOAT_TYPES``, ``COMPLEX_TYPES`` and ``bit_width``/``integer_range``/``float_max``.
- ``KEYWORDS``: the words XLA's lexer reserves (``true``, ``ROOT``, ``ENTRY``, ...).
- ``BOOLEANS`` and :func:`read_bool`: ``true`` and ``false``, lower case only.
- The one bracket and string walker: :func:`skip_string`, :func:`skip_comment`,
  :func:`skip_trivia`, :func:`find_top_level` (next top-level separator, balancing ``{}()[]``
  and skipping strings and comments), :func:`matching_close` and :func:`split_top_level`.

Every function that walks text raises :class:`ValueError` with a short message and leaves
locating the problem to its caller (which knows the file, line and column).
"""

from __future__ import annotations

import re

from .regex import lazy_pattern

TYPE_CHECKING = False  # typing is not imported at run time here (docs/decisions.md)

if TYPE_CHECKING:
    from typing import Final

__all__ = [
    "ATTRIBUTE_NAME_RE",
    "CLOSING",
    "COMMENT",
    "BOOLEANS",
    "COMPLEX_TYPES",
    "ELEMENT_TYPES",
    "FLOAT_TYPES",
    "NON_ARRAY_TYPES",
    "IDENTIFIER",
    "IDENTIFIER_RE",
    "INTEGRAL_TYPES",
    "JSON_TEXT_FROM",
    "KEYWORDS",
    "STACK_TABLES",
    "STRING_TABLES",
    "nan_payload_bits",
    "NAME",
    "NAME_RE",
    "SIGNED_TYPES",
    "UNSIGNED_TYPES",
    "UnclosedError",
    "attribute_value_end",
    "bit_width",
    "brace_group_end",
    "find_top_level",
    "float_max",
    "instruction_name_problem",
    "integer_range",
    "is_identifier",
    "json_text_from",
    "matching_close",
    "read_bool",
    "skip_comment",
    "skip_string",
    "skip_trivia",
    "split_top_level",
]

# ------------------------------------------------------------------ identifiers

#: an identifier: a letter or ``_``, then letters, digits, ``_``, ``.`` and ``-``
IDENTIFIER: Final = r"[A-Za-z_][A-Za-z0-9_.\-]*"
IDENTIFIER_RE: Final = lazy_pattern(IDENTIFIER)
#: a name as written before ``=`` or as an operand: an identifier, optionally after ``%``
NAME: Final = r"%?" + IDENTIFIER
NAME_RE: Final = lazy_pattern(NAME)
#: an attribute name: an identifier glued to its ``=``
ATTRIBUTE_NAME_RE: Final = lazy_pattern("(" + IDENTIFIER + ")=")

_IDENTIFIER_FULL = lazy_pattern(IDENTIFIER + r"\Z")


def is_identifier(text: str) -> bool:
    """Whether ``text`` is one whole identifier (no ``%``)."""
    return _IDENTIFIER_FULL.match(text) is not None


#: the stack frame tables' words, in the order they stand after the ``HloModule`` line
STACK_TABLES: Final = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")
#: the tables whose entries are a number and a string, which XLA's parser lets an entry leave out
#: (the name is then empty); the others' entries are a number and braced fields
STRING_TABLES: Final = frozenset({"FileNames", "FunctionNames"})

#: words XLA's lexer reads as keywords rather than identifiers
KEYWORDS: Final = frozenset({
    "true", "false", "inf", "nan", "HloModule", "ENTRY", "ROOT", "FileLocations", "FileNames",
    "FunctionNames", "StackFrames", "maximal", "replicated", "manual", "last_tile_dim_replicate",
    "shard_as", "shard_like", "unknown", "unreduced",
})

# ---------------------------------------------------------------- element types

#: signed integer types and their width in bits
SIGNED_TYPES: Final = {"s1": 1, "s2": 2, "s4": 4, "s8": 8, "s16": 16, "s32": 32, "s64": 64}
#: unsigned integer types and their width in bits
UNSIGNED_TYPES: Final = {"u1": 1, "u2": 2, "u4": 4, "u8": 8, "u16": 16, "u32": 32, "u64": 64}
#: floating-point types and their largest finite value
_FLOAT_MAX: Final = {
    "f16": 65504.0,
    "bf16": 3.3895313892515355e38,
    "f32": 3.4028234663852886e38,
    "f64": 1.7976931348623157e308,
    "f8e5m2": 57344.0,
    "f8e4m3fn": 448.0,
    "f8e4m3b11fnuz": 30.0,
    "f8e5m2fnuz": 57344.0,
    "f8e4m3fnuz": 240.0,
    "f8e4m3": 240.0,
    "f8e3m4": 15.5,
    "f8e8m0fnu": 1.7014118346046923e38,
    "f4e2m1fn": 6.0,
    "f6e3m2fn": 28.0,
    "f6e2m3fn": 7.5,
}
#: mantissa bits (without the implicit one) of each floating-point type
_FLOAT_MANTISSA: Final = {
    "f16": 10, "bf16": 7, "f32": 23, "f64": 52, "f8e5m2": 2, "f8e4m3fn": 3, "f8e4m3b11fnuz": 3,
    "f8e5m2fnuz": 2, "f8e4m3fnuz": 3, "f8e4m3": 3, "f8e3m4": 4, "f8e8m0fnu": 0, "f4e2m1fn": 1,
    "f6e3m2fn": 2, "f6e2m3fn": 3,
}
_FLOAT_BITS: Final = {
    "f16": 16, "bf16": 16, "f32": 32, "f64": 64, "f4e2m1fn": 4, "f6e3m2fn": 6, "f6e2m3fn": 6,
}

INTEGRAL_TYPES: Final = frozenset(SIGNED_TYPES) | frozenset(UNSIGNED_TYPES)
FLOAT_TYPES: Final = frozenset(_FLOAT_MAX)
#: complex types and the floating-point type of each part
COMPLEX_TYPES: Final = {"c64": "f32", "c128": "f64"}

#: the element types that are not arrays: their shapes have no dimensions, and no buffer holds them
NON_ARRAY_TYPES: Final = frozenset({"token", "opaque"})
#: every element type a shape may name (XLA's primitive types but ``tuple`` and ``buffer``)
ELEMENT_TYPES: Final = (
    frozenset({"pred"}) | NON_ARRAY_TYPES | INTEGRAL_TYPES | FLOAT_TYPES | frozenset(COMPLEX_TYPES)
)


def instruction_name_problem(name: str) -> str | None:
    """Why XLA's parser refuses ``name`` for an instruction, or None. It renames an instruction
    called like an element type (which its lexer would read as one) or starting with ``__``
    (kept for XLA's own names, ``__xla_...`` aside), and refuses a name it had to change."""
    if name in ELEMENT_TYPES:
        better = name + "_"
    elif name.startswith("__") and not name.startswith("__xla_"):
        better = "a" + name[1:]
    else:
        return None
    return f"illegal instruction name: {name}; suggest renaming to: {better}"


def bit_width(element_type: str) -> int | None:
    """Bits per element, or None for ``token`` and ``opaque``."""
    if element_type == "pred":
        return 8
    if element_type in SIGNED_TYPES:
        return SIGNED_TYPES[element_type]
    if element_type in UNSIGNED_TYPES:
        return UNSIGNED_TYPES[element_type]
    if element_type in COMPLEX_TYPES:
        return 64 if element_type == "c64" else 128
    if element_type in _FLOAT_MAX:
        return _FLOAT_BITS.get(element_type, 8)
    return None


def integer_range(element_type: str) -> tuple[int, int]:
    """The smallest and largest value of an integral element type."""
    if element_type in SIGNED_TYPES:
        bits = SIGNED_TYPES[element_type]
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    bits = UNSIGNED_TYPES[element_type]
    return 0, (1 << bits) - 1


def nan_payload_bits(element_type: str) -> int:
    """How many bits a NaN payload (``nan(0x...)``) may use in a floating-point type: its
    mantissa's, or 0 for the types whose NaN is one encoding (the ``fn``/``fnuz``/``fnu``
    types), which take no payload."""
    if element_type not in _FLOAT_MANTISSA or "fn" in element_type:
        return 0
    return _FLOAT_MANTISSA[element_type]


def float_max(element_type: str) -> tuple[float, float]:
    """The largest finite value of a floating-point type, and the magnitude from which a
    value no longer rounds to it (half a unit in the last place above it)."""
    top = _FLOAT_MAX[element_type]
    if element_type == "f64":
        return top, top
    exponent = 0
    x = top
    while x >= 2.0:
        x /= 2.0
        exponent += 1
    half_ulp = 2.0 ** (exponent - _FLOAT_MANTISSA[element_type] - 1)
    return top, top + half_ulp


# ---------------------------------------------------------------------- booleans

#: the only spellings of a boolean XLA's lexer knows
BOOLEANS: Final = {"true": True, "false": False}


def read_bool(text: str | None) -> bool | None:
    """``true``/``false`` (surrounding blanks allowed) as a bool; anything else is None.
    ``TRUE``, ``True``, ``1`` are not booleans to XLA."""
    if text is None:
        return None
    return BOOLEANS.get(text.strip(" \t\r\n"))


# ---------------------------------------------------- the bracket/string walker

#: each opening bracket and the one that closes it
CLOSING: Final = {"{": "}", "[": "]", "(": ")"}
_CLOSE: Final = frozenset("}])")
_SPECIALS: dict[str, re.Pattern[str]] = {}


class UnclosedError(ValueError):
    """A bracket or string that is never closed, with the index where it opens."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.offset = offset


#: the rest of a string after its opening quote: anything but the quote, or an escaped character
_REST = "[^{q}\\\\]*+(?:\\\\.[^{q}\\\\]*+)*+{q}"
_STRING_REST: Final = {q: re.compile(_REST.format(q=q), re.S) for q in "\"'"}
#: a whole double-quoted string (over lines too), to take every string out of a text at once; its
#: source, to build it into other expressions
DOUBLE_QUOTED: Final = '"(?s:' + _REST.format(q='"') + ")"
DOUBLE_QUOTED_RE: Final = lazy_pattern(DOUBLE_QUOTED)
#: a comment as XLA's lexer reads one, ``/* */`` or ``//`` to the line's end (``\n`` or a lone
#: ``\r``): the source, to build into other expressions (compiled with ``re.S``)
COMMENT: Final = r"/\*.*?\*/|//[^\n\r]*"


def skip_string(text: str, pos: int) -> int:
    """Index just past the quoted string starting at ``pos`` (``"`` or ``'``), whose
    backslash escapes may include the quote itself."""
    m = _STRING_REST[text[pos]].match(text, pos + 1)
    if m is None:
        raise ValueError("unterminated string")
    return m.end()


def skip_comment(text: str, pos: int) -> int:
    """Index just past the comment starting at ``pos`` (``/*...*/`` or ``//`` to the line end),
    or ``pos`` itself when no comment starts there."""
    if text.startswith("/*", pos):
        end = text.find("*/", pos + 2)
        if end < 0:
            raise ValueError("unterminated comment: '/*' without '*/'")
        return end + 2
    if text.startswith("//", pos):
        n = len(text)
        end = pos + 2
        while end < n and text[end] not in "\r\n":
            end += 1
        return end
    return pos


def skip_trivia(text: str, pos: int, end: int | None = None) -> int:
    """Index of the first character at or after ``pos`` that is neither blank nor comment."""
    n = len(text) if end is None else end
    while pos < n:
        ch = text[pos]
        if ch in " \t\r\n":
            pos += 1
        elif ch == "/" and (nxt := skip_comment(text, pos)) != pos:
            pos = nxt
        else:
            break
    return pos


def find_top_level(text: str, pos: int = 0, stops: str = ",", end: int | None = None) -> int:
    """Index of the first character of ``stops`` at bracket depth zero at or after ``pos``
    (``{}``, ``[]``, ``()`` balanced; strings and comments skipped), or the end of the text
    when there is none. A closing bracket that closes nothing opened after ``pos`` ends the
    walk too (it is returned when it is one of ``stops``, else it is an error).
    Raises ValueError when brackets do not balance or a string or comment is unterminated."""
    n = len(text) if end is None else end
    depth: list[str] = []  # the closers expected, innermost last
    opened: list[int] = []  # where each was opened
    special = _SPECIALS.get(stops)
    if special is None:  # only brackets, quotes, comments and the stops stop the search
        special = _SPECIALS[stops] = re.compile("[" + re.escape("{}[]()\"'/" + stops) + "]")
    search = special.search
    while True:
        m = search(text, pos, n)
        if m is None:
            if depth:
                raise ValueError(f"missing '{depth[-1]}'")
            return n
        ch = m.group()
        pos = m.start()
        if ch == '"' or ch == "'":
            try:
                end_of_string = skip_string(text, pos)
            except ValueError:
                end_of_string = n + 1
            if end_of_string > n:
                raise UnclosedError("unterminated string", pos)
            pos = end_of_string
            continue
        if ch == "/":
            nxt = skip_comment(text, pos)
            pos = nxt if nxt != pos else pos + 1
            continue
        if not depth and ch in stops:
            return pos
        if ch in CLOSING:
            depth.append(CLOSING[ch])
            opened.append(pos)
        elif ch in _CLOSE:
            if not depth:
                raise ValueError(f"unbalanced '{ch}'")
            if depth[-1] != ch:
                closed = _layout_closed_at(text, pos, depth, opened, n)
                if closed is None:
                    raise ValueError(f"'{ch}' where '{depth[-1]}' was expected")
                del depth[closed:], opened[closed:]
                pos += 1
                continue
            depth.pop()
            opened.pop()
        pos += 1


def _layout_closed_at(text: str, pos: int, depth: list[str], opened: list[int], n: int) -> int | None:
    """When the ``}`` at ``pos`` closes a layout left open inside (``{1,0:T(8,128}``: XLA reads
    a layout's sections as far as they go, :mod:`hlo_rewrite.layouts`), the depth of that
    layout's ``{``; else None."""
    if text[pos] != "}" or "}" not in depth:
        return None
    k = len(depth) - 1 - depth[::-1].index("}")
    return k if _layout_end(text, opened[k], n) == pos + 1 else None


def _layout_end(text: str, brace: int, end: int | None) -> int | None:
    """Where the layout whose ``{`` is at ``brace`` ends as XLA's parser reads it
    (:func:`hlo_rewrite.layouts.layout_end`), when that ``{`` follows a shape's ``]``."""
    before = brace - 1
    while before >= 0 and text[before] in " \t":
        before -= 1
    if before < 0:
        return None
    if text[before] != "]" and (
        text[before] not in "/\r\n" or _DIMS_CLOSE_BEFORE.search(text, max(0, brace - 4096), brace) is None
    ):  # (comments or line ends between the ']' and the '{': rare, looked for in the text before)
        return None
    from .layouts import layout_end  # (it reads with this module's tokens)

    return layout_end(text, brace, end)


def matching_close(text: str, pos: int, end: int | None = None) -> int:
    """Index just past the bracket that closes the one at ``pos``."""
    close = CLOSING.get(text[pos])
    if close is None:
        raise ValueError(f"expected a bracket, found {text[pos]!r}")
    n = len(text) if end is None else end
    try:
        stop = find_top_level(text, pos + 1, close, end)
    except ValueError:
        # a layout with a section left open closes where XLA reads it to
        got = _layout_end(text, pos, n) if close == "}" else None
        if got is None:
            raise
        return got
    if stop >= n:
        raise ValueError(f"missing '{close}'")
    return stop + 1


# a shape's ']' then blanks, line ends and comments, to the end of the text searched
_DIMS_CLOSE_BEFORE: Final = lazy_pattern(r"\](?:\s++|/\*(?:[^*]|\*(?!/))*+\*/|//[^\r\n]*+)*+\Z")
_BRACE_OR_QUOTE: Final = lazy_pattern(r'[{}"]')
_BRACE_QUOTE_OR_SLASH: Final = lazy_pattern(r'[{}"/]')

#: the attributes whose braced value XLA's lexer takes, from some brace depth on, as JSON text
#: (``LexJsonDict``), where only braces and strings count and a comment is text like any other:
#: all of ``backend_config={...}``, and each braced value inside ``frontend_attributes={...}``
JSON_TEXT_FROM: Final = {"backend_config": 1, "frontend_attributes": 2}


def json_text_from(name: str) -> int:
    """The brace depth from which the braced value of attribute ``name`` is JSON text to XLA's
    lexer (:data:`JSON_TEXT_FROM`), 0 when it is read token by token at every depth."""
    return JSON_TEXT_FROM.get(name, 0)


def brace_group_end(text: str, pos: int, json_from: int = 0) -> int:
    """``text[pos]`` is the ``{`` of a braced attribute value; the index just past its ``}``.
    Only braces count inside, so a value such as ``{mesh = #sdy.mesh<["x"=8]>}`` or ``{a={b[}}``
    is text in braces. Strings are skipped, and so are comments, as XLA's lexer skips them
    between the tokens of a value (``metadata={op_name="x" /* } */}`` closes at the last ``}``,
    and a ``}`` after ``//`` closes nothing), except from brace depth ``json_from`` on (when not
    0), where the value is JSON text to XLA's lexer (:data:`JSON_TEXT_FROM`) and a comment is
    text. Raises :class:`UnclosedError` when the brace, a string or a comment in it is never
    closed."""
    depth = 0
    search = (_BRACE_OR_QUOTE if json_from == 1 else _BRACE_QUOTE_OR_SLASH).search
    i = pos
    while (m := search(text, i)) is not None:
        i = m.start()
        ch = m.group()
        if ch == '"':
            try:
                i = skip_string(text, i)
            except ValueError:
                raise UnclosedError("unterminated string: '\"' is never closed", i) from None
            continue
        if ch == "/":
            if json_from and depth >= json_from:
                i += 1
                continue
            try:
                nxt = skip_comment(text, i)
            except ValueError:
                raise UnclosedError("unterminated comment: '/*' is never closed with '*/'", i) from None
            i = nxt if nxt != i else i + 1
            continue
        depth += 1 if ch == "{" else -1
        i += 1
        if depth == 0:
            return i
    raise UnclosedError("the '{' opened here is never closed", pos)


def attribute_value_end(text: str, pos: int, name: str = "", json_from: int | None = None) -> int:
    """Index of the top-level ``,`` (or the end of the text) that ends the value of attribute
    ``name`` starting at ``pos``. A braced value is text in which only braces pair
    (:func:`brace_group_end`, JSON text as ``name`` says, or from depth ``json_from``); anything
    after its ``}`` up to the ``,`` belongs to the value, for the value's reader to refuse.
    Raises ValueError (:class:`UnclosedError` for a brace or string never closed) when
    brackets do not balance."""
    if text.startswith("{", pos):
        pos = brace_group_end(text, pos, json_text_from(name) if json_from is None else json_from)
    return find_top_level(text, pos)


def split_top_level(text: str, sep: str = ",") -> list[str]:
    """The pieces of ``text`` between top-level separators (brackets, strings and comments
    respected); pieces keep their blanks. An empty text gives one empty piece."""
    out: list[str] = []
    pos = 0
    n = len(text)
    while True:
        stop = find_top_level(text, pos, sep)
        out.append(text[pos:stop])
        if stop >= n:
            return out
        pos = stop + 1
