"""HLO shapes: ``f32[2,4]{1,0}``, ``bf16[]``, ``(f32[2], token[])``, ``s32[<=8,?]``.

Instructions keep their shape as the exact source text; :func:`parse_shape`
turns that text into a :class:`Shape` only when a pass needs to look inside
(element type, dimensions). Shapes are printed back from their text, so no
information is lost by this small model.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

from .errors import HloParseError
from .layouts import layout_tail_end
from .lexicon import ELEMENT_TYPES, IDENTIFIER, NON_ARRAY_TYPES, skip_trivia
from .regex import lazy_pattern

__all__ = ["ELEMENT_TYPES", "Shape", "compatible", "element_type_of", "is_array", "is_buffer_start", "parse_shape",
           "shape_end", "shape_syntax_error"]

_ARRAY_RE = lazy_pattern(
    r"\s*(?P<ty>[a-z][a-z0-9]*)\[(?P<dims>[^\]]*)\](?P<layout>\{[^{}]*\})?"
)
_COMMENT_RE = lazy_pattern(r"/\*.*?\*/", re.S)
# a buffer shape's b( and its closing )
_BUFFER_RE = lazy_pattern(r"b\s*\(\s*")
_BUFFER_CLOSE_RE = lazy_pattern(r"\s*\)")


class Shape(NamedTuple):
    """An array shape (``element_type`` + ``dims``) or a tuple (``tuple_shapes``)."""

    element_type: str  # "tuple" for tuples
    dims: tuple[int, ...] = ()
    dynamic: tuple[bool, ...] = ()
    layout: str | None = None  # the layout text with braces, e.g. "{1,0}"
    tuple_shapes: tuple[Shape, ...] = ()
    buffer: bool = False  # a buffer shape, b(f32[2]{0})

    @property
    def is_tuple(self) -> bool:
        return self.element_type == "tuple"

    @property
    def rank(self) -> int:
        return len(self.dims)

    def minor_to_major(self) -> tuple[int, ...] | None:
        """The layout's dimension order, or None when no layout is given."""
        if self.layout is None:
            return None
        layout = self.layout if "/" not in self.layout else _TRIVIA_RE.sub(" ", self.layout)  # (comments)
        inner = layout[1:-1].split(":", 1)[0].strip()
        try:
            return tuple(int(x) for x in inner.split(",") if x.strip())
        except ValueError:
            raise HloParseError(f"malformed layout {self.layout!r} in shape {self.text()!r}") from None

    def text(self) -> str:
        """XLA's spelling of this shape (layout kept as written)."""
        if not self.is_tuple:
            return self._array_text()
        parts: list[str] = []
        stack: list[str | Shape] = [self]  # iterative: tuple shapes nest thousands deep
        while stack:
            item = stack.pop()
            if isinstance(item, str):
                parts.append(item)
            elif isinstance(item, Shape) and item.is_tuple:
                stack.append(")")
                for i in range(len(item.tuple_shapes) - 1, -1, -1):
                    stack.append(item.tuple_shapes[i])
                    if i:
                        stack.append(", " + (f"/*index={i}*/" if i % 5 == 0 else ""))
                stack.append("(")
            else:
                parts.append(item._array_text())
        return "".join(parts)

    def _array_text(self) -> str:
        dims = ",".join(
            ("<=" + str(d)) if dyn and d >= 0 else ("?" if dyn else str(d))
            for d, dyn in zip(self.dims, self.dynamic or (False,) * len(self.dims), strict=False)
        )
        layout = self.layout if (self.layout and self.dims) else ""
        array = f"{self.element_type}[{dims}]{layout}"
        return f"b({array})" if self.buffer else array

    def with_dims(self, dims: tuple[int, ...]) -> Shape:
        """Same element type and layout, other dimension sizes."""
        return Shape(self.element_type, tuple(dims), (False,) * len(dims), self.layout, buffer=self.buffer)


_TRIVIA_RE = lazy_pattern(r"/\*.*?\*/|\s+", re.S)


def _parse_dims(text: str) -> tuple[tuple[int, ...], tuple[bool, ...]]:
    if not text.strip():
        return (), ()
    dims: list[int] = []
    dyn: list[bool] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            raise ValueError("expected a dimension size between the commas")  # as XLA's parser
        if part == "?":
            dims.append(-1)
            dyn.append(True)
        elif part.startswith("<="):
            dims.append(int(part[2:]))
            dyn.append(True)
        else:
            dims.append(int(part))
            dyn.append(False)
    return tuple(dims), tuple(dyn)


