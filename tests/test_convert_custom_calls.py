"""convert-custom-calls-to-collectives: the reverse of convert-collectives-to-custom-call.

convert -> reverse gives the input back byte for byte when the collectives were written as
XLA prints them with explicit replica groups (JAX pre-optimization text with all_computations,
torch-neuronx dumps, the golden inputs). Modules with iota replica groups come back with
explicit groups; what XLA says about them is in ``tests/test_convert_custom_calls_xla.py``.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

import numpy as np
import pytest
from conftest import CORPUS, read_exact
from test_roundtrip import COMPLETE

from hlo_rewrite import parse_module, print_module  # noqa: E402
from hlo_rewrite.errors import PassError  # noqa: E402
from hlo_rewrite.passes import DEFAULT_PIPELINE, PassOptions  # noqa: E402
from hlo_rewrite.pipeline import run_passes  # noqa: E402

FORWARD = "convert-collectives-to-custom-call"
REVERSE = "convert-custom-calls-to-collectives"
GOLDEN = Path(__file__).resolve().parent / "golden" / FORWARD


def _run(text: str, names: list[str], *, all_computations: bool = False, filename: str = "in.hlo"):
    module = parse_module(text, filename)
    reports = run_passes(module, names, PassOptions(all_computations=all_computations))
    return module, reports[-1], print_module(module)


def _round_trip(text: str, *, all_computations: bool = True, filename: str = "in.hlo") -> tuple[str, object]:
    _, fwd, converted = _run(text, [FORWARD], all_computations=all_computations, filename=filename)
    _, rev, back = _run(converted, [REVERSE], all_computations=all_computations, filename=filename)
    assert [r.instruction for r in rev.rewritten] == [r.instruction for r in fwd.rewritten]
    assert [r.target for r in rev.rewritten] == [r.opcode for r in fwd.rewritten]
    return back, fwd


_IOTA_RE = re.compile(r"replica_groups=\[(\d+),(\d+)\]<=\[([\d,]+)\](?:T\(([\d,]+)\))?")


def _explicit_groups(text: str) -> str:
    """Write iota replica groups out explicitly: ``[2,2]<=[4]`` -> ``{{0,1},{2,3}}``."""

    def one(m: re.Match) -> str:
        g, s = int(m.group(1)), int(m.group(2))
        dims = [int(x) for x in m.group(3).split(",")]
        ids = np.arange(int(np.prod(dims))).reshape(dims)
        if m.group(4):
            ids = ids.transpose([int(x) for x in m.group(4).split(",")])
        rows = ids.reshape(g, s).tolist()
        return "replica_groups={" + ",".join("{" + ",".join(map(str, r)) + "}" for r in rows) + "}"

    return _IOTA_RE.sub(one, text)


# ------------------------------------------------------------------ round trips
def test_not_in_default_pipeline():
    assert REVERSE not in DEFAULT_PIPELINE


GOLDEN_INPUTS = sorted(p for p in GOLDEN.glob("*.hlo") if not p.name.endswith(".expected.hlo"))


@pytest.mark.parametrize("path", GOLDEN_INPUTS, ids=lambda p: p.stem)
def test_round_trip_golden_inputs_byte_identical(path):
    src = path.read_bytes().decode()
    back, fwd = _round_trip(src, filename=path.name)
    assert fwd.rewritten
    assert back == src


@pytest.mark.parametrize("path", GOLDEN_INPUTS, ids=lambda p: p.stem)
def test_reverse_of_golden_expected(path):
    """The reverse alone, on the forward pass's checked-in output."""
    expected = path.with_name(path.stem + ".expected.hlo").read_bytes().decode()
    _, report, back = _run(expected, [REVERSE], all_computations=True)
    assert report.rewritten and report.left == []
    assert back == path.read_bytes().decode()


@functools.cache
def corpus_round_trip_results():
    out = []
    for path in COMPLETE:  # every complete module of CORPUS (real dumps, or the repository's inputs)
        src = read_exact(path)
        if not re.search(r" (all-reduce|reduce-scatter|all-gather)\(", src):
            continue
        back, _ = _round_trip(src, filename=str(path))
        out.append((path.relative_to(CORPUS), src, back))
    return out


@pytest.fixture(scope="module")
def corpus_round_trips():
    return corpus_round_trip_results()


def _byte_identical_expected(rel: Path) -> bool:
    if rel.parts[0] == "handwritten":  # the repository's inputs: all explicit groups but one
        return rel.name != "iota_replica_groups.hlo"
    return (rel.parts[0] == "jax" and rel.name.endswith(".pre.hlo")) or rel.parts[0].startswith("torch-neuronx")


def test_round_trip_corpus_byte_identical(corpus_round_trips):
    checked = 0
    for rel, src, back in corpus_round_trips:
        if _byte_identical_expected(rel):
            assert back == src, rel
            checked += 1
    assert checked > 80


# ------------------------------------------------------- printed as XLA prints
REDUCER = """%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

"""


def _module(line: str, *, operand: str = "f32[8]{0}", reducer: str = REDUCER) -> str:
    return f"""HloModule m

{reducer}ENTRY %main {{
  %x = {operand} parameter(0)
  {line}
}}

"""


def _root(text: str) -> str:
    return [line for line in text.splitlines() if line.startswith("  ROOT %c = ")][0]


def _cc(target: str, config: dict | str | None, shape: str = "f32[8]{0}", extra: str = "") -> str:
    cfg = "" if config is None else ", backend_config=" + (
        config if isinstance(config, str) else json.dumps(config, sort_keys=True, separators=(",", ":"))
    )
    return f'ROOT %c = {shape} custom-call(%x), custom_call_target="{target}"{extra}{cfg}'


