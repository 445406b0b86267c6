"""Literals (the text inside ``constant(...)`` and after ``literal=``) checked against their
shape, as XLA's parser checks them (``ParseDenseLiteral`` and ``CheckParsedValueIsInRange`` in
``xla/hlo/parser/hlo_parser.cc``), in time linear in the text and without building the values.

Public names: :func:`check_literal` ``(shape, text, base=0)`` raises
:class:`~hlo_rewrite.values.ValueReadError` (``offset`` from ``base``) at the first element or
bracket XLA's parser would reject; :func:`split_shape_prefix` cuts ``literal=`` text into its
shape and its literal.

The rules: a rank-N array literal nests braces N deep and each level holds exactly as many
items as its dimension (``...`` at the first level stands for all of them); elements are
separated by commas or blanks; an integer element fits its type (``s8``: -128..127); a
floating-point element does not round beyond the type's largest finite value (``inf`` and
``nan`` are allowed); ``pred`` takes ``true``, ``false`` and integers (non-zero is true, as
for XLA); a complex element is
``(real, imag)``. Tuple literals are ``(element, ...)`` with one element per tuple entry.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Final

from . import lexicon
from .regex import lazy_pattern
from .shapes import Shape, shape_end
from .values import ValueReadError

__all__ = ["check_literal", "literal_end", "split_shape_prefix"]

_SEP: Final = r"[ \t\r\n,]*+"
_INT_TOKEN: Final = r"-?\d+(?![\d.eE])"
# XLA's lexer starts a number at a digit or '-': "-.5" is a number, ".5" is not
_FLOAT_NUM: Final = r"(?:-?\d+\.?\d*|-\.\d+)(?:[eE][-+]?\d+)?"
# a word ends where XLA's lexer ends an identifier; a number where its number patterns stop, and
# a word may follow at once ("7nan" is 7, then nan); "-inf" and "-nan" are read by the number
# patterns, and end where they are spelled ("-nan7" is -nan, then 7; "-infinf", -inf, then inf),
# as a nan's payload ends a nan
_NAN: Final = r"nan(?:\(0x[0-9a-fA-F]+\))?"
_FLOAT_TOKEN: Final = (r"(?:" + _FLOAT_NUM + r"(?![\d.])|(?:inf|nan)(?![\w.(])|nan\(0x[0-9a-fA-F]+\)|-inf|-"
                       + _NAN + ")")
_PRED_TOKEN: Final = r"(?:(?:true|false)(?![\w.])|-?\d+(?![\d.]))"
_COMPLEX_TOKEN: Final = (r"\([ \t\r\n]*" + _FLOAT_TOKEN + r"[ \t\r\n]*,[ \t\r\n]*" + _FLOAT_TOKEN
                         + r"[ \t\r\n]*\)")


class _Category:
    """How the elements of one element type are written and checked."""

    __slots__ = ("token", "row", "canonical", "what", "find")

    def __init__(self, token: str, what: str) -> None:
        self.token = re.compile(token)
        # possessive repeats: no backtracking state is kept per element of a long row
        self.row = re.compile(_SEP + r"(?:" + token + _SEP + r")*+")
        # one element after another with exactly one comma between: count the commas
        self.canonical = re.compile(r"[ \t\r\n]*+(?:" + token + r"[ \t\r\n]*+,[ \t\r\n]*+)*+" + token
                                    + r"[ \t\r\n]*+")
        self.what = what
        self.find = re.compile(token)


_INT: Final = _Category(_INT_TOKEN, "integer")
_FLOAT: Final = _Category(_FLOAT_TOKEN, "floating point value")
_PRED: Final = _Category(_PRED_TOKEN, "true, false or an integer")
_COMPLEX: Final = _Category(_COMPLEX_TOKEN, "complex value (real, imag)")

_BRACE_RE = re.compile(r"[{}]")
_BLANKS_RE = re.compile(r"[ \t\r\n,]*")
_BIG_INT_CACHE: dict[str, re.Pattern[str]] = {}
_BIG_FLOAT_CACHE: dict[str, re.Pattern[str]] = {}


def _category(element_type: str) -> _Category:
    if element_type in lexicon.INTEGRAL_TYPES:
        return _INT
    if element_type in lexicon.FLOAT_TYPES:
        return _FLOAT
    if element_type == "pred":
        return _PRED
    if element_type in lexicon.COMPLEX_TYPES:
        return _COMPLEX
    raise ValueReadError(f"a literal of element type {element_type} cannot be written", 0)


def _type_name(element_type: str) -> str:
    return element_type.upper()


# ---------------------------------------------------------------- element ranges


def _above(bound: str) -> str:
    """A pattern for the digit strings of ``bound``'s length that are greater than it."""
    alts = [re.escape(bound[:i]) + f"[{int(d) + 1}-9]" + r"\d" * (len(bound) - i - 1)
            for i, d in enumerate(bound) if d != "9"]
    return "|".join(alts) if alts else "(?!)"