def _parse_at(text: str, pos: int) -> tuple[Shape, int]:
    # iterative (an explicit stack of open tuples): tuple shapes nest thousands deep
    n = len(text)
    stack: list[list[Shape]] = []
    while True:
        while pos < n and text[pos] in " \t\r\n":
            pos += 1
        if pos < n and text[pos] == "(":
            stack.append([])
            pos += 1
        else:
            b = _BUFFER_RE.match(text, pos)
            m = _ARRAY_RE.match(text, pos if b is None else b.end())
            if not m or m.group("ty") not in ELEMENT_TYPES:
                raise ValueError(f"expected a shape at {text[pos:pos + 20]!r}")
            dims, dyn = _parse_dims(m.group("dims"))
            shape = Shape(m.group("ty"), dims, dyn, m.group("layout"), buffer=b is not None)
            pos = m.end()
            if b is not None:
                close = _BUFFER_CLOSE_RE.match(text, pos)
                if close is None:
                    raise ValueError("expects ')' at the end of buffer shape.")
                pos = close.end()
            if not stack:
                return shape, pos
            stack[-1].append(shape)
        while True:  # inside a tuple: separators, comments, closing parentheses
            while pos < n and text[pos] in " \t\r\n,":
                pos += 1
            if text.startswith("/*", pos):
                end = text.find("*/", pos)
                if end < 0:
                    raise ValueError("unterminated comment in shape")
                pos = end + 2
                continue
            if pos < n and text[pos] == ")":
                shape = Shape("tuple", tuple_shapes=tuple(stack.pop()))
                pos += 1
                if not stack:
                    return shape, pos
                stack[-1].append(shape)
                continue
            if pos >= n:
                raise ValueError("unterminated tuple shape")
            break


@lru_cache(maxsize=65536)
def parse_shape(text: str) -> Shape:
    """Parse shape text; raises HloParseError (without a location) when malformed."""
    try:
        shape, end = _parse_at(text, 0)
        if not text[end:].strip():
            return shape
        problem = f"unexpected {text[end:].strip()!r}"
    except ValueError as exc:
        problem = str(exc)
    # XLA's lexer allows blanks and comments between a shape's tokens (``f32 [2] /*c*/ {0}``);
    # no token of a shape needs a blank to end it
    squeezed = _TRIVIA_RE.sub("", text)
    if squeezed != text and "/*" not in squeezed and squeezed:
        try:
            shape, end = _parse_at(squeezed, 0)
            if end == len(squeezed):
                return shape
        except ValueError:
            pass
    raise HloParseError(f"malformed shape {text!r}: {problem}")


def compatible(a: Shape, b: Shape) -> bool:
    """Shapes equal but for their layouts and dynamic bounds (XLA's ``ShapeUtil::Compatible``):
    the same element types and ranks, and each dimension the same size unless either is
    unbounded (``?``); ``<=4`` is compatible with ``4``."""
    if a.is_tuple or b.is_tuple:
        return (a.is_tuple and b.is_tuple and len(a.tuple_shapes) == len(b.tuple_shapes)
                and all(compatible(x, y) for x, y in zip(a.tuple_shapes, b.tuple_shapes, strict=True)))
    return a.element_type == b.element_type and len(a.dims) == len(b.dims) and all(
        x == y or x < 0 or y < 0 for x, y in zip(a.dims, b.dims, strict=True))


def is_array(shape: Shape) -> bool:
    """Whether ``shape`` is an array: not a tuple, a token or an opaque value."""
    return not shape.is_tuple and shape.element_type not in NON_ARRAY_TYPES


def element_type_of(text: str) -> str:
    """Element type of a shape text (``"tuple"`` for tuples), without a full parse."""
    s = text.lstrip()
    if s.startswith("("):
        return "tuple"
    return s.split("[", 1)[0]


_WORD_AT = lazy_pattern(IDENTIFIER)
_INT_AT = lazy_pattern(r"-?[0-9]+")
def shape_syntax_error(text: str, pos: int = 0, end: int | None = None, *,
                       counted: bool = True) -> tuple[int, str] | None:
    """Where and why the shape written in ``text[pos:end]`` is not one XLA's parser reads, or
    None when it is (:func:`shape_end`, and nothing after the shape but blanks and comments).
    ``counted=False``: a layout may have another number of entries than its shape dimensions."""
    n = len(text) if end is None else end
    got = shape_end(text, pos, n, counted=counted)
    if isinstance(got, tuple):
        return got
    after = skip_trivia(text, got, n)
    return None if after >= n else (after, f"unexpected '{text[after]}' after the shape")


def shape_end(text: str, pos: int = 0, end: int | None = None, *, listed: bool = False,
              counted: bool = True) -> int | tuple[int, str]:
    """The offset just after the shape that starts at ``pos`` (blanks and comments first
    skipped), or (where, why) it is not a shape XLA's parser reads: an element type XLA knows,
    dimensions each a size (``<=N`` or ``?`` for a dynamic one) with no empty item, a layout
    only where ``{`` is followed by a number or ``:`` and with one entry per dimension, tuples of
    such shapes with no empty item; blanks and comments between any two tokens. ``listed``: the
    outer parentheses hold a list of shapes, not a tuple (an entry computation layout's
    parameters). :func:`parse_shape` reads more loosely (it only looks inside shapes a reader
    has let through); strict mode asks this."""
    n = len(text) if end is None else end
    tuple_from = 2 if listed else 1  # the depth from which parentheses are a tuple's
    pos = skip_trivia(text, pos, n)
    open_tuples = 0
    while True:
        # one shape starts here (after '(' or ',' inside a tuple, or at the start)
        if text.startswith("(", pos, n):
            open_tuples += 1
            pos = skip_trivia(text, pos + 1, n)
            if not text.startswith(")", pos, n):
                continue
            last = pos = pos + 1  # the empty tuple
            open_tuples -= 1
        else:
            got = (_buffer_end(text, pos, n) if is_buffer_start(text, pos, n)
                   else _array_end(text, pos, n, in_tuple=open_tuples >= tuple_from, counted=counted))
            if isinstance(got, tuple):
                return got
            last = pos = got
        while open_tuples:  # after a shape inside a tuple: ',' and another shape, or ')'
            pos = skip_trivia(text, pos, n)
            if text.startswith(",", pos, n):
                pos = skip_trivia(text, pos + 1, n)
                break
            if text.startswith(")", pos, n):
                open_tuples -= 1
                last = pos = pos + 1
                continue
            return pos, "expects ')' at the end of tuple."
        else:
            return last


