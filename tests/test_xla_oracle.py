"""The XLA oracle (tests/xla_oracle.py) works: parse, print, skeleton, execution, comparison."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

if str(Path(__file__).resolve().parent) not in sys.path:  # any pytest import mode
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import needs_xla  # noqa: E402

xo = needs_xla()

pytestmark = pytest.mark.xla

from conftest import CORPUS, INPUTS  # noqa: E402

REDUCER = """
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
"""

AR_RS = (
    "HloModule ar_rs\n"
    + REDUCER
    + """
ENTRY main {
  p = f32[16,8] parameter(0)
  ar = f32[16,8] all-reduce(p), channel_id=1, replica_groups={{0,1,2,3,4,5,6,7}}, use_global_device_ids=true, to_apply=add
  rs = f32[2,8] reduce-scatter(p), channel_id=2, replica_groups={{0,1,2,3,4,5,6,7}}, use_global_device_ids=true, dimensions={0}, to_apply=add
  rs2 = f32[16,2] reduce-scatter(p), channel_id=3, replica_groups=[2,4]<=[8], use_global_device_ids=true, dimensions={1}, to_apply=add
  ROOT t = (f32[16,8], f32[2,8], f32[16,2]) tuple(ar, rs, rs2)
}
"""
)


def _rs_module(name: str, body: str, b_cols: int = 4) -> str:
    return (
        f"HloModule {name}\n"
        + REDUCER
        + f"""
ENTRY main {{
  a = f32[16,4] parameter(0)
  b = f32[16,{b_cols}] parameter(1)
{body}
}}
"""
    )


_RS = "channel_id={c}, replica_groups={{{{0,1,2,3,4,5,6,7}}}}, use_global_device_ids=true, dimensions={{{d}}}, to_apply=add"

# Scatter dimension 0: concatenate(RS(a), RS(b)) is NOT RS(concatenate(a, b)).
CONCAT_OF_RS_DIM0 = _rs_module(
    "concat_of_rs_dim0",
    f"""  ra = f32[2,4] reduce-scatter(a), {_RS.format(c=1, d=0)}
  rb = f32[2,4] reduce-scatter(b), {_RS.format(c=2, d=0)}
  ROOT r = f32[4,4] concatenate(ra, rb), dimensions={{0}}""",
)
RS_OF_CONCAT_DIM0 = _rs_module(
    "rs_of_concat_dim0",
    f"""  ab = f32[32,4] concatenate(a, b), dimensions={{0}}
  ROOT r = f32[4,4] reduce-scatter(ab), {_RS.format(c=1, d=0)}""",
)
# ... but the per-device interleave (reshape to [G,k,...], concatenate on the block axis,
# reshape back) is equal.
RS_OF_INTERLEAVE_DIM0 = _rs_module(
    "rs_of_interleave_dim0",
    f"""  a3 = f32[8,2,4] reshape(a)
  b3 = f32[8,2,4] reshape(b)
  ab3 = f32[8,4,4] concatenate(a3, b3), dimensions={{1}}
  ab = f32[32,4] reshape(ab3)
  ROOT r = f32[4,4] reduce-scatter(ab), {_RS.format(c=1, d=0)}""",
)
# Scatter dimension 0, concatenation on dimension 1: both forms are equal.
CONCAT_OF_RS_DIM1 = _rs_module(
    "concat_of_rs_dim1",
    f"""  ra = f32[2,4] reduce-scatter(a), {_RS.format(c=1, d=0)}
  rb = f32[2,3] reduce-scatter(b), {_RS.format(c=2, d=0)}
  ROOT r = f32[2,7] concatenate(ra, rb), dimensions={{1}}""",
    b_cols=3,
)
RS_OF_CONCAT_DIM1 = _rs_module(
    "rs_of_concat_dim1",
    f"""  ab = f32[16,7] concatenate(a, b), dimensions={{1}}
  ROOT r = f32[2,7] reduce-scatter(ab), {_RS.format(c=1, d=0)}""",
    b_cols=3,
)


def _int_inputs(text: str, seed: int) -> list[list[np.ndarray]]:
    # random_inputs gives f32 normals; integer-valued floats keep every sum exact in any order.
    return [[np.round(x * 4) for x in per_dev] for per_dev in xo.random_inputs(text, seed)]


# ----------------------------------------------------------------------------- parse / print


def test_corpus_module_parses_and_reprints_as_a_fixpoint() -> None:
    path = CORPUS / "jax" / "reduce_scatter" / "reduce-scatter_dim0_f32.pre.hlo"
    text = path.read_text()  # the real dump, or the repository's generated one
    printed = xo.xla_reprint(text)
    assert printed.startswith("HloModule ")
    assert "entry_computation_layout=" in printed
    assert "reduce-scatter(" in printed and "%" in printed
    assert xo.xla_reprint(printed) == printed
    no_percent = xo.xla_reprint(text, percent=False, operand_shapes=False, metadata=False)
    assert "%" not in no_percent
    assert xo.xla_skeleton(no_percent) == xo.xla_skeleton(text)


def test_rejected_text_raises_with_xla_message() -> None:
    with pytest.raises(xo.XlaRejected, match="parse"):
        xo.xla_parse("HloModule m\n\nENTRY e {\n  ROOT p = f32[] frobnicate()\n}\n")


def test_replace_unspecified_api() -> None:
    path = INPUTS / "handwritten" / "torch_xla_tuple_allreduce.hlo"  # torch-neuronx style
    text = path.read_text()
    assert "api_version=API_VERSION_UNSPECIFIED" in text
    with pytest.raises(xo.XlaRejected):
        xo.xla_parse(text)
    fixed = xo.replace_unspecified_api(text)
    assert "API_VERSION_UNSPECIFIED" not in fixed
    xo.xla_parse(fixed)


def test_skeleton_small_module() -> None:
    skeleton = xo.xla_skeleton(AR_RS)
    assert list(skeleton) == ["add", "main"]
    assert skeleton["add"] == [
        ("x", "parameter", []),
        ("y", "parameter", []),
        ("s", "add", ["x", "y"]),
    ]
    assert skeleton["main"] == [
        ("p", "parameter", []),
        ("ar", "all-reduce", ["p"]),
        ("rs", "reduce-scatter", ["p"]),
        ("rs2", "reduce-scatter", ["p"]),
        ("t", "tuple", ["ar", "rs", "rs2"]),
    ]


def test_skeleton_renames_duplicate_names_module_wide() -> None:
    text = (
        "HloModule dup\n"
        + REDUCER
        + """