def _out_of_range(element_type: str) -> re.Pattern[str]:
    """One pattern finding any integer literal outside ``element_type``'s range, so that a
    long row is checked by one search instead of one comparison per element."""
    lo, hi = lexicon.integer_range(element_type)
    top = str(hi)
    over = rf"(?<![\d\-])0*+(?:[1-9]\d{{{len(top)},}}|{_above(top)})(?!\d)"
    if lo == 0:
        under = r"-0*+[1-9]"  # any negative value
    else:
        bottom = str(-lo)
        under = rf"(?<!\d)-0*+(?:[1-9]\d{{{len(bottom)},}}|{_above(bottom)})(?!\d)"
    return re.compile(over + "|" + under)


_CHUNK = 1 << 18


def _chunks(row: str) -> list[tuple[int, int]]:
    """``(start, end)`` pieces of about 256 kB of a comma-separated row, cut after commas."""
    out: list[tuple[int, int]] = []
    n = len(row)
    start = 0
    while start < n:
        end = n if n - start <= _CHUNK else row.find(",", start + _CHUNK)
        if end < 0:
            end = n
        out.append((start, end))
        start = end + 1
    return out


def _canonical_ints_fit(element_type: str, row: str) -> bool:
    """Whether every element of a canonical row (one comma between elements) fits the type,
    read 256 kB at a time."""
    lo, hi = lexicon.integer_range(element_type)
    for start, end in _chunks(row):
        values = list(map(int, row[start:end].split(",")))
        if min(values) < lo or max(values) > hi:
            return False
    return True


def _canonical_floats_fit(element_type: str, row: str) -> bool | None:
    """Like :func:`_canonical_ints_fit` for floating-point rows; None when a NaN payload
    needs the element-by-element reading."""
    if "(" in row or element_type == "f64":  # a double's overflow reads as inf: look closer
        return None
    limit = lexicon.float_max(element_type)[1]
    for start, end in _chunks(row):
        values = map(float, row[start:end].split(","))
        if max((abs(v) for v in values), default=0.0) >= limit:
            return False  # beyond the type's range, inf, or a decimal beyond a double's: look closer
    return True


def _check_ints(element_type: str, row: str, at: int) -> None:
    pattern = _BIG_INT_CACHE.get(element_type)
    if pattern is None:
        pattern = _BIG_INT_CACHE[element_type] = _out_of_range(element_type)
    m = pattern.search(row)
    if m is not None:
        lo, hi = lexicon.integer_range(element_type)
        token = re.match(r"-?\d+", row[m.start():])
        shown = token.group() if token else m.group()
        raise ValueReadError(
            f"value {shown} is out of range for literal's primitive type "
            f"{_type_name(element_type)} namely [{lo}, {hi}]", at + m.start())


#: a decimal that may be beyond a double's range: over 308 digits, or a three-digit exponent
_F64_BIG: Final = re.compile(r"(?<![\d.eE+\-])-?(?:\d{309,}\.?\d*(?:[eE][-+]?\d+)?|(?:\d+\.?\d*|\.\d+)[eE]\+?\d{3,})")


_NAN_PAYLOAD: Final = re.compile(r"nan\(0x([0-9a-fA-F]+)\)")


