"""The one-pass check of a computation body that is one plain instruction a line.

XLA prints one instruction a line. A body of only such lines is checked by one
regular-expression pass over its text (a few thousand lines at a time), a byte-level check
that brackets nest on every line, and set operations: the same rules as the line-by-line
reading (:class:`BodyChecker`). The check reads only the text, so a worker process can run it
(:mod:`.parallel`). The instruction objects are built from the same text on first use
(:func:`build_block`).
"""

from __future__ import annotations

from bisect import bisect_right
from collections import namedtuple
from collections.abc import Callable, Sequence
from itertools import chain, repeat
from operator import add, ge, methodcaller
from sys import intern

from ..lexicon import ELEMENT_TYPES
from ..opcodes import CALLEE_ATTRS, OPCODE_NAMES
from ..regex import lazy_pattern
from .lazy import NOTED_OPCODES
from .patterns import (
    BLOCK_LINE,
    BLOCK_MAX_LINES,
    BUILT_LINE,
    CALLEE_VALUES,
    CALLEE_VALUES_AFTER_COMMENTS,
    INDEX_COMMENT,
    INDEXED_OPERAND,
    INDEXED_OPERAND_LIST,
    NAMES_ONLY,
    NEXT_IS_NAME,
    NON_CALLER_OPCODES,
    NOT_BRACKETS,
    OPCODE_SPELLINGS,
    PAYLOAD_OPCODES,
    ROW_NAME,
    ROW_OPCODE,
    ROW_OPERANDS,
    ROW_TYPE,
    STRING,
)

TYPE_CHECKING = False  # typing is not imported at run time here (docs/decisions.md)

if TYPE_CHECKING:
    from ..ir import Computation

#: the position of a name defined nowhere: after every line
_NOWHERE = 1 << 62
#: a stretch of at most this many lines checks its operands in a loop (measured: cheaper)
_FEW_LINES = 48
#: a body of more lines than this first looks at its last line alone: a body that is not plain
#: most often fails there, before the pass over all of it. A shorter one goes straight to that
#: pass (a look that most bodies pass only doubles the reading of a line: 6 % of a 3-line
#: body's check, in instructions counted)
_LAST_LINE_FIRST = 48
_COMMAS = methodcaller("count", ",")

#: one object per set of opcodes present in a body (many bodies share a set)
OPCODE_SETS: dict[frozenset[str], frozenset[str]] = {}


# blanks to the line end
_ENDS_LINE = lazy_pattern(r"[ \t]*+\r?\n")
# two " =" on one line
_TWO_EQUALS = lazy_pattern(r" =[^\n]* =")
# a bracket group with no bracket inside
_INNERMOST_GROUP = lazy_pattern(r"\([^(){}\[\]]*\)|\{[^(){}\[\]]*\}|\[[^(){}\[\]]*\]")


# a record as typing.NamedTuple makes one, without importing typing (docs/decisions.md):
# the fields named for collections.namedtuple, typed below in the same order
class BodyCheck(
    namedtuple("BodyCheck", ["start", "end", "last", "instructions", "opcodes", "noted", "callers"])
):
    """What the one-pass check of a body found: its offsets and lines, and what passes ask."""

    __slots__ = ()
    start: int  # offset of the body's first line
    end: int  # offset of its closing '}'
    last: int  # 0-based line of the closing '}'
    instructions: int
    opcodes: frozenset[str]
    noted: list[tuple[str, str, int]]  # (name, opcode, line) of each noted instruction
    #: (name, 0-based line, the computations it names as read quickly or None) of the
    #: instructions whose callees are checked at the end
    callers: list[tuple[str, int, tuple[str, ...] | None]]


