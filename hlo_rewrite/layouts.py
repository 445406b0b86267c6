"""What XLA's parser reads as the part of a layout after its ``:``, token by token as it does.

After the dimension order, a layout may hold, in this order and each at most once: dimension
level types ``D(D,C+~)``, tiles ``T(8,128)(2,1)``, tail padding ``L(2)``, index and pointer
types ``#(u32)`` and ``*(u32)``, element size ``E(4)``, memory space ``S(1)``, split configs
``SC(0:512)(1:8,16)``, a physical shape ``P(...)`` and dynamic shape metadata ``M(8)``; then
``}``. XLA tries each section where its letter stands and does not look at whether the
section's own reading went through: a section that stops early (``E(``, ``T(2,``, ``#`` with
nothing after it) leaves the rest for the next sections and the ``}``, so such a layout is
read all the same, while a section out of its order is not (``S(1)E(4)``: the ``E`` stands
where the ``}`` must). When the ``}`` is missing, XLA reports the first problem it met on the
way, which is what :func:`layout_tail_end` says too.

Refused beyond XLA's own reading: a negative tile dimension, on which XLA's parser stops the
process (a failed internal check), and a physical shape, which XLA refuses after the layout.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .lexicon import ELEMENT_TYPES, IDENTIFIER, INTEGRAL_TYPES, skip_trivia
from .regex import lazy_pattern

# one token of XLA's lexer, as a layout holds them: a number, a word, or one character
_TOKEN_AT = lazy_pattern(r"(-?[0-9]+)|(" + IDENTIFIER + r")|(.)", re.S)
#: the index and pointer types a layout may name
_UNSIGNED = frozenset(t for t in INTEGRAL_TYPES if t.startswith("u"))
_UNSIGNED_RE = "(?:" + "|".join(sorted(_UNSIGNED, key=len, reverse=True)) + ")"
# the sections as XLA prints them, all read through, up to the '}': most layouts, known at once
_PRINTED = lazy_pattern(
    r"(?:D\((?:[DCSH]\+?~?(?:,[DCSH]\+?~?)*)?\))?(?:T(?:\((?:(?:[0-9]+|\*)(?:,(?:[0-9]+|\*))*)?\))+)?"
    r"(?:L\([0-9]+\))?(?:#\(" + _UNSIGNED_RE + r"\))?(?:\*\(" + _UNSIGNED_RE + r"\))?"
    r"(?:E\(-?[0-9]+\))?(?:S\(-?[0-9]+\))?(?:SC(?:\(-?[0-9]+:(?:-?[0-9]+(?:,-?[0-9]+)*)?\))+)?(?:M\(-?[0-9]+\))?\}"
)

#: a dimension level type: dense, compressed, singleton or loose compressed
_LEVELS = frozenset("DCSH")
#: the sections written as a letter and one number in parentheses, in XLA's order among the rest
_NUMBER_SECTIONS = {"L": "multiple padded to in elements", "E": "element size in bits", "S": "memory space",
                    "M": "dynamic shape metadata prefix bytes"}


class _Reader:
    """XLA's way through a layout's sections: each reading step says whether it went through,
    takes the tokens it read up to where it stopped, and the first problem is kept."""

    def __init__(self, text: str, pos: int, end: int) -> None:
        self.text = text
        self.pos = pos
        self.end = end
        self.problem: tuple[int, str] | None = None

    def token(self) -> tuple[str, str, int, int]:
        """(kind, text, start, end) of the token at the reading position: kind is ``int``,
        ``word``, ``end`` (of the text) or the character itself."""
        at = skip_trivia(self.text, self.pos, self.end)
        if at >= self.end:
            return "end", "", at, at
        m = _TOKEN_AT.match(self.text, at, self.end)
        assert m is not None
        if m.group(1) is not None:
            return "int", m.group(1), at, m.end()
        if m.group(2) is not None:
            return "word", m.group(2), at, m.end()
        return m.group(3), m.group(3), at, m.end()

    def fail(self, at: int, why: str) -> bool:
        if self.problem is None:
            self.problem = (at, why)
        return False

    def take(self, kind: str, why: str) -> bool:
        got = self.token()
        if got[0] != kind:
            return self.fail(got[2], why)
        self.pos = got[3]
        return True

    def at_word(self, word: str) -> bool:
        got = self.token()
        if got[0] == "word" and got[1] == word:
            self.pos = got[3]
            return True
        return False

    def number(self) -> int | None:
        got = self.token()
        if got[0] != "int":
            self.fail(got[2], "expects integer")
            return None
        self.pos = got[3]
        return int(got[1])

    def items(self, start: str, end: str, item: Callable[[], bool]) -> bool:
        """XLA's list: ``start``, items between commas (or none), ``end``."""
        if not self.take(start, f"expects a list starting with '{start}'"):
            return False
        if self.token()[0] != end:
            while True:
                if not item():
                    return False
                if self.token()[0] != ",":
                    break
                self.pos = self.token()[3]
        return self.take(end, f"expects a list to end with '{end}'")

    def level(self) -> bool:
        got = self.token()
        if got[0] == "word" and got[1] in _LEVELS:
            self.pos = got[3]
            for mark in "+~":
                if self.token()[0] == mark:
                    self.pos = self.token()[3]
            return True
        return self.fail(got[2], "expected a DimLevelType abbreviation (D, C, or S)")

    def tile_dimension(self) -> bool:
        got = self.token()
        if got[0] == "int":
            if got[1].startswith("-"):
                # XLA's parser stops the process on it (a failed check in LayoutUtil::MakeLayout)
                raise _Refused(got[2], "a tile dimension must not be negative (write '*' to combine dimensions)")
            self.pos = got[3]
            return True
        self.fail(got[2], "expects integer")
        if got[0] == "*":
            self.pos = got[3]
            return True
        return False

    def tiles(self) -> bool:
        while True:
            if not self.items("(", ")", self.tile_dimension):
                return False
            if self.token()[0] != "(":
                return True

    def primitive_type(self, what: str, mark: str) -> None:
        """``#(u32)`` or ``*(u32)``, its mark read: an unsigned integer type in parentheses."""
        self.take("(", f"expects '{mark}' to be followed by '('")
        got = self.token()
        if got[0] == "word" and got[1] in ELEMENT_TYPES:
            self.pos = got[3]
            if got[1] not in _UNSIGNED:
                self.fail(got[2], "expecting an unsigned integer type")
        else:
            self.fail(got[2], f"expected primitive type, saw '{got[1]}'" if got[1] else "expected primitive type")
        self.take(")", f"expects {what} primitive type to be followed by ')'")

    def number_section(self, what: str) -> bool:
        return (self.take("(", f"expects {what} to start with '('") and self.number() is not None
                and self.take(")", f"expects {what} to end with ')'"))

    def split_configs(self) -> bool:
        while True:
            if not self.take("(", "expects split configs to start with '('") or self.number() is None:
                return False
            if not self.items(":", ")", lambda: self.number() is not None):
                return False
            if self.token()[0] != "(":
                return True


