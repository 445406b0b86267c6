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


MODULE = """HloModule m

// a comment between computations
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

%mul (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] multiply(%a, %b)
}

ENTRY %main (p: f32[8]) -> f32[8] {
  %p = f32[8]{0} parameter(0)
  ROOT %n = f32[8]{0} negate(%p)
}
"""


def _piece_by_piece(module) -> str:
    """The output as each piece prints on its own (what print_module must equal)."""
    from hlo_rewrite.printer import computation_text

    return "".join(p if isinstance(p, str) else computation_text(p, module.style) for p in module.pieces)


def _edit(module, name: str) -> None:
    comp = module.computation(name)
    root = comp.root
    root.mark_changed()
    root.set_attr("metadata", '{op_name="edited"}')


@pytest.mark.parametrize("edited", [["main"], ["add"], ["mul"], ["add", "main"], ["add", "mul", "main"]])
def test_a_changed_module_prints_as_its_pieces(edited):
    """Printed in one replacement (one computation changed) or joined (several), the output
    is what each piece prints, and only the edited computations differ from the source."""
    from hlo_rewrite import print_module

    module = parse_module(MODULE)
    for name in edited:
        _edit(module, name)
    out = print_module(module)
    assert out == _piece_by_piece(module)
    assert out.count('op_name="edited"') == len(edited)
    assert out.replace(', metadata={op_name="edited"}', "") == MODULE


def test_a_computation_text_found_earlier_in_a_string_is_not_replaced_there():
    """The one-replacement path makes sure the changed computation's old text first occurs
    where the computation stands."""
    from hlo_rewrite import print_module

    twin = MODULE[MODULE.index("%mul") : MODULE.index("ENTRY")]
    text = MODULE.replace("// a comment between computations", "/* " + twin + " */")
    assert text.count(twin) == 2
    module = parse_module(text)
    _edit(module, "mul")
    out = print_module(module)
    assert out == _piece_by_piece(module)
    assert out.count('op_name="edited"') == 1
    assert out.count(twin) == 1  # the commented copy, untouched


def test_a_new_computation_is_printed_where_it_stands():
    from hlo_rewrite import Computation, print_module

    module = parse_module(MODULE)
    extra = parse_module("HloModule x\n\nENTRY %neg (q: f32[]) -> f32[] {\n  %q = f32[] parameter(0)\n"
                         "  ROOT %r = f32[] negate(%q)\n}\n").entry
    comp = Computation("neg", head=extra.head.replace("ENTRY ", ""), tail=extra.tail)
    comp.fill(list(extra.instructions), dict(extra.by_name))
    module.pieces.insert(1, comp)
    module.touch()
    out = print_module(module)
    assert out == _piece_by_piece(module)
    assert "%neg (q: f32[]) -> f32[] {" in out


@pytest.mark.parametrize("edited", [[], ["main"], ["add"], ["add", "main"], ["add", "mul", "main"]])
@pytest.mark.parametrize("size", [1, 7, 64, 1 << 20])
def test_the_printed_pieces_are_the_text(edited, size):
    """What the command writes a piece at a time (``render``) is what ``print_module`` joins,
    whatever the piece size; a changed computation keeps its unchanged lines as stretches of
    the source."""
    from hlo_rewrite.printer import render

    module = parse_module(MODULE)
    for name in edited:
        _edit(module, name)
    printed = render(module)
    text = str(printed)
    assert text == _piece_by_piece(module)
    pieces = list(printed.pieces(size))
    new = {s for s in printed.segments if isinstance(s, str)}  # written as they are
    assert "".join(pieces) == text and all(len(p) <= size or p in new for p in pieces)
    assert len(printed) == len(text)
    assert printed.is_source() == (text == MODULE) == (not edited)
    assert sum(s.count("metadata") for s in new) == len(edited)  # each edited ROOT line is new
    assert sum(s.count(" = ") for s in new) == len(edited)  # and no other instruction


def test_a_change_made_back_prints_as_the_source():
    """A module a pass changed and changed back is its source again: the command then says
    it is unchanged."""
    from hlo_rewrite.printer import render

    module = parse_module(MODULE)
    root = module.computation("main").root
    root.mark_changed()
    printed = render(module)
    assert module.changed and str(printed) == MODULE and printed.is_source()
    root.set_attr("metadata", '{op_name="x"}')
    assert not render(module).is_source()


@pytest.mark.parametrize("segments", [
    [(0, 5), "XY", (9, 20)],  # one stretch replaced: made by str.replace
    [(0, 5), "XY", (9, 12), "Z", (15, 20)],  # two: joined
    ["A", (0, 20)],
    [(0, 20), "B"],
    [(0, 3), (3, 20)],
])
def test_a_printed_text_joins_whatever_its_segments(segments):
    from hlo_rewrite.printer import Printed

    source = "abcdefghijabcdefghij"  # its stretches occur twice: the replacement must not pick the first
    printed = Printed(source, list(segments))
    expected = "".join(source[s[0]:s[1]] if isinstance(s, tuple) else s for s in segments)
    assert str(printed) == expected == "".join(printed.pieces(3))
    assert printed.is_source() == (expected == source)