class BodyChecker:
    """The one-pass check of computation bodies in one module's text.

    ``starts`` holds the offset of every line; ``tabs``, ``comments`` and ``control`` say
    whether the text has tabs, ``/*`` and ``control-predecessors`` anywhere (one look at the
    whole text spares a look into every body).
    """

    def __init__(self, text: str, starts: Sequence[int], *, tabs: bool, comments: bool, control: bool) -> None:
        self.text = text
        self.starts = starts
        self.tabs = tabs
        self.comments = comments
        self.control = control

    @classmethod
    def of(cls, text: str, starts: Sequence[int], has: Callable[[str], bool] | None = None) -> BodyChecker:
        """The checker of ``text``, with what one look at the whole text tells (``has``: whether
        the text holds a word, by default looked for at once; the reader passes its module's
        ``source_has``, which keeps the answers for later)."""
        has = text.__contains__ if has is None else has
        return cls(text, starts, tabs=has("\t"), comments=has("/*"), control=has("control-predecessors"))

    def check(self, first: int, known: set[str] | frozenset[str], before: int | None = None) -> BodyCheck | None:
        """Check the body whose first line is ``first`` when every line of it is one plain
        instruction (XLA prints nothing else); None when the body needs the line-by-line
        reading (which also locates every error). ``before``: where the next computation's
        header line starts, when the caller knows it: the body's closing ``}`` is then looked
        for from there back, a few characters, rather than through the whole body (were there
        another ``}`` line in between, this body would not be plain: None either way).

        The same rules hold as line by line: each line is a whole instruction (brackets nest
        properly on it), names are unique, element types known, at most one ROOT, every
        operand defined on an earlier line, and every called computation in ``known`` or
        noted among the callers for the check at the end. A long body is checked
        :data:`BLOCK_MAX_LINES` lines at a time, so that what is held at once stays small.
        """
        text = self.text
        starts = self.starts
        s = starts[first]
        close = text.find("\n}", s - 1) if before is None else text.rfind("\n}", s - 1, before)
        if close < s:
            return None  # no body, or its end is not a '}' line: read line by line
        e = close + 1
        last = bisect_right(starts, e, first) - 1  # the '}' line
        if last <= first:
            return None
        if last - first > _LAST_LINE_FIRST and BLOCK_LINE.match(text, starts[last - 1], e) is None:
            return None  # the last line (most often the ROOT, with operands) already is not plain
        if text.count("ROOT", s, e) > 1:
            return None  # two ROOTs, or the word elsewhere: line by line tells
        at = text.rfind("ROOT", s, e)
        if at >= 0 and _ENDS_LINE.match(text, at + 4) is not None:
            return None  # 'ROOT' ends its line: it marks the next line's instruction, line by line tells
        comments = self.comments and text.find("/*", s, e) >= 0
        if comments and not comments_closed(text, s, e):
            return None
        position: dict[str, int] = {}
        present: set[str] = set()
        callers: list[tuple[str, int, tuple[str, ...] | None]] = []
        noted: list[tuple[str, str, int]] = []
        for c0 in range(first, last, BLOCK_MAX_LINES):
            c1 = min(c0 + BLOCK_MAX_LINES, last)
            if not self._stretch(c0, c1, first, position, present, callers, noted, comments, known):
                return None
        n = last - first
        equals = text.count(" =", s, e) + (text.count("\t=", s, e) if self.tabs else 0)
        if equals != n and (self.tabs or not one_head_a_line(text, s, e, n, equals)):
            return None  # " =" elsewhere than in each head: perhaps a second instruction on a line
        if self.control:
            at = text.find("control-predecessors", s, e)
            while at >= 0:
                k = bisect_right(starts, at) - 1
                row = BLOCK_LINE.match(text, starts[k])
                assert row is not None
                callers.append((row.group(1), k, None))
                at = text.find("control-predecessors", starts[k + 1], e)
        return BodyCheck(s, e, last, n, frozenset(present), noted, callers)

    def _stretch(
        self,
        c0: int,
        c1: int,
        first: int,
        position: dict[str, int],
        present: set[str],
        callers: list[tuple[str, int, tuple[str, ...] | None]],
        noted: list[tuple[str, str, int]],
        comments: bool,
        known: set[str] | frozenset[str],
    ) -> bool:
        """Check lines c0..c1-1 of the body that starts on line ``first``, adding to what
        the lines before them gave."""
        text = self.text
        starts = self.starts
        s, e = starts[c0], starts[c1]
        rows = BLOCK_LINE.findall(text, s, e)
        n = len(rows)
        if n != c1 - c0:
            return False  # some line is not one plain instruction
        if not brackets_nest_on_each_line(text[s:e], n):
            return False  # brackets left over on some line (or inside a string there)
        base = c0 - first
        stretch = dict(zip(map(ROW_NAME, rows), range(base, base + n), strict=True))
        if len(stretch) != n or (position and not position.keys().isdisjoint(stretch)):
            return False  # a name defined twice
        if not stretch.keys().isdisjoint(ELEMENT_TYPES):
            return False  # a name XLA refuses (as one starting with '__', which BLOCK_LINE does not take)
        types = set(map(ROW_TYPE, rows))
        types.discard("")
        if not types <= ELEMENT_TYPES:
            return False
        position.update(stretch)
        if not operands_defined_before_use(list(map(ROW_OPERANDS, rows)), position, comments, base):
            return False
        opcodes = set(map(ROW_OPCODE, rows))
        if not opcodes <= OPCODE_NAMES:
            return False  # an unknown opcode: line by line locates it
        if not opcodes <= NON_CALLER_OPCODES:
            for k, row in enumerate(rows):
                if row[2] not in NON_CALLER_OPCODES:
                    # one look at the line (no first look for a callee word: most such lines have one)
                    names = plain_callees(text[starts[c0 + k] : starts[c0 + k + 1] - 1])
                    if names is None or not known.issuperset(names):
                        callers.append((row[0], c0 + k, names))
        if not opcodes.isdisjoint(NOTED_OPCODES):
            noted.extend(
                (r[0], OPCODE_SPELLINGS[r[2]], c0 + k + 1) for k, r in enumerate(rows) if r[2] in NOTED_OPCODES
            )
        present.update(map(OPCODE_SPELLINGS.__getitem__, opcodes))
        return True