class _Refused(Exception):
    def __init__(self, at: int, why: str) -> None:
        super().__init__(why)
        self.at = at
        self.why = why


def layout_end(text: str, brace: int, end: int | None = None) -> int | None:
    """The offset just past the layout whose ``{`` is at ``brace`` (its dimension order, then
    after a ``:`` its sections) as XLA's parser reads it, which does not need a section's
    parentheses closed (``{1,0:T(8,128}``, ``{0:S(1}``); None when it reads no layout there.
    What bracket matching alone cannot delimit (:func:`hlo_rewrite.lexicon.find_top_level`)."""
    n = len(text) if end is None else end
    r = _Reader(text, brace + 1, n)
    got = r.token()
    while got[0] == "int":
        r.pos = got[3]
        got = r.token()
        if got[0] != ",":
            break
        r.pos = got[3]
        got = r.token()
    if got[0] == ":":
        after = layout_tail_end(text, got[3], n)
        return after if isinstance(after, int) else None
    return got[3] if got[0] == "}" else None


def layout_tail_end(text: str, pos: int, end: int) -> int | tuple[int, str]:
    """The offset just after the ``}`` of a layout whose sections start at ``pos`` (just after
    its ``:``), or (where, why) XLA's parser refuses it."""
    m = _PRINTED.match(text, pos, end)
    if m is not None:
        return m.end()
    r = _Reader(text, pos, end)
    try:
        if r.at_word("D"):
            r.items("(", ")", r.level)
        if r.at_word("T"):
            r.tiles()
        if r.at_word("L"):
            r.number_section(_NUMBER_SECTIONS["L"])
        for mark, what in (("#", "index"), ("*", "pointer")):
            if r.token()[0] == mark:
                r.pos = r.token()[3]
                r.primitive_type(what, mark)
        for letter in "ES":
            if r.at_word(letter):
                r.number_section(_NUMBER_SECTIONS[letter])
        if r.at_word("SC"):
            r.split_configs()
        physical = r.token()
        if r.at_word("P"):
            r.take("(", "expects physical shape to start with '('")
            return r.problem or (physical[2], "Layout has physical shape, but is not for a sparse array")
        if r.at_word("M"):
            r.number_section(_NUMBER_SECTIONS["M"])
    except _Refused as refused:
        return refused.at, refused.why
    last = r.token()
    if last[0] == "}":
        return last[3]
    r.fail(last[2], "expects layout to end with '}'")
    assert r.problem is not None
    return r.problem
