"""fuse-reduce-scatter: golden outputs, reports, and proof by execution with XLA.

Every golden input in ``tests/golden/fuse-reduce-scatter/`` is a per-device SPMD
module (``num_partitions=8``). For each rewritten case the module before and
after the pass runs on 8 XLA CPU devices with the same random inputs and must
give the same outputs (exactly; within float tolerance for the mean form). The
harness is shown to be able to fail: the plain concatenation on the scatter
dimension, built by hand, must compare unequal.

Set ``HLO_REWRITE_UPDATE_GOLDEN=1`` to rewrite the ``*.expected.hlo`` files from
the tool's output (then review the diff).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from conftest import CORPUS, read_exact

from hlo_rewrite import parse_module, print_module
from hlo_rewrite.passes import PassOptions
from hlo_rewrite.pipeline import run_passes

xo = pytest.importorskip("xla_oracle")

pytestmark = pytest.mark.xla

GOLDEN = Path(__file__).resolve().parent / "golden" / "fuse-reduce-scatter"
UPDATE = os.environ.get("HLO_REWRITE_UPDATE_GOLDEN") == "1"
PASS = ["fuse-reduce-scatter"]

#: case -> substring of the target (rewritten) or reason (left alone)
POSITIVE: dict[str, str] = {
    "two_ops_concat_after_scatter": "reduce-scatter 'concat' over 'concat.inputs'",
    "three_ops": "reduce-scatter 'concat' over 'concat.inputs'",
    "four_ops_max": "reduce-scatter 'concat' over 'concat.inputs'",
    "rank3_concat_before_scatter": "reduce-scatter 'concat' over 'concat.inputs'",
    "rank3_concat_after_scatter_subaxis": "reduce-scatter 'concat' over 'concat.inputs'",
    "equal_dims_interleave": "reduce-scatter 'concat' over 'concat.inputs'",
    "equal_dims_rank3_subaxis": "reduce-scatter 'concat' over 'concat.inputs'",
    "iota_groups": "reduce-scatter 'concat' over 'concat.inputs'",
    "bf16_jax_style": "reduce-scatter 'concatenate.1' over 'concatenate.1.inputs'",
    "opt_barrier_plumbing": "reduce-scatter 'concat' over 'concat.inputs'",
    "opt_barrier_shared": "reduce-scatter 'concat' over 'concat.inputs'",
    "opt_barrier_two_concats": "reduce-scatter 'concatA' over 'concatA.inputs'",
    "equal_dims_column_major": "reduce-scatter 'concat' over 'concat.inputs'",
    "mean_outputs_divided": "divided by 'c8'",
    "mean_inputs_divided": "divided by 'c'",
    "mean_inputs_different_divisors_plain": "reduce-scatter 'concat' over 'concat.inputs'",
}
NEGATIVE: dict[str, str] = {
    "neg_different_groups": "replica groups differ: 'rs0' has {{0,1,2,3},{4,5,6,7}}, 'rs1' has {{0,2,4,6},{1,3,5,7}}",
    "neg_group_order": "replica groups differ",
    "neg_different_scatter_dims": "scatter dimensions differ",
    "neg_different_divisors": "divisors differ: 'd0' divides by 'c8' (8), 'd1' by 'c4' (4)",
    "neg_extra_user": "'rs1' has another user, 'other'",
    "neg_plain_operand": "operand 1 ('p2') is not a reduce-scatter",
    "neg_dependent": "the input of 'rs1' depends on 'rs0', another reduce-scatter of the group",
    "neg_different_reductions": "reduction bodies differ: 'rs0' uses add (add), 'rs1' uses max (maximum)",
    "neg_mixed_divided": "operands mix divided and undivided reduce-scatters",
    "neg_channel_id_presence": "channel_id is present on 'rs0' but not on 'rs1'",
}
#: corpus file (jax/rs_concat/) -> expected record, run with all_computations
CORPUS_CASES: dict[str, tuple[str, str]] = {
    "concat-rs_2ops_scatter0_concat1_f32": ("rewritten", "reduce-scatter 'concatenate.1' over 'concatenate.1.inputs'"),
    "concat-rs-mean_outputs-divided_scatter0_concat1": ("rewritten", "divided by 'constant.1'"),
    "negative_concat-rs-different-groups": ("left", "replica groups differ"),
}
CORPUS_BODY = "xla.sdy.manual_computation_body.3"


def _run(text: str, all_computations: bool = False, name: str = "in.hlo"):
    module = parse_module(text, name)
    (report,) = run_passes(module, PASS, PassOptions(all_computations=all_computations))
    return print_module(module), report


def _tolerance(case: str) -> dict[str, float]:
    return {"rtol": 1e-6, "atol": 1e-6} if "mean" in case else {}


_cache: dict[str, tuple[str, str, object]] = {}


def _case(case: str) -> tuple[str, str, object]:
    """(input, output, report) of a golden case, computed once per process."""
    if case not in _cache:
        src = read_exact(GOLDEN / f"{case}.hlo")
        out, report = _run(src, name=f"{case}.hlo")
        _cache[case] = (src, out, report)
    return _cache[case]


def _check_golden(expected_path: Path, out: str) -> None:
    if UPDATE:
        expected_path.write_text(out, encoding="utf-8", newline="")
    assert expected_path.exists(), f"missing {expected_path.name} (HLO_REWRITE_UPDATE_GOLDEN=1 writes it)"
    assert out == read_exact(expected_path)


# ------------------------------------------------------------------ golden cases


def test_every_golden_input_is_listed():
    inputs = {p.name[: -len(".hlo")] for p in GOLDEN.glob("*.hlo") if not p.name.endswith(".expected.hlo")}
    assert inputs == set(POSITIVE) | set(NEGATIVE)


@pytest.mark.parametrize("case", sorted(POSITIVE) + sorted(NEGATIVE))
def test_golden(case):
    src, out, _ = _case(case)
    _check_golden(GOLDEN / f"{case}.expected.hlo", out)
    if case in NEGATIVE:
        assert out == src  # untouched, byte for byte
    else:
        assert out != src


@pytest.mark.parametrize("case", sorted(POSITIVE))
def test_rewritten_report(case):
    _, _, report = _case(case)
    assert [(r.action, r.instruction, r.opcode) for r in report.records] == [
        ("rewritten", r.instruction, "concatenate") for r in report.records
    ]
    assert len(report.records) == (2 if case == "opt_barrier_two_concats" else 1)
    assert POSITIVE[case] in report.records[0].target


@pytest.mark.parametrize("case", sorted(NEGATIVE))
def test_left_report(case):
    _, _, report = _case(case)
    assert len(report.records) == 1
    record = report.records[0]
    assert record.action == "left" and record.opcode == "concatenate"
    assert NEGATIVE[case] in record.reason


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


@pytest.mark.parametrize("case", sorted(POSITIVE))
def test_removed_reduce_scatters_are_gone_and_one_is_left(case):
    src, out, _ = _case(case)
    count = lambda text: len(re.findall(r" reduce-scatter\(", text))  # noqa: E731
    assert count(out) == (2 if case in ("opt_barrier_shared", "opt_barrier_two_concats") else 1)
    assert count(src) >= 2


def test_opt_barrier_keeps_what_it_still_carries():
    _, out, _ = _case("opt_barrier_shared")
    assert "%rs0 = f32[2,4]{1,0} reduce-scatter(" in out  # still an element of the live opt-barrier
    assert "%rs1 = " not in out and "%gte0 = " not in out


# ------------------------------------------------------------ the harness can fail


def _plain_concat_on_scatter_dim(src: str) -> str:
    """equal_dims_interleave fused the wrong way: RS(concatenate(p0, p1)) on dimension 0."""
    lines = [line for line in src.splitlines(keepends=True) if "%rs0 =" not in line and "%rs1 =" not in line]
    text = "".join(lines)
    return text.replace(
        "  ROOT %concat = f32[5,4]{1,0} concatenate(f32[2,4]{1,0} %rs0, f32[3,4]{1,0} %rs1), dimensions={0}\n",
        "  %wrong = f32[40,4]{1,0} concatenate(f32[16,4]{1,0} %p0, f32[24,4]{1,0} %p1), dimensions={0}\n"
        "  ROOT %concat = f32[5,4]{1,0} reduce-scatter(f32[40,4]{1,0} %wrong), channel_id=1, "
        "replica_groups={{0,1,2,3,4,5,6,7}}, use_global_device_ids=true, dimensions={0}, to_apply=%add\n",
    )


def test_plain_concat_on_scatter_dimension_compares_unequal():
    src, out, _ = _case("equal_dims_interleave")
    wrong = _plain_concat_on_scatter_dim(src)
    assert "%wrong" in wrong and " %rs0" not in wrong
    xo.xla_parse(wrong)
    inputs = xo.random_inputs(src, 0)
    with pytest.raises(AssertionError, match="compute different results"):
        xo.compare_modules(src, wrong, inputs)
    xo.compare_modules(src, out, inputs)  # while the interleaved form is equal


def test_interleave_is_what_the_pass_emits_on_equal_dimensions():
    _, out, _ = _case("equal_dims_interleave")
    assert "%p0.blocks = f32[8,2,4]{2,1,0} reshape(f32[16,4]{1,0} %p0)" in out
    assert "%p1.blocks = f32[8,3,4]{2,1,0} reshape(f32[24,4]{1,0} %p1)" in out
    assert ("%concat.interleaved = f32[8,5,4]{2,1,0} concatenate(f32[8,2,4]{2,1,0} %p0.blocks, "
            "f32[8,3,4]{2,1,0} %p1.blocks), dimensions={1}") in out
    assert "%concat.inputs = f32[40,4]{1,0} reshape(f32[8,5,4]{2,1,0} %concat.interleaved)" in out


# ------------------------------------------------------------------------ corpus


def _corpus_text(name: str) -> str:
    path = CORPUS / "jax" / "rs_concat" / f"{name}.pre.hlo"
    if not path.exists():
        pytest.skip(f"corpus file {path} not found")
    return read_exact(path)


def _body_as_spmd_module(text: str) -> str:
    """The shard_map body (with its reducers) as a runnable per-device module."""
    text = text.split("\n\n", 1)[1]  # without the HloModule line
    text = text[: text.index("ENTRY ")]
    text = re.sub(rf"^{re.escape(CORPUS_BODY)} {{", f"ENTRY {CORPUS_BODY} {{", text, flags=re.M)
    return "HloModule corpus_body, num_partitions=8\n\n" + text


@pytest.mark.parametrize("name", sorted(CORPUS_CASES))
def test_corpus_golden_all_computations(name):
    src = _corpus_text(name)
    out, report = _run(src, all_computations=True, name=name)
    _check_golden(GOLDEN / f"corpus__{name}.expected.hlo", out)
    action, text = CORPUS_CASES[name]
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


@pytest.mark.parametrize("name", sorted(CORPUS_CASES))
def test_corpus_entry_only_by_default(name):
    """The reduce-scatters sit in the shard_map body, which ENTRY-only mode does not visit."""
    src = _corpus_text(name)
    out, report = _run(src, name=name)
    assert out == src and report.records == []


def test_structurally_identical_bodies_fuse_and_different_ones_do_not():
    src = _corpus_text("concat-rs_2ops_scatter0_concat1_f32")
    out, _ = _run(src, all_computations=True)
    assert "to_apply=region_0.1" in out
    changed = src.replace("ROOT add.3 = f32[] add(", "ROOT add.3 = f32[] multiply(")
    out2, report = _run(changed, all_computations=True)
    assert out2 == changed
    assert "reduction bodies differ" in report.records[0].reason


def test_two_concatenates_behind_one_opt_barrier_both_fuse_and_the_barrier_goes():
    src, out, report = _case("opt_barrier_two_concats")
    assert [r.instruction for r in report.rewritten] == ["concatA", "concatB"]
    assert "opt-barrier" not in out and "%tuple" not in out and "get-tuple-element" not in out
    # the comment that stood before the first concatenate now stands before its new lines
    assert "  // both pairs are fused\n  %concatA.inputs = " in out


def test_interleave_keeps_the_memory_order_of_a_column_major_layout():
    _, out, _ = _case("equal_dims_column_major")
    assert "%p0.blocks = f32[3,8,2]{0,2,1} reshape(f32[3,16]{0,1} %p0)" in out
    assert "%concat.inputs = f32[3,24]{0,1} reshape(f32[3,8,3]{0,2,1} %concat.interleaved)" in out


# ------------------------------------------------------------- smaller behaviours

_SMALL = """HloModule small, num_partitions=8

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %r = f32[] add(f32[] %a, f32[] %b)
}