BASE_CFG = {"replica_groups": [[0, 1], [2, 3]], "channel_id": 4, "use_global_device_ids": True,
            "constrain_layout": True}


def test_names_without_percent():
    text = """HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  x = f32[8]{0} parameter(0)
  ROOT c = f32[8]{0} custom-call(x), custom_call_target="AwsNeuronAllReduceAdd_f32", backend_config={"channel_id":null,"constrain_layout":false,"replica_groups":[[0,1]],"to_apply":"add","use_global_device_ids":false}
}

"""
    _, _, out = _run(text, [REVERSE])
    assert "  ROOT c = f32[8]{0} all-reduce(x), replica_groups={{0,1}}, to_apply=add\n" in out


def test_other_custom_calls_left_alone():
    text = _module(
        'ROOT %c = f32[8]{0} custom-call(%x), custom_call_target="AwsNeuronAllReduceSum_f32", '
        "api_version=API_VERSION_UNSPECIFIED"
    )
    for target in ("AwsNeuronRmsNorm", "AwsNeuronAllReduceAdd_f64", "AwsNeuronAllGatherAdd_f32",
                   "awsneuronallreduceadd_f32", "AwsNeuronAllReduceAdd_f32x"):
        t = text.replace("AwsNeuronAllReduceSum_f32", target)
        module, report, out = _run(t, [REVERSE])
        assert out == t and report.records == [] and not module.changed, target


def test_outside_scope_is_reported():
    text = """HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

body {
  y = f32[8]{0} parameter(0)
  ROOT c = f32[8]{0} custom-call(y), custom_call_target="AwsNeuronAllReduceAdd_f32", backend_config={"channel_id":null,"constrain_layout":false,"replica_groups":[],"to_apply":"add","use_global_device_ids":false}
}

ENTRY main {
  x = f32[8]{0} parameter(0)
  ROOT k = f32[8]{0} call(x), to_apply=body
}

"""
    _, report, out = _run(text, [REVERSE])
    assert out == text
    assert [r.instruction for r in report.left] == ["c"] and "outside scope" in report.left[0].reason
    _, report, out = _run(text, [REVERSE], all_computations=True)
    assert [r.instruction for r in report.rewritten] == ["c"]
    assert "all-reduce(y), replica_groups={}, to_apply=add" in out


# ------------------------------------------------------------------- errors
GOOD_AR = {**BASE_CFG, "to_apply": "add"}
MAX_REDUCER = REDUCER.replace("add(%a, %b)", "maximum(%a, %b)")


@pytest.mark.parametrize(
    ("target", "config", "shape", "extra", "message"),
    [
        ("AwsNeuronAllReduceAdd_f32", None, "f32[8]{0}", "", "has none"),
        ("AwsNeuronAllReduceAdd_f32", '"not json"', "f32[8]{0}", "", "is not JSON"),
        ("AwsNeuronAllReduceAdd_f32", "{channel_id=1}", "f32[8]{0}", "", "is not JSON"),
        ("AwsNeuronAllReduceAdd_f32", '"[1,2]"', "f32[8]{0}", "", "not a JSON object"),
        ("AwsNeuronAllReduceAdd_f32", {k: v for k, v in GOOD_AR.items() if k != "to_apply"}, "f32[8]{0}", "",
         "lacks to_apply"),
        ("AwsNeuronAllGather_f32", {**BASE_CFG}, "f32[16]{0}", "", "lacks dimension"),
        ("AwsNeuronAllReduceAdd_f32", {**GOOD_AR, "dimension": 0}, "f32[8]{0}", "", "unexpected key(s) dimension"),
        ("AwsNeuronAllReduceAdd_f32", {**GOOD_AR, "replica_groups": [0, 1]}, "f32[8]{0}", "", "replica_groups"),
        ("AwsNeuronAllReduceAdd_f32", {**GOOD_AR, "channel_id": "4"}, "f32[8]{0}", "", "channel_id"),
        ("AwsNeuronAllReduceAdd_f32", {**GOOD_AR, "constrain_layout": 1}, "f32[8]{0}", "", "constrain_layout"),
        ("AwsNeuronAllGather_f32", {**BASE_CFG, "dimension": -1}, "f32[16]{0}", "", "dimension"),
        ("AwsNeuronAllReduceAdd_f32", {**GOOD_AR, "to_apply": "nope"}, "f32[8]{0}", "", "'nope', which is not"),
        ("AwsNeuronAllReduceMax_f32", GOOD_AR, "f32[8]{0}", "", "does not match the reduction computation"),
        ("AwsNeuronAllReduceAdd_bf16", GOOD_AR, "f32[8]{0}", "", "does not match the result element type"),
        ("AwsNeuronAllReduceAdd_f32", GOOD_AR, "f32[8]{0}", ", api_version=API_VERSION_UNSPECIFIED",
         "attribute 'api_version' cannot be carried back"),
        ("AwsNeuronAllReduceAdd_f32", {**GOOD_AR, "original_backend_config": 3}, "f32[8]{0}", "",
         "original_backend_config"),
    ],
)
def test_malformed_custom_call_is_a_located_error(target, config, shape, extra, message):
    text = _module(_cc(target, config, shape, extra))
    with pytest.raises(PassError) as info:
        _run(text, [REVERSE], filename="bad.hlo")
    err = info.value
    assert message in err.message
    assert err.filename == "bad.hlo" and err.line == 11
    rendered = err.render()
    assert rendered.startswith("bad.hlo:11:")
    assert "custom_call_target=" in rendered and "^" in rendered


def test_infix_checked_against_a_max_body():
    text = _module(_cc("AwsNeuronAllReduceMax_f32", GOOD_AR), reducer=MAX_REDUCER)
    _, report, out = _run(text, [REVERSE])
    assert report.rewritten and "to_apply=%add" in out
