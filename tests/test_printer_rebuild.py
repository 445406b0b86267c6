"""The printer, exercised on every instruction: a module whose every instruction is printed anew
from the IR (``tests/rebuild.py``) reads back as the same instructions, and is a fixed point.
XLA's reading of the rebuilt text is compared in ``tests/test_printer_xla.py``."""

from __future__ import annotations

import pytest
from conftest import HAVE_CORPUS, INPUTS, input_id, read_exact
from rebuild import rebuilt
from test_roundtrip import COMPLETE

from hlo_rewrite import parse_module

FILES = COMPLETE + (sorted(INPUTS.rglob("*.hlo")) if HAVE_CORPUS else [])
SMALL = [p for p in FILES if p.stat().st_size <= 2_000_000]


def _skeleton(text: str) -> list:
    module = parse_module(text)
    return [(c.name, [(i.name, i.opcode, i.operands, i.shape) for i in c.instructions]) for c in module.computations]


@pytest.mark.parametrize("path", SMALL, ids=input_id)
def test_rebuilt_module_reads_back_the_same(path):
    text = read_exact(path)
    out = rebuilt(text, str(path))
    assert _skeleton(out) == _skeleton(text)
    assert rebuilt(out) == out


def test_rebuilding_changes_lines():
    """Not a copy of the source: a line written without operand shapes or in an odd spacing comes
    back in the printer's form."""
    text = "HloModule m\n\nENTRY e {\n  p =  f32[4]{0}   parameter(0)\n  ROOT n = f32[4]{0} negate( p )\n}\n"
    assert rebuilt(text) == "HloModule m\n\nENTRY e {\n  p = f32[4]{0} parameter(0)\n  ROOT n = f32[4]{0} negate(p)\n}\n"
