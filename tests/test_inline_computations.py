"""A computation written inline as a callee attribute's value (``to_apply={ ... }``), as XLA's
parser reads it: a computation of its own, named ``_`` (then ``_.1``, ...), whose text is its
holder's. It comes back byte for byte while no pass touches it or its holder; once one does,
it is printed as a computation of its own before the computation holding it, and the holder
names it. (XLA's reading of the same texts: ``xla_syntax_cases.py``.)"""

from __future__ import annotations

import pytest

from hlo_rewrite import HloError, parse_module, print_module
from hlo_rewrite.passes import PassOptions
from hlo_rewrite.pipeline import run_passes
from hlo_rewrite.safety import check_output

INLINE_REDUCER = """HloModule a

ENTRY main {
  p = f32[8] parameter(0)
  ROOT ar = f32[8] all-reduce(p), replica_groups={{0,1}}, to_apply={
    x = f32[] parameter(0)
    y = f32[] parameter(1)
    ROOT s = f32[] add(x, y)
  }
}
"""

# a call whose inline body holds an all-reduce whose reducer is written inline too, with
# metadata at every level
NESTED = """HloModule b

ENTRY %main {
  %p = f32[8] parameter(0), metadata={op_name="p"}
  ROOT %c = f32[8] call(%p), to_apply={
    %q = f32[8] parameter(0), metadata={op_name="q"}
    ROOT %ar = f32[8] all-reduce(%q), replica_groups={{0,1}}, to_apply={ %x = f32[] parameter(0) %y = f32[] parameter(1) ROOT %s = f32[] add(%x, %y) }, metadata={op_name="ar"}
  }, metadata={op_name="c"}
}
"""


def _run(text: str, passes: list[str], **options) -> str:
    module = parse_module(text, "t.hlo")
    run_passes(module, passes, PassOptions(**options))
    out = print_module(module)
    check_output(out, passes, PassOptions(**options), "t.hlo")  # reads back, verifies, a fixed point
    return out


@pytest.mark.parametrize("strict", [False, True])
def test_an_inline_computation_is_a_computation_named_as_xla_names_it(strict):
    module = parse_module(NESTED, "t.hlo", strict=strict)
    assert [c.name for c in module.computations] == ["_", "_.1", "main"]  # each once its body ends
    inner, outer, entry = module.computations
    assert inner.inline_in is outer.get("ar") and outer.inline_in is entry.get("c")
    assert entry.get("c").attr_text("to_apply") == "%_.1"  # the holder's value names it
    assert outer.get("ar").called_computations() == ["_"]
    assert [i.name for i in inner.instructions] == ["x", "y", "s"] and inner.root.name == "s"
    assert print_module(module) == NESTED


def test_the_name_taken_by_a_computation_of_the_module_is_left_to_it():
    text = INLINE_REDUCER.replace("ENTRY", "_ {\n  ROOT z = f32[] constant(0)\n}\n\nENTRY")
    module = parse_module(text, "t.hlo", strict=True)
    assert [c.name for c in module.computations] == ["_", "_.1", "main"]
    assert module.entry.get("ar").attr_text("to_apply") == "_.1"


def test_untouched_it_comes_back_byte_for_byte_through_every_pass():
    for passes in (["fuse-reduce-scatter", "fuse-send-recv"], ["strip-debug-info"]):
        assert _run(INLINE_REDUCER, passes) == INLINE_REDUCER


def test_a_converted_holder_prints_the_computation_on_its_own():
    out = _run(INLINE_REDUCER, ["convert-collectives-to-custom-call"])
    assert out == (
        "HloModule a\n\n_ {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n\n"
        "ENTRY main {\n  p = f32[8] parameter(0)\n"
        '  ROOT ar = f32[8] custom-call(p), custom_call_target="AwsNeuronAllReduceAdd_f32", '
        'backend_config={"channel_id":null,"constrain_layout":false,"replica_groups":[[0,1]],"to_apply":"_",'
        '"use_global_device_ids":false}\n}\n'
    )


def test_outside_the_scope_it_is_left_and_said_so():
    module = parse_module(NESTED, "t.hlo")
    report = run_passes(module, ["convert-collectives-to-custom-call"], PassOptions())
    assert print_module(module) == NESTED
    left = report[0].left
    assert [(r.computation, r.instruction) for r in left] == [("_.1", "ar")]
    assert "not the ENTRY computation" in left[0].reason