def _check_nan_payloads(element_type: str, row: str, at: int) -> None:
    """Each ``nan(0x...)`` payload is not zero and fits the type's mantissa (XLA's lexer and
    literal builder refuse the others; a type with one NaN takes none)."""
    bits = lexicon.nan_payload_bits(element_type)
    for m in _NAN_PAYLOAD.finditer(row):
        payload = int(m.group(1), 16)
        if payload == 0:
            raise ValueReadError("NaN payload out of range: 0", at + m.start())
        if bits == 0:
            raise ValueReadError(f"tries to set NaN payload 0x{payload:x}, but {element_type} does not support "
                                 "payloads", at + m.start())
        if payload >= 1 << bits:
            raise ValueReadError(f"tries to set NaN payload 0x{payload:x}, out of range for {element_type} "
                                 f"(0x{(1 << bits) - 1:x})", at + m.start())


def _beyond_double(at: int) -> ValueReadError:
    """A decimal beyond a double's range, which reads as inf: XLA's lexer refuses it, whatever
    the literal's type (it reads every decimal as a double first)."""
    return ValueReadError("Constant is out of range for double (+/-1.79769e+308) and so is unparsable.", at)


def _check_floats(element_type: str, row: str, at: int) -> None:
    if "nan(" in row:
        _check_nan_payloads(element_type, row, at)
    top, limit = lexicon.float_max(element_type)
    if element_type == "f64":
        for m in _F64_BIG.finditer(row):
            if abs(float(m.group())) == float("inf"):
                raise _beyond_double(at + m.start())
        return
    big = _BIG_FLOAT_CACHE.get(element_type)
    if big is None:
        digits = len(str(int(top)))
        big = _BIG_FLOAT_CACHE[element_type] = re.compile(
            r"(?<![\d.eE+\-])-?(?:\d{" + str(digits) + r",}\.?\d*(?:[eE][-+]?\d+)?|(?:\d+\.?\d*|\.\d+)[eE]\+?\d+)")
    for m in big.finditer(row):
        value = float(m.group())
        if abs(value) == float("inf"):  # a number spelled, not the word inf: beyond a double
            raise _beyond_double(at + m.start())
        if abs(value) >= limit:
            raise ValueReadError(
                f"value {m.group()} is out of range for literal's primitive type "
                f"{_type_name(element_type)} namely [{-top:g}, {top:g}]", at + m.start())


def _check_complex(element_type: str, row: str, at: int) -> None:
    part = lexicon.COMPLEX_TYPES[element_type]
    for m in re.finditer(_FLOAT_NUM, row):
        _check_floats(part, m.group(), at + m.start())


# --------------------------------------------------------------------- the rows


def _row(element_type: str, cat: _Category, seg: str, at: int) -> int:
    """Number of elements in ``seg`` (the text between two braces, or a scalar's text),
    each checked against ``element_type``."""
    if cat.canonical.fullmatch(seg) is not None:
        count = seg.count(",") + 1
        if cat is _INT and len(seg) > 4096 and _canonical_ints_fit(element_type, seg):
            return count
        if cat is _FLOAT and len(seg) > 4096 and _canonical_floats_fit(element_type, seg):
            return count
        if cat is _COMPLEX:
            count = seg.count("(")
    elif cat.row.fullmatch(seg) is not None:
        count = sum(1 for _ in cat.find.finditer(seg))
    else:
        bad = cat.row.match(seg).end()  # type: ignore[union-attr]
        shown = re.match(r"[^\s,{}]{1,20}", seg[bad:])
        found = shown.group() if shown else seg[bad : bad + 1]
        raise ValueReadError(
            f"expects {cat.what} for primitive type {_type_name(element_type)}, found '{found}'", at + bad)
    if cat is _INT:
        _check_ints(element_type, seg, at)
    elif cat is _FLOAT:
        _check_floats(element_type, seg, at)
    elif cat is _COMPLEX:
        _check_complex(element_type, seg, at)
    return count