ENTRY %main (p0: f32[16,4], p1: f32[16,4]) -> f32[2,8] {
  %p0 = f32[16,4]{1,0} parameter(0)
  %p1 = f32[16,4]{1,0} parameter(1)
  %rs0 = f32[2,4]{1,0} reduce-scatter(f32[16,4]{1,0} %p0), channel_id=1, replica_groups={{0,1,2,3,4,5,6,7}}, use_global_device_ids=true, dimensions={0}, to_apply=%add
  %rs1 = f32[2,4]{1,0} reduce-scatter(f32[16,4]{1,0} %p1), channel_id=1, replica_groups={{0,1,2,3,4,5,6,7}}, use_global_device_ids=true, dimensions={0}, to_apply=%add
  ROOT %concat = f32[2,8]{1,0} concatenate(f32[2,4]{1,0} %rs0, f32[2,4]{1,0} %rs1), dimensions={1}
}

"""


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


def test_a_reduce_scatter_with_control_dependencies_is_left():
    text = _SMALL.replace("to_apply=%add\n  ROOT", "to_apply=%add, control-predecessors={%rs0}\n  ROOT")
    out, report = _run(text)
    assert out == text
    assert report.records[0].reason == "'rs0' has control dependencies"


def test_a_reduce_scatter_also_used_by_the_root_is_left():
    text = _SMALL.replace("ROOT %concat = ", "%concat = ")
    text = text.replace("dimensions={1}\n}", "dimensions={1}\n  ROOT %t = (f32[2,8]{1,0}, f32[2,4]{1,0}) "
                        "tuple(f32[2,8]{1,0} %concat, f32[2,4]{1,0} %rs0)\n}")
    out, report = _run(text)
    assert out == text and report.records[0].reason == "'rs0' has another user, 't'"


def test_single_operand_concatenate_is_reported():
    text = _SMALL.replace(
        "ROOT %concat = f32[2,8]{1,0} concatenate(f32[2,4]{1,0} %rs0, f32[2,4]{1,0} %rs1), dimensions={1}",
        "%concat = f32[2,4]{1,0} concatenate(f32[2,4]{1,0} %rs0), dimensions={1}\n"
        "  ROOT %t = (f32[2,4]{1,0}, f32[2,4]{1,0}) tuple(f32[2,4]{1,0} %concat, f32[2,4]{1,0} %rs1)")
    out, report = _run(text)
    assert out == text and report.records[0].reason == "only one operand: nothing to fuse"


def test_inputs_divided_under_a_max_reduction_fuse_plainly_and_stay_exact():
    src = read_exact(GOLDEN / "mean_inputs_divided.hlo")
    text = src.replace("to_apply=%add", "to_apply=%max").replace(
        "%add (a: f32[], b: f32[])", "%max (a: f32[], b: f32[])").replace("add(f32[] %a", "maximum(f32[] %a")
    out, report = _run(text)
    assert "divided by" not in report.records[0].target  # not the mean rewrite: max(x/c) is not max(x)/c
    assert "reshape(f32[16,4]{1,0} %d0)" in out  # the divides are ordinary inputs
    xo.compare_modules(text, out, xo.random_inputs(text, 3))


def test_large_computation_is_linear():
    """3,000 fusable concatenates in a chain (30,000 instructions) in a few seconds at most."""
    import time

    lines = [_SMALL.split("ENTRY")[0] + "ENTRY %main (p0: f32[16,4]) -> f32[16,4] {",
             "  %p0 = f32[16,4]{1,0} parameter(0)"]
    prev = "p0"
    attrs = "channel_id=1, replica_groups={{0,1,2,3,4,5,6,7}}, use_global_device_ids=true, dimensions={0}, to_apply=%add"
    for i in range(3000):
        ops = []
        for j in range(4):
            lines.append(f"  %x{i}_{j} = f32[16,4]{{1,0}} negate(f32[16,4]{{1,0}} %{prev})")
            lines.append(f"  %rs{i}_{j} = f32[2,4]{{1,0}} reduce-scatter(f32[16,4]{{1,0}} %x{i}_{j}), {attrs}")
            ops.append(f"f32[2,4]{{1,0}} %rs{i}_{j}")
        lines.append(f"  %c{i} = f32[2,16]{{1,0}} concatenate({', '.join(ops)}), dimensions={{1}}")
        lines.append(f"  %y{i} = f32[16,4]{{1,0}} reshape(f32[2,16]{{1,0}} %c{i})")
        prev = f"y{i}"
    lines += [f"  ROOT %out = f32[16,4]{{1,0}} negate(f32[16,4]{{1,0}} %{prev})", "}", ""]
    module = parse_module("\n".join(lines))
    start = time.perf_counter()
    (report,) = run_passes(module, PASS)
    elapsed = time.perf_counter() - start
    assert len(report.rewritten) == 3000
    assert elapsed < 10, f"{elapsed:.1f} s"
    assert " reduce-scatter(" in print_module(module)