def test_a_change_inside_settles_each_computation_holding_it():
    out = _run(NESTED, ["convert-collectives-to-custom-call"], all_computations=True)
    assert out == (
        "HloModule b\n\n%_ {\n  %x = f32[] parameter(0)\n  %y = f32[] parameter(1)\n  ROOT %s = f32[] add(%x, %y)\n}\n\n"
        '%_.1 {\n  %q = f32[8] parameter(0), metadata={op_name="q"}\n'
        '  ROOT %ar = f32[8] custom-call(%q), custom_call_target="AwsNeuronAllReduceAdd_f32", metadata={op_name="ar"}, '
        'backend_config={"channel_id":null,"constrain_layout":false,"replica_groups":[[0,1]],"to_apply":"_",'
        '"use_global_device_ids":false}\n}\n\n'
        'ENTRY %main {\n  %p = f32[8] parameter(0), metadata={op_name="p"}\n'
        '  ROOT %c = f32[8] call(%p), to_apply=%_.1, metadata={op_name="c"}\n}\n'
    )


def test_debug_info_is_stripped_inside_them_too():
    out = _run(NESTED, ["strip-debug-info"])
    assert "metadata" not in out
    module = parse_module(out, "out.hlo", strict=True)
    assert [c.name for c in module.computations] == ["_", "_.1", "main"]
    assert module.entry.get("c").attr_text("to_apply") == "%_.1"


def test_the_reverse_pass_reads_the_printed_computation():
    converted = _run(INLINE_REDUCER, ["convert-collectives-to-custom-call"])
    back = _run(converted, ["convert-custom-calls-to-collectives"])
    assert "ROOT ar = f32[8] all-reduce(p), replica_groups={{0,1}}, to_apply=_" in back


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize(("text", "message", "line", "column"), [
    # its own scope: an outer instruction is not an operand there
    ("HloModule m\nENTRY e {\n  p = s32[] parameter(0)\n"
     "  ROOT w = s32[] call(p), to_apply={\n    a = s32[] parameter(0)\n    ROOT n = s32[] add(a, p)\n  }\n}\n",
     "operand 'p' of 'n' is not defined in the computation written inline as the value of to_apply=", 6, 27),
    ("HloModule m\nENTRY e {\n  p = s32[] parameter(0)\n  ROOT w = s32[] call(p), to_apply={\n"
     "    a = s32[] parameter(0)\n    ROOT n = s32[] negate(a)\n", "is not closed", 4, 36),
    ("HloModule m\nENTRY e {\n  p = s32[] parameter(0)\n  ROOT w = s32[] call(p), to_apply={ ROOT a = s32[] "
     "parameter(0) ROOT n = s32[] negate(a) }\n}\n", "a second ROOT in the computation written inline", 4, 66),
    ("HloModule m\nENTRY e {\n  p = s32[] parameter(0), sharding={maximal device=0}\n"
     "  ROOT w = s32[] call(p), to_apply={ a = s32[] parameter(0) } }\n}\n",
     "expected a computation or 'HloModule'", 5, 1),
])
def test_a_broken_one_is_a_located_error(strict, text, message, line, column):
    with pytest.raises(HloError) as info:
        parse_module(text, "t.hlo", strict=strict)
    assert message in info.value.message
    assert (info.value.line, info.value.column) == (line, column)


def test_strict_mode_checks_it_as_any_computation():
    bad = INLINE_REDUCER.replace("ROOT s = f32[] add(x, y)", "ROOT s = f32[] add(x, y), dimensions={0}")
    parse_module(bad, "t.hlo")  # the default reading keeps an attribute it does not know
    with pytest.raises(HloError) as info:
        parse_module(bad, "t.hlo", strict=True)
    assert 'unexpected attribute "dimensions" for add' in info.value.message
    assert (info.value.line, info.value.column) == (8, 31)
    later = INLINE_REDUCER.replace("to_apply={", "to_apply={ z = f32[] call(), to_apply=later").replace(
        "}\n}\n", "}\n}\n\nlater {\n  ROOT k = f32[] constant(1)\n}\n")
    parse_module(later, "t.hlo")
    with pytest.raises(HloError) as info:
        parse_module(later, "t.hlo", strict=True)
    assert "computation 'later' is defined after its use" in info.value.message


@pytest.mark.parametrize("strict", [False, True])
def test_after_an_index_comment_or_braced_where_one_callee_is_named(strict):
    text = INLINE_REDUCER.replace("replica_groups={{0,1}}, to_apply=", "replica_groups={{0,1}}, /*index=1*/to_apply=")
    module = parse_module(text, "t.hlo", strict=strict)
    assert [c.name for c in module.computations] == ["_", "main"]
    with pytest.raises(HloError) as info:  # a body, not a name in braces
        parse_module(INLINE_REDUCER.replace("to_apply={", "to_apply={add}, x={"), "t.hlo", strict=strict)
    assert (info.value.line, info.value.column) == (5, 72)


def test_settled_after_a_header_whose_line_goes_on_it_starts_a_line():
    text = INLINE_REDUCER.replace("HloModule a\n\nENTRY", "HloModule a\tENTRY")
    out = _run(text, ["convert-collectives-to-custom-call"])
    assert out.startswith("HloModule a\n_ {\n")
