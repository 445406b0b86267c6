"""The one-pass check of a computation body that is one plain instruction a line.

XLA prints one instruction a line. A body of only such lines (not ENTRY's, which is built at
once) is checked by one regular-expression pass over its text, a byte-level check that brackets
nest on every line, and set operations: the same rules as the line-by-line reading. Its
instruction objects are built from the same text on first use (:func:`build_block`).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from sys import intern
from typing import TYPE_CHECKING

from ..ir import Instruction
from .patterns import (
    BLOCK_LINE,
    BUILT_LINE,
    INDEXED_OPERAND,
    INDEXED_OPERAND_LIST,
    NAME_FIND,
    NAMES_ONLY,
    NOT_BRACKETS,
    OPCODE_SPELLINGS,
    PAYLOAD_OPCODES,
    ROW_NAME,
)

if TYPE_CHECKING:
    from ..ir import Computation

#: one object per set of opcodes present in a body (many bodies share a set)
OPCODE_SETS: dict[frozenset[str], frozenset[str]] = {}


def brackets_nest_on_each_line(body: str, lines: int) -> bool:
    """Whether (), {} and [] pair up properly on each of the ``lines`` lines of
    ``body`` (strings not told apart: a bracket in a string may say no)."""
    nested = body.encode().translate(None, NOT_BRACKETS)  # brackets and newlines only
    while True:
        reduced = nested.replace(b"()", b"").replace(b"{}", b"").replace(b"[]", b"")
        if len(reduced) == len(nested):
            return len(nested) == lines  # only the newlines are left
        nested = reduced


def operands_defined_before_use(operands: list[str], position: dict[str, int], comments: bool) -> bool:
    """Whether the operand texts of a body's lines (``operands[k]`` for line k)
    are bare names, each defined on an earlier line (``position``)."""
    joined = ",".join(filter(None, operands))
    if not joined:
        return True
    if comments:  # XLA's /*index=N*/ may stand before a name
        if INDEXED_OPERAND_LIST.fullmatch(joined) is None:
            return False
        find = INDEXED_OPERAND.findall
    elif NAMES_ONLY.fullmatch(joined) is None:
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


def block_names(text: str, start: int, end: int) -> list[str]:
    """Instruction names of a body the one-pass check accepted."""
    return list(map(ROW_NAME, BLOCK_LINE.findall(text, start, end)))


def build_block(comp: Computation, block: tuple[int, int], text: str, starts: Sequence[int]) -> None:
    """Build the instructions of the body at offsets ``block`` that the one-pass check
    accepted: one plain instruction on each of its lines, all checked already."""
    begin, end = block
    first = bisect_right(starts, begin) - 1
    comments = text.find("/*", begin, end) >= 0
    find = INDEXED_OPERAND.findall if comments else NAME_FIND.findall
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
            operands, payload = [by_name[op].name for op in find(inner)], None
        instr = new_instruction(
            name, opcodes[opcode], None if shape is None else intern(shape), operands,
            root is not None, i + 1, m.start(3) + 1 - len(pct) - start, 1, m.end() - start, payload, comp,
        )
        instructions.append(instr)
        by_name[name] = instr
        i += 1
        start = starts[i]
    comp.fill(instructions, by_name)
