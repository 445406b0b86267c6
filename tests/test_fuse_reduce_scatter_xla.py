"""fuse-reduce-scatter with XLA (jaxlib) as the oracle: the proof by execution.

Every golden input in ``tests/golden/fuse-reduce-scatter/`` is a per-device SPMD module
(``num_partitions=8``). For each rewritten case the module before and after the pass runs on 8
XLA CPU devices with the same random inputs and must give the same outputs (exactly; within
float tolerance for the mean form). The harness is shown to be able to fail: the plain
concatenation on the scatter dimension, built by hand, must compare unequal. XLA also parses
every output and reprints each new line unchanged.
"""

from __future__ import annotations

import pytest
from conftest import needs_xla, read_exact
from test_fuse_reduce_scatter import (
    _SMALL,
    GOLDEN,
    JAX_CASES,
    NEGATIVE,
    POSITIVE,
    _body_as_spmd_module,
    _case,
    _jax_text,
    _plain_concat_on_scatter_dim,
    _run,
    _tolerance,
)

from hlo_rewrite import parse_module

xo = needs_xla()
pytestmark = pytest.mark.xla


@pytest.mark.parametrize("case", sorted(POSITIVE) + sorted(NEGATIVE))
def test_output_parses_with_xla_and_twice_equals_once(case):
    src, out, _ = _case(case)
    xo.xla_parse(src)
    xo.xla_parse(out)
    again, report = _run(out)
    assert again == out
    assert not report.rewritten



@pytest.mark.parametrize("case", sorted(POSITIVE))
def test_new_lines_print_as_xla_prints_them(case):
    src, out, _ = _case(case)
    module = parse_module(out)
    old = set(src.splitlines())
    new_lines = [line.strip() for line in out.splitlines() if line not in old]
    assert new_lines
    reprint = xo.xla_reprint(out, operand_shapes=module.style.operand_shapes, percent=module.style.percent)
    by_name = {}
    for line in reprint.splitlines():
        line = line.strip()
        if " = " in line:
            by_name[line.removeprefix("ROOT ").split(" = ", 1)[0].lstrip("%")] = line
    for line in new_lines:
        name = line.removeprefix("ROOT ").split(" = ", 1)[0].lstrip("%")
        assert by_name.get(name) == line



@pytest.mark.parametrize("case", sorted(POSITIVE))
def test_same_outputs_when_executed(case):
    """The proof: XLA runs the module before and after on 8 devices."""
    src, out, _ = _case(case)
    for seed in (0, 1):
        xo.compare_modules(src, out, xo.random_inputs(src, seed), **_tolerance(case))



def test_plain_concat_on_scatter_dimension_compares_unequal():
    src, out, _ = _case("equal_dims_interleave")
    wrong = _plain_concat_on_scatter_dim(src)
    assert "%wrong" in wrong and " %rs0" not in wrong
    xo.xla_parse(wrong)
    inputs = xo.random_inputs(src, 0)
    with pytest.raises(AssertionError, match="compute different results"):
        xo.compare_modules(src, wrong, inputs)
    xo.compare_modules(src, out, inputs)  # while the interleaved form is equal



@pytest.mark.parametrize("name", sorted(JAX_CASES))
def test_jax_case_all_computations(name):
    src = _jax_text(name)
    out, report = _run(src, all_computations=True, name=name)
    action, text = JAX_CASES[name]
    assert [r.action for r in report.records] == [action]
    assert text in (report.records[0].target or report.records[0].reason)
    xo.xla_parse(out)
    again, report2 = _run(out, all_computations=True)
    assert again == out and not report2.rewritten
    if action == "rewritten":
        before, after = _body_as_spmd_module(src), _body_as_spmd_module(out)
        xo.compare_modules(before, after, xo.random_inputs(before, 0), **_tolerance(name))
    else:
        assert out == src



def test_new_names_do_not_collide_with_existing_ones():
    text = _SMALL.replace("  ROOT %concat", "  %concat.inputs = f32[16,4]{1,0} negate(f32[16,4]{1,0} %p0)\n  ROOT %concat")
    out, report = _run(text)
    assert "%concat.inputs.1 = f32[16,8]{1,0} concatenate(f32[16,4]{1,0} %p0, f32[16,4]{1,0} %p1)" in out
    assert "reduce-scatter(f32[16,8]{1,0} %concat.inputs.1)" in out
    xo.xla_parse(out)



def test_control_predecessors_of_the_concatenate_carry_over():
    text = _SMALL.replace("dimensions={1}\n}", "dimensions={1}, control-predecessors={%p1}\n}")
    out, _ = _run(text)
    assert out.endswith("to_apply=%add, control-predecessors={%p1}\n}\n\n")
    xo.xla_parse(out)



def test_inputs_divided_under_a_max_reduction_fuse_plainly_and_stay_exact():
    src = read_exact(GOLDEN / "mean_inputs_divided.hlo")
    text = src.replace("to_apply=%add", "to_apply=%max").replace(
        "%add (a: f32[], b: f32[])", "%max (a: f32[], b: f32[])").replace("add(f32[] %a", "maximum(f32[] %a")
    out, report = _run(text)
    assert "divided by" not in report.records[0].target  # not the mean rewrite: max(x/c) is not max(x)/c
    assert "reshape(f32[16,4]{1,0} %d0)" in out  # the divides are ordinary inputs
    xo.compare_modules(text, out, xo.random_inputs(text, 3))