def _blank_comments(text: str) -> str:
    """``text`` with each comment replaced by blanks of the same length (offsets kept)."""
    out: list[str] = []
    pos = 0
    n = len(text)
    while pos < n:
        i = text.find("/", pos)
        if i < 0:
            break
        try:
            end = lexicon.skip_comment(text, i)
        except ValueError as exc:
            raise ValueReadError(str(exc), i) from None
        if end == i:
            raise ValueReadError("unexpected '/' in a literal", i)
        out.append(text[pos:i])
        out.append(re.sub(r"[^\r\n]", " ", text[i:end]))
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _index(seen: list[int], level: int) -> str:
    return "[" + ",".join(str(x - 1) for x in seen[:level]) + "]"


def _check_array(shape: Shape, text: str, base: int) -> None:
    et = shape.element_type
    try:
        cat = _category(et)
    except ValueReadError as exc:
        raise ValueReadError(exc.message, base + lexicon.skip_trivia(text, 0)) from None
    dims = shape.dims
    rank = len(dims)
    if rank == 0:
        if "{" in text or "}" in text:
            raise ValueReadError("expects nested array in rank 0, but sees larger", base + text.find("{"))
        count = _row(et, cat, text, base)
        if count != 1:
            raise ValueReadError(f"expects one value for a scalar of type {_type_name(et)}, sees {count}",
                                 base)
        return
    start = lexicon.skip_trivia(text, 0)
    if not text.startswith("{", start):
        if math.prod(dims) == 1 and "}" not in text and _row(et, cat, text, base) == 1:
            return  # a bare value for an array of one element: XLA sets that element, exactly
        # (of more elements, XLA sets the first one only: refused, docs/decisions.md)
        raise ValueReadError(f"expects a nested array of rank {rank} in braces", base + start)
    level = 0
    seen = [0] * rank
    pos = 0
    for m in _BRACE_RE.finditer(text):
        seg_at = pos
        seg = text[pos : m.start()]
        pos = m.end()
        if level == rank or "..." in seg:
            dots = seg.find("...")
            if dots >= 0:
                if level != 1:
                    raise ValueReadError(f"expects '...' at nest level 1, but sees it at nest level {level}",
                                         base + seg_at + dots)
                seg = seg.replace("...", "   ")
            if level == rank:
                if seg.strip(" \t\r\n,"):
                    seen[rank - 1] += _row(et, cat, seg, base + seg_at)
                    if seen[rank - 1] > dims[rank - 1]:
                        raise ValueReadError(
                            f"expects {dims[rank - 1]} elements on the minor-most dimension, but sees more",
                            base + seg_at)
            elif seg.strip(" \t\r\n,"):
                raise ValueReadError(f"expects nested array in rank {rank}, but sees {level}",
                                     base + seg_at + _BLANKS_RE.match(seg).end())  # type: ignore[union-attr]
            if dots >= 0:
                seen[0] = dims[0]
        elif seg.strip(" \t\r\n,"):
            skip = _BLANKS_RE.match(seg).end()  # type: ignore[union-attr]
            if level == 0:
                raise ValueReadError(f"unexpected {seg[skip:skip + 10]!r} in a literal", base + seg_at + skip)
            raise ValueReadError(f"expects nested array in rank {rank}, but sees {level}", base + seg_at + skip)
        if m.group() == "{":
            if level == 0 and seg_at != 0:
                raise ValueReadError("a literal has one outermost '{...}'", base + m.start())
            level += 1
            if level > rank:
                raise ValueReadError(f"expects nested array in rank {rank}, but sees larger", base + m.start())
            if level > 1:
                seen[level - 2] += 1
                if seen[level - 2] > dims[level - 2]:
                    raise ValueReadError(
                        f"expects {dims[level - 2]} elements in the {_index(seen, level - 2)}th element, "
                        "but sees more", base + m.start())
        else:
            if level == 0:
                raise ValueReadError("unexpected '}' token", base + m.start())
            level -= 1
            if seen[level] != dims[level]:
                raise ValueReadError(
                    f"expects {dims[level]} elements in the {_index(seen, level)}th element, "
                    f"but sees {seen[level]}", base + m.start())
            seen[level] = 0
            if level == 0:
                rest = text[pos:]
                if rest.strip(" \t\r\n"):
                    skip = len(rest) - len(rest.lstrip(" \t\r\n"))
                    raise ValueReadError("expects ')' after the literal", base + pos + skip)
                return
    raise ValueReadError("missing '}' at the end of the literal", base + len(text.rstrip()))