def plain_callees(text: str) -> tuple[str, ...] | None:
    """The computations the ``, key=value`` attributes of ``text`` name, read quickly; None
    when the quick reading cannot vouch for them (control predecessors, ``calls=%a, %b``).

    A match inside a string can only add names to check (a name that is not known sends the
    instruction to the proper reading), never hide a real attribute; only when the quick
    check fails are the attributes split properly and the error located."""
    if "control-predecessors" in text:
        # rare; split so the attributes are checked as the verifier will read them
        return None
    names: list[str] = []
    for m in (CALLEE_VALUES_AFTER_COMMENTS if "*/" in text else CALLEE_VALUES).finditer(text):
        key, single, many, other = m.groups()
        if other is not None or many is not None and (not many.strip() or key in CALLEE_ATTRS):
            # a value in another form (a computation written inline, braced where one callee is
            # named), or an empty list
            return None
        if key == "calls" and NEXT_IS_NAME.match(text, m.end()):
            return None  # `calls=%a, %b`: let the splitter read it
        if single:
            names.append(single)
        else:
            names.extend(n.strip().lstrip("%") for n in many.split(",") if n.strip())
    return tuple(names)


def callees_plainly_known(text: str, known: set[str] | frozenset[str]) -> bool:
    """The quick check: every ``, key=value`` naming a computation names one in ``known``."""
    names = plain_callees(text)
    return names is not None and known.issuperset(names)


def comments_closed(text: str, s: int, e: int) -> bool:
    """Every line between offsets s and e that opens a ``/*`` comment closes it."""
    at = text.find("/*", s, e)
    while at >= 0:
        begin = text.rfind("\n", s, at) + 1
        end = text.find("\n", at, e)
        line = text[begin:end]
        if line.count("/*") != line.count("*/"):
            return False
        at = text.find("/*", end, e)
    return True


def one_head_a_line(text: str, s: int, e: int, n: int, count: int) -> bool:
    """Whether each of the ``n`` lines between offsets s and e, which hold ``count`` " =" in
    all, has exactly one outside strings and brackets (its head's; others are inside values
    such as ``{heads = 32 : i64}``)."""
    extra = 0
    pos = s
    search = _TWO_EQUALS.search
    while (m := search(text, pos, e)) is not None:
        begin = text.rfind("\n", s, m.start()) + 1 or s
        end = text.find("\n", m.start(), e)
        if top_level(text[begin:end]).count(" =") != 1:
            return False
        extra += text.count(" =", begin, end) - 1
        pos = end
    return count - extra == n


def top_level(text: str) -> str:
    """``text`` with its strings emptied and its bracket groups removed."""
    text = STRING.sub('""', text)
    while True:
        reduced = _INNERMOST_GROUP.sub("", text)
        if len(reduced) == len(text):
            return text
        text = reduced