ENTRY main {
  x = f32[8] parameter(0)
  ROOT s = f32[8] all-reduce(x), replica_groups={}, to_apply=add
}
"""
    )
    skeleton = xo.xla_skeleton(text)
    assert skeleton["main"] == [
        ("x.1", "parameter", []),
        ("s.1", "all-reduce", ["x.1"]),
    ]


# ----------------------------------------------------------------------------- execution


def test_run_spmd_all_reduce_and_reduce_scatter_match_numpy() -> None:
    inputs = _int_inputs(AR_RS, seed=1)
    assert len(inputs) == 1 and len(inputs[0]) == 8
    assert inputs[0][0].shape == (16, 8) and inputs[0][0].dtype == np.float32
    ar, rs, rs2 = xo.run_spmd(AR_RS, inputs)
    total = np.sum(inputs[0], axis=0)
    for d in range(8):
        np.testing.assert_array_equal(ar[d], total)
        np.testing.assert_array_equal(rs[d], total[2 * d : 2 * d + 2])
        # replica_groups=[2,4]<=[8] is {{0,1,2,3},{4,5,6,7}}; block = rank within the group.
        group = inputs[0][0:4] if d < 4 else inputs[0][4:8]
        r = d % 4
        np.testing.assert_array_equal(rs2[d], np.sum(group, axis=0)[:, 2 * r : 2 * r + 2])


def test_run_replicated_all_reduce() -> None:
    text = (
        (
            "HloModule replica_mode, replica_count=8\n"
            + REDUCER
            + """
ENTRY main {
  p = s32[4] parameter(0)
  id = u32[] replica-id()
  ids = u32[4] broadcast(id), dimensions={}
  sid = s32[4] convert(ids)
  q = s32[4] add(p, sid)
  ROOT ar = s32[4] all-reduce(q), replica_groups={{0,1,2,3,4,5,6,7}}, to_apply=add_s32
}
"""
        )
        .replace("add {", "add_s32 {")
        .replace("f32[]", "s32[]")
    )
    inputs = xo.random_inputs(text, seed=2)
    assert inputs[0][0].dtype == np.int32
    (out,) = xo.run_replicated(text, inputs)
    expected = np.sum(inputs[0], axis=0) + sum(range(8))
    for d in range(8):
        np.testing.assert_array_equal(out[d], expected)


def test_random_inputs_bf16_and_deterministic() -> None:
    text = "HloModule m\n\nENTRY e {\n  a = bf16[3,2] parameter(0)\n  b = s64[] parameter(1)\n  ROOT t = (bf16[3,2], s64[]) tuple(a, b)\n}\n"
    first = xo.random_inputs(text, seed=7)
    again = xo.random_inputs(text, seed=7)
    assert str(first[0][0].dtype) == "bfloat16" and first[0][0].shape == (3, 2)
    assert first[1][0].dtype == np.int64 and first[1][0].shape == ()
    for p in range(2):
        for d in range(8):
            np.testing.assert_array_equal(first[p][d], again[p][d])
    out_a, out_b = xo.run_spmd(text, first)
    np.testing.assert_array_equal(out_a[3], first[0][3])
    assert out_b[5] == first[1][5]


# ----------------------------------------------------------------------------- comparison


def test_compare_modules_fails_on_concat_of_reduce_scatters_on_the_scatter_dimension() -> None:
    inputs = _int_inputs(CONCAT_OF_RS_DIM0, seed=3)
    with pytest.raises(AssertionError, match="differ"):
        xo.compare_modules(CONCAT_OF_RS_DIM0, RS_OF_CONCAT_DIM0, inputs)


def test_compare_modules_passes_on_the_interleaved_form() -> None:
    inputs = _int_inputs(CONCAT_OF_RS_DIM0, seed=3)
    xo.compare_modules(CONCAT_OF_RS_DIM0, RS_OF_INTERLEAVE_DIM0, inputs)


def test_compare_modules_passes_on_a_non_scatter_dimension() -> None:
    inputs = _int_inputs(CONCAT_OF_RS_DIM1, seed=4)
    xo.compare_modules(CONCAT_OF_RS_DIM1, RS_OF_CONCAT_DIM1, inputs)