def check_literal(shape: Shape, text: str, base: int = 0) -> None:
    """Check literal ``text`` against ``shape``; raises ValueReadError at ``base`` + offset."""
    if "/" in text:
        text = _blank_comments(text)
    if not shape.is_tuple:
        _check_array(shape, text, base)
        return
    start = lexicon.skip_trivia(text, 0)
    stripped = text.rstrip(" \t\r\n")
    if not text.startswith("(", start) or not stripped.endswith(")"):
        raise ValueReadError("expects '(' in front of tuple elements", base + start)
    inner_at = start + 1
    inner = text[inner_at : len(stripped) - 1]
    count = len(shape.tuple_shapes)
    seen = 0
    for at, piece in _tuple_elements(inner, count, base + inner_at):  # each checked before the next is read
        check_literal(shape.tuple_shapes[seen], piece, base + inner_at + at)
        seen += 1
    if seen != count:
        raise ValueReadError(f"expects {count} tuple elements, sees {seen}", base + start)


# one element of a tuple literal that is not in brackets, one token as XLA's lexer reads it: a
# number (ending where the number patterns end: "7nan" is 7, then nan; "-nan7", -nan, then 7), a
# nan with its payload, a word
_ELEMENT_TOKEN: Final = lazy_pattern(r"-inf|-?" + _NAN + "|" + _FLOAT_NUM + r"(?![\d.])|[^\s,(){}/]+")


def _tuple_elements(inner: str, count: int, base: int) -> Iterator[tuple[int, str]]:
    """The elements of a tuple literal's insides, read as XLA's parser reads them: one after
    another, each after the first with a ',' before it or not (XLA notes a missing one and goes
    on); (offset, text) of each, at most ``count``. Text after them is an error."""
    seen = 0
    n = len(inner)
    pos = lexicon.skip_trivia(inner, 0)
    while pos < n and seen < count:
        if seen and inner.startswith(",", pos):
            pos = lexicon.skip_trivia(inner, pos + 1)
        if pos >= n:
            break
        if inner[pos] in "({":
            try:
                end = lexicon.matching_close(inner, pos)
            except ValueError as exc:
                raise ValueReadError(str(exc), base + pos) from None
        else:
            m = _ELEMENT_TOKEN.match(inner, pos)
            if m is None:
                raise ValueReadError(f"unexpected {inner[pos]!r} in a tuple literal", base + pos)
            end = m.end()
        yield pos, inner[pos:end]
        seen += 1
        pos = lexicon.skip_trivia(inner, end)
    if pos < n and seen == count:
        raise ValueReadError(f"expects ')' at the end of the tuple with {count} elements", base + pos)


def literal_end(text: str, pos: int, end: int) -> int:
    """Where the literal at or after ``pos`` ends (before ``end``): past its braces or its
    parentheses (a complex scalar), or past its one token (a scalar)."""
    pos = lexicon.skip_trivia(text, pos, end)
    if pos < end and text[pos] in "{(":
        try:
            return lexicon.matching_close(text, pos, end)
        except ValueError as exc:
            raise ValueReadError(str(exc), pos) from None
    m = _ELEMENT_TOKEN.match(text, pos, end)
    if m is None:
        raise ValueReadError("expected a literal after its shape", pos)
    return m.end()


def split_shape_prefix(text: str) -> tuple[str, int]:
    """``("f32[2]{0}", 10)`` for ``"f32[2]{0} {1, 2}"``: the shape and where the literal starts."""
    start = lexicon.skip_trivia(text, 0)
    if text.startswith("(", start):
        try:
            end = lexicon.matching_close(text, start)
        except ValueError as exc:
            raise ValueReadError(str(exc), start) from None
        return text[start:end], end
    got = shape_end(text, start)  # (blanks and comments may stand between its tokens)
    if isinstance(got, tuple):
        raise ValueReadError(f"expected a shape before the literal: {got[1]}", got[0])
    return text[start:got], got
