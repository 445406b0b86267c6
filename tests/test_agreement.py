"""The fast scanner, the grammar of record and XLA's own parser read the same thing.

Over the whole corpus: the strict parse (every instruction through the grammar,
plus the whole module through the grammar) agrees with the fast path, and the
instruction names, opcodes and operands we read equal what XLA's parser reads.
"""

from __future__ import annotations

import re

import pytest
from conftest import CORPUS, needs_xla, read_exact
from test_roundtrip import COMPLETE

from hlo_rewrite import parse_module, print_module

xla_oracle = needs_xla()
pytestmark = pytest.mark.xla


def _id(p):
    return str(p.relative_to(CORPUS))


def test_strict_parse_agrees_with_fast_path_on_whole_corpus():
    """parse_module(strict=True) raises if the two readings differ anywhere."""
    assert COMPLETE
    for path in COMPLETE:
        text = read_exact(path)
        fast = parse_module(text, str(path))
        strict = parse_module(text, str(path), strict=True)
        for a, b in zip(fast.computations, strict.computations, strict=True):
            assert [(i.name, i.opcode, i.operands, i.attrs) for i in a] == [
                (i.name, i.opcode, i.operands, i.attrs) for i in b
            ], f"{path}: {a.name}"


_SUFFIX = re.compile(r"\.\d+$")


def _same_name(ours: str, xla: str) -> bool:
    """XLA renames a name already used elsewhere in the module to name.N."""
    return ours == xla or (xla.startswith(ours + ".") and _SUFFIX.search(xla) is not None)


@pytest.mark.parametrize("path", COMPLETE, ids=_id)
def test_skeleton_matches_xla_parser(path):
    text = read_exact(path)
    module = parse_module(text, str(path))
    xla = xla_oracle.xla_skeleton(xla_oracle.replace_unspecified_api(text))
    assert [c.name for c in module.computations] == list(xla)
    for comp in module.computations:
        theirs = xla[comp.name]
        assert len(comp.instructions) == len(theirs), comp.name
        rename = {}
        for instr, (xname, xop, xoperands) in zip(comp.instructions, theirs, strict=True):
            assert _same_name(instr.name, xname), (instr.name, xname)
            rename[instr.name] = xname
            assert instr.opcode == xop, (instr.name, instr.opcode, xop)
            assert [rename.get(o, o) for o in instr.operands] == xoperands, instr.name


@pytest.mark.parametrize("path", COMPLETE, ids=_id)
def test_noop_output_parses_with_xla(path):
    text = read_exact(path)
    module = parse_module(text, str(path))
    module.touch()  # print through the piece-joining path, not the shortcut
    out = print_module(module)
    xla_oracle.xla_parse(xla_oracle.replace_unspecified_api(out))