def brackets_nest_on_each_line(body: str, lines: int) -> bool:
    """Whether (), {} and [] pair up properly on each of the ``lines`` lines of
    ``body`` (strings not told apart: a bracket in a string may say no)."""
    nested = body.encode().translate(None, NOT_BRACKETS)  # brackets and newlines only
    while True:
        reduced = nested.replace(b"()", b"").replace(b"{}", b"").replace(b"[]", b"")
        if len(reduced) == lines:
            return True  # only the newlines are left (without one more round to see it)
        if len(reduced) == len(nested):
            return False  # brackets left that do not pair up
        nested = reduced


def operands_defined_before_use(
    operands: list[str], position: dict[str, int], comments: bool, base: int = 0
) -> bool:
    """Whether the operand texts of a body's lines (``operands[k]`` for line ``base + k``)
    are bare names, each defined on an earlier line (``position``: name to line)."""
    joined = ",".join(filter(None, operands))
    if not joined:
        return True
    if comments:  # XLA's /*index=N*/ may stand before a name
        if INDEXED_OPERAND_LIST.fullmatch(joined) is None:
            return False
    elif NAMES_ONLY.fullmatch(joined) is None:
        return False  # operands written with shapes, or not plain names
    get = position.get
    if len(operands) <= _FEW_LINES:  # a loop costs less than setting up the maps below
        k = base - 1
        for names in operands:
            k += 1
            if not names:
                continue
            if comments:
                for op in INDEXED_OPERAND.findall(names):
                    if get(op, k) >= k:
                        return False  # not defined, or not on an earlier line
            else:  # bare names, as checked above: the text between commas, trimmed
                for op in names.split(","):
                    if get(op.strip(" \t%"), k) >= k:
                        return False
        return True
    # each item between commas is one name (checked above): the k-th line holds
    # (its commas + 1) of them; every one must stand on an earlier line
    found = bare_names(joined)
    counts = map(add, map(_COMMAS, operands), map(bool, operands))
    lines = chain.from_iterable(map(repeat, range(base, base + len(operands)), counts))
    return not any(map(ge, map(get, found, repeat(_NOWHERE)), lines))


def bare_names(joined: str) -> list[str]:
    """The names of an operand list checked to be bare names, each perhaps after XLA's
    ``/*index=N*/``, in order: what is left between the commas once the comments, ``%`` and
    blanks (none of which a name holds) are taken out."""
    if "/*" in joined:
        joined = INDEX_COMMENT.sub("", joined)
    if "%" in joined:
        joined = joined.replace("%", "")
    if " " in joined:
        joined = joined.replace(" ", "")
    if "\t" in joined:
        joined = joined.replace("\t", "")
    return joined.split(",")


def block_names(text: str, start: int, end: int) -> list[str]:
    """Instruction names of a body the one-pass check accepted."""
    return list(map(ROW_NAME, BLOCK_LINE.findall(text, start, end)))


def build_block(comp: Computation, block: tuple[int, int], text: str, starts: Sequence[int]) -> None:
    """Build the instructions of the body at offsets ``block`` that the one-pass check
    accepted: one plain instruction on each of its lines, all checked already."""
    from ..ir import Instruction  # (not at the top: a checking worker does without the IR)

    begin, end = block
    first = bisect_right(starts, begin) - 1
    instructions: list[Instruction] = []
    by_name: dict[str, Instruction] = {}
    new_instruction = Instruction.from_scan
    opcodes = OPCODE_SPELLINGS
    match = BUILT_LINE.match
    i = first
    start = starts[i]
    while start < end:
        m = match(text, start)
        assert m is not None
        root, pct, name, shape, opcode, inner = m.groups()
        if opcode in PAYLOAD_OPCODES:
            operands, payload = [], inner
        else:
            operands, payload = [by_name[op].name for op in bare_names(inner)] if inner else [], None
        instr = new_instruction(
            name, opcodes[opcode], None if shape is None else intern(shape), operands,
            root is not None, i + 1, m.start(3) + 1 - len(pct) - start, 1, m.end() - start, payload, comp,
        )
        instructions.append(instr)
        by_name[name] = instr
        i += 1
        start = starts[i]
    comp.fill(instructions, by_name)
