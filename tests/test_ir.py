"""The edit API passes use, and the verifier that checks what they leave."""

from __future__ import annotations

import pytest

from hlo_rewrite import HloError, parse_module, print_module
from hlo_rewrite.ir import Instruction, set_control_predecessors
from hlo_rewrite.shapes import parse_shape
from hlo_rewrite.verifier import verify

TEXT = """HloModule m

ENTRY %e (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  %a = f32[4]{0} negate(%p)
  // a comment that stays with %b
  %b = f32[4]{0} exponential(%a)
  %c = f32[4]{0} add(%a, %b), control-predecessors={%b}
  ROOT %r = f32[4]{0} multiply(%c, %a)
}
"""


@pytest.fixture
def module():
    return parse_module(TEXT, "ir.hlo")


def test_users_post_order_and_dependencies(module):
    e = module.entry
    a, b, c, r = (e.get(n) for n in "abcr")
    assert [u.name for u in e.users(a)] == ["b", "c", "r"]
    assert [i.name for i in e.post_order()] == ["p", "a", "b", "c", "r"]
    assert [i.name for i in e.control_successors(b)] == ["c"]
    assert e.depends_on(r, b) and not e.depends_on(b, c)
    assert e.root is r and c.control_predecessors == ["b"]


def test_replace_keeps_name_and_neighbours_untouched(module):
    e = module.entry
    old = e.get("b")
    new = Instruction("b", "log", old.shape, ["a"])
    e.replace_instruction(old, new)
    verify(module)
    out = print_module(module)
    assert out == TEXT.replace("exponential(%a)", "log(%a)")  # comment kept, only one line new


def test_insert_remove_and_replace_all_uses(module):
    e = module.entry
    a = e.get("a")
    name = module.fresh_name("a")
    assert name == "a.1"
    e.add_instruction(Instruction(name, "copy", a.shape, ["a"]), after=a)
    changed = e.replace_all_uses("a", name)
    assert {i.name for i in changed} == {"b", "c", "r", name}  # the copy itself used a too
    e.get(name).operands = ["a"]  # the copy keeps reading the original
    e.get(name).mark_changed()
    verify(module)
    with pytest.raises(HloError, match="still used"):
        e.remove_instruction(e.get(name))
    out = print_module(module)
    assert "  %a.1 = f32[4]{0} copy(%a)\n" in out and "exponential(%a.1)" in out


def test_control_predecessors_edit_and_move(module):
    e = module.entry
    c = e.get("c")
    set_control_predecessors(c, [])
    assert "control-predecessors" not in print_module(module)
    e.move_before(e.get("b"), e.get("a"))  # b now stands before its operand a
    with pytest.raises(HloError, match="defined later"):
        verify(module)


def test_verifier_rejects_two_roots(module):
    e = module.entry
    e.get("c").is_root = True
    e.get("c").mark_changed()
    with pytest.raises(HloError, match="ROOT"):
        verify(module)


def test_set_instructions_adopts_and_detaches(module):
    e = module.entry
    b = e.get("b")
    keep = [i for i in e.instructions if i.name != "b"]
    c = e.get("c")
    c.operands = ["a", "a"]
    set_control_predecessors(c, [])
    e.set_instructions(keep)
    assert b.computation is None and e.get("b") is None
    verify(module)
    assert "exponential" not in print_module(module)


def test_verifier_rejects_an_added_name_used_in_two_computations():
    text = (
        "HloModule m\n\n%f (x: f32[]) -> f32[] {\n  %x = f32[] parameter(0)\n  ROOT %y = f32[] negate(%x)\n}\n\n"
        "ENTRY %e (p: f32[]) -> f32[] {\n  %p = f32[] parameter(0)\n  ROOT %q = f32[] call(%p), to_apply=%f\n}\n"
    )
    module = parse_module(text)
    f, e = module.computations
    f.add_instruction(Instruction("dup", "copy", "f32[]", ["x"]), before=f.get("y"))
    e.add_instruction(Instruction("dup", "copy", "f32[]", ["p"]), before=e.get("q"))
    with pytest.raises(HloError, match="added name 'dup'"):
        verify(module)


def test_hints_of_unbuilt_computations_match_their_instructions():
    """What the reader keeps for a computation it has not built (names, opcodes,
    noted instructions) is what building it gives."""
    from conftest import CORPUS, read_exact

    from hlo_rewrite.reader import NOTED_OPCODES

    path = CORPUS / "xla-benchmarks" / "hlo_llama3_8b_cp_bf16_1x4.hlo"
    if not path.exists():
        pytest.skip("corpus not found")
    module = parse_module(read_exact(path), str(path))
    lazy = [c for c in module.computations if c._lazy is not None]
    assert lazy and module.entry in lazy  # ENTRY too is built on first use
    for comp in lazy:
        names = set(comp.instruction_names())
        opcodes = set(comp.opcodes())
        noted = comp.find(NOTED_OPCODES)
        built = comp.instructions  # builds it
        assert comp._lazy is None
        assert names == {i.name for i in built}
        assert opcodes == {i.opcode for i in built}
        assert noted == [(i.name, i.opcode, i.line) for i in built if i.opcode in NOTED_OPCODES]
    assert print_module(module) == read_exact(path)


@pytest.mark.parametrize("text", ["f32[,316]{0,1}", "f32[3,]", "f32[3,,4]"])
def test_a_shape_with_an_empty_dimension_size_is_refused_as_xla_refuses_it(text):
    # it once read as a shape of one rank fewer, which a pass then indexed past its end
    with pytest.raises(HloError, match="expected a dimension size"):
        parse_shape(text)