def is_buffer_start(text: str, pos: int, end: int | None = None) -> bool:
    """Whether a buffer shape starts at ``pos``: ``b`` then ``(`` (blanks and comments between),
    which no array shape's element type is (``bf16[2]``)."""
    return text.startswith("b", pos, end) and text.startswith("(", skip_trivia(text, pos + 1, end), end)


def _buffer_end(text: str, pos: int, n: int) -> int | tuple[int, str]:
    """The offset just after the buffer shape at ``pos`` (``b(f32[2]{0})``: one array shape in
    ``b(...)``), or (where, why) it is not one."""
    inner = skip_trivia(text, skip_trivia(text, pos + 1, n) + 1, n)
    word = _WORD_AT.match(text, inner, n)
    if text.startswith("(", inner, n) or is_buffer_start(text, inner, n) or (
        word is not None and word.group() in NON_ARRAY_TYPES
    ):
        return inner, "a buffer shape holds one array shape"
    got = _array_end(text, inner, n)
    if isinstance(got, tuple):
        return got
    close = skip_trivia(text, got, n)
    if not text.startswith(")", close, n):
        return close, "expects ')' at the end of buffer shape."
    return close + 1


def _array_end(text: str, pos: int, n: int, *, in_tuple: bool = False, counted: bool = True) -> int | tuple[int, str]:
    """The offset just after the array shape at ``pos``, or (where, why) it is not one
    (``in_tuple``: an element of a tuple shape, whose layout XLA reads without negative entries,
    while it takes ``f32[2,3]{-1,0}`` alone)."""
    m = _WORD_AT.match(text, pos, n)
    if m is None or m.group() not in ELEMENT_TYPES:
        seen = "the end" if pos >= n else (f"'{m.group()}'" if m is not None else f"'{text[pos]}'")
        return pos, f"expected primitive type, saw {seen}"
    pos = skip_trivia(text, m.end(), n)
    if not text.startswith("[", pos, n):
        return pos, "expects '[' to start the dimensions"
    pos = skip_trivia(text, pos + 1, n)
    rank = 0
    if not text.startswith("]", pos, n):
        while True:
            if text.startswith("?", pos, n):
                pos += 1
            else:
                if text.startswith("<=", pos, n):
                    pos = skip_trivia(text, pos + 2, n)
                d = _INT_AT.match(text, pos, n)
                if d is None:
                    return pos, "expects integer"
                if d.group().startswith("-"):
                    return pos, "a dimension size must not be negative"
                if len(d.group()) > 18 and int(d.group()) >= 1 << 63:
                    return pos, "a dimension size must fit in 64 bits"
                pos = d.end()
            rank += 1
            pos = skip_trivia(text, pos, n)
            if text.startswith(",", pos, n):
                pos = skip_trivia(text, pos + 1, n)
            elif text.startswith("]", pos, n):
                break
            else:
                return pos, "expects ',' or ']' in the dimensions"
    if rank and m.group() in NON_ARRAY_TYPES:
        # XLA's parser stops the process on it (a failed check)
        return m.start(), f"a {m.group()} shape has no dimensions"
    last = pos + 1
    pos = skip_trivia(text, last, n)
    if not text.startswith("{", pos, n):
        return last
    # a layout only when '{' is followed by a number or ':' (else the '{' is not the shape's)
    brace = pos
    pos = skip_trivia(text, pos + 1, n)
    if _INT_AT.match(text, pos, n) is None and not text.startswith(":", pos, n):
        return last
    entries = 0
    if not text.startswith(":", pos, n):
        while True:
            d = _INT_AT.match(text, pos, n)
            if d is None:
                return pos, "expects integer"
            if in_tuple and d.group().startswith("-"):
                return pos, "a layout inside a tuple shape takes no negative dimension"
            entries += 1
            pos = skip_trivia(text, d.end(), n)
            if not text.startswith(",", pos, n):
                break
            pos = skip_trivia(text, pos + 1, n)
    if text.startswith(":", pos, n):
        after = layout_tail_end(text, pos + 1, n)
        if isinstance(after, tuple):
            return after
    elif text.startswith("}", pos, n):
        after = pos + 1
    else:
        return pos, "expects layout to end with '}'"
    if entries != rank and counted:
        return brace, f"Dimensions size is {rank}, but minor to major size is {entries}."
    return after
