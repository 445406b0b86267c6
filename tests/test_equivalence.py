"""Equivalence by execution: every conversion is undone exactly, and XLA agrees.

For every executable module M (the JAX shard_map modules of the corpus, torch-neuronx dumps
that XLA:CPU can run, and the programs of ``tests/jax_programs.py``):

- C = convert-collectives-to-custom-call(M) is *not* executable by XLA:CPU (its collectives
  are ``AwsNeuron*`` custom-calls), so C alone proves nothing;
- R = convert-custom-calls-to-collectives(C) is byte-identical to M (the reverse pass's
  documented guarantee for explicit replica groups), and R executes on 8 XLA CPU devices
  with the same outputs as M, exactly;
- D = reverse(default pipeline(M)) — fusing first, so fused reduce-scatters are proven too —
  executes equal to M (exactly, or within float tolerance where the mean idiom was fused).

JAX pre-optimization text keeps its collectives inside ``xla.sdy.manual_computation_body``
computations behind sdy custom-calls XLA:CPU cannot run; the passes run with
``all_computations=True`` and ``jax_programs.per_device`` gives the executable per-device form
of each side (it keeps every computation but ENTRY byte for byte).

Everything runs in this process; results and XLA executables are cached per module.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import CORPUS, HAVE_CORPUS, needs_xla, read_exact

from hlo_rewrite import parse_module, print_module
from hlo_rewrite.passes import DEFAULT_PIPELINE, PassOptions
from hlo_rewrite.pipeline import run_passes

xo = needs_xla()
jp = pytest.importorskip("jax_programs")  # imports only when jax is there (needs_xla skipped otherwise)

pytestmark = pytest.mark.xla

OPTIONS = PassOptions(all_computations=True)
FORWARD = ["convert-collectives-to-custom-call"]
REVERSE = ["convert-custom-calls-to-collectives"]

#: corpus JAX modules that XLA:CPU cannot execute even before any pass (why, as XLA says it)
NOT_EXECUTABLE: dict[str, str] = {
    **{
        f"all-reduce_{op}_{t}.pre.hlo": "Unsupported reduction computation"
        for op in ("and", "or", "xor")
        for t in ("s32", "s64", "u32")
    },
    "all-reduce_xor_pred.pre.hlo": "Unsupported reduction computation",
    # the reduction body carries a Sharding custom-call (partially manual shard_map)
    "all-reduce_partial-manual_axis-b.pre.hlo": "Unsupported reduction computation",
    "psend-precv_ring.cpu-lowered.pre.hlo": "opcode `send` is not supported",
}

#: torch-neuronx dumps with collectives and no other AwsNeuron custom-call, that XLA:CPU runs
#: quickly, and how many replicas they were written for. They are cross-replica modules
#: without ``replica_count``; the executable form adds it to the header.
TORCH_MODULES = {
    "torch-neuronx/qwb_linear_model/pp_2_final.hlo": 2,
    "torch-neuronx/qwb_linear_model/pp_2_layers_2_rank_0.hlo": 2,
    "torch-neuronx/qwb_linear_model/pp_2_layers_2_rank_1.hlo": 2,
    "torch-neuronx-wenboqian/bert_pretrain_tp=2_dp=4_pp=1_optimizer.hlo": 8,
}


def _run(text: str, names, name: str) -> str:
    module = parse_module(text, name)
    run_passes(module, names, OPTIONS)
    return print_module(module)


class Case:
    """One module and its transforms, computed on first use."""

    def __init__(self, name: str, text: str, executable_form, devices: int = xo.NUM_DEVICES) -> None:
        self.name = name
        self.text = text
        self.form = executable_form  # text -> what XLA executes
        self.devices = devices
        self._cache: dict[str, str] = {}

    def _get(self, key: str, make) -> str:
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]

    @property
    def converted(self) -> str:
        return self._get("C", lambda: _run(self.text, FORWARD, self.name))

    @property
    def reversed(self) -> str:
        return self._get("R", lambda: _run(self.converted, REVERSE, self.name))

    @property
    def default_reversed(self) -> str:
        return self._get("D", lambda: _run(_run(self.text, list(DEFAULT_PIPELINE), self.name), REVERSE, self.name))

    def inputs(self, seed: int):
        return xo.random_inputs(self.form(self.text), seed, self.devices)

    def compare(self, a: str, b: str, seed: int, **tol) -> None:
        xo.compare_modules(self.form(a), self.form(b), self.inputs(seed), num_devices=self.devices, **tol)

    def execute(self, text: str) -> None:
        self.compare(text, text, 0)


def _jax_corpus() -> list[Path]:
    root = CORPUS / "jax"
    return sorted(root.rglob("*.pre.hlo")) if root.is_dir() else []


def _with_replica_count(replicas: int):
    def form(text: str) -> str:
        text = xo.replace_unspecified_api(text)
        end = text.index("\n")
        return f"{text[:end]}, replica_count={replicas}{text[end:]}"

    return form


CASES: dict[str, Case] = {}
for _path in _jax_corpus():
    CASES[f"corpus:{_path.name}"] = Case(_path.name, read_exact(_path), jp.per_device)
for _rel, _replicas in TORCH_MODULES.items():
    if (CORPUS / _rel).is_file():
        CASES[f"corpus:{_rel}"] = Case(_rel, read_exact(CORPUS / _rel), _with_replica_count(_replicas), _replicas)
for _name, _prog in jp.PROGRAMS.items():
    CASES[f"jax:{_name}"] = Case(_name, jp.lower_pre(_prog), jp.per_device)

#: the same groups in XLA's iota form: reverse(convert(M)) writes them out, so it is not M byte
#: for byte and executing both compares two different texts
IOTA = {
    "replica_groups={{0,1,2,3,4,5,6,7}}": "replica_groups=[1,8]<=[8]",
    "replica_groups={{0,1,2,3},{4,5,6,7}}": "replica_groups=[2,4]<=[8]",
    "replica_groups={{0,4},{1,5},{2,6},{3,7}}": "replica_groups=[4,2]<=[2,4]T(1,0)",
    "replica_groups={{0,4,1,5,2,6,3,7}}": "replica_groups=[1,8]<=[2,4]T(1,0)",
}


def _iota_groups(text: str) -> str:
    for explicit, iota in IOTA.items():
        text = text.replace(explicit, iota)
    assert "replica_groups={{" not in text
    return text


for _name, _prog in jp.PROGRAMS.items():
    CASES[f"jax-iota:{_name}"] = Case(f"iota_{_name}", _iota_groups(jp.lower_pre(_prog)), jp.per_device)

EXECUTABLE = sorted(k for k, c in CASES.items() if c.name not in NOT_EXECUTABLE)
REFUSED = sorted(k for k, c in CASES.items() if c.name in NOT_EXECUTABLE)


def _has_collective(text: str) -> bool:
    return any(f" {op}(" in text for op in ("all-reduce", "reduce-scatter", "all-gather"))


# --------------------------------------------------------------------------- the set itself


def test_the_set_covers_every_collective_dtype_and_grouping():
    """The generated set is what it claims: every collective, dtype and grouping appears."""
    texts = [CASES[f"jax:{n}"].text for n in jp.PROGRAMS]
    joined = "\n".join(texts)
    for op in ("all-reduce(", "reduce-scatter(", "all-gather("):
        assert op in joined
    for root in ("add(", "maximum(", "minimum("):
        assert root in joined
    for dtype in ("f32[8,16]", "bf16[8,16]", "s32[8,16]"):
        assert dtype in joined
    for groups in (
        "replica_groups={{0,1,2,3,4,5,6,7}}",
        "replica_groups={{0,4},{1,5},{2,6},{3,7}}",
        "replica_groups={{0,1,2,3},{4,5,6,7}}",
        "replica_groups={{0,4,1,5,2,6,3,7}}",
    ):
        assert groups in joined, groups


def test_every_corpus_jax_module_is_in_the_set():
    """Every JAX module of ``CORPUS`` (the real dumps, or the repository's generated inputs)."""
    assert len(_jax_corpus()) > 80
    assert {c.name for k, c in CASES.items() if k.startswith("corpus:") and c.name.endswith(".pre.hlo")} == {
        p.name for p in _jax_corpus()
    }
    names = {p.name for p in _jax_corpus()}
    # the modules XLA:CPU cannot run: all of them with the real dumps, the generated ones otherwise
    assert set(NOT_EXECUTABLE) <= names if HAVE_CORPUS else {n for n in NOT_EXECUTABLE if n in names}


# --------------------------------------------------------------------------- byte identity


@pytest.mark.parametrize("key", sorted(k for k in CASES if not k.startswith("jax-iota:")))
def test_round_trip_is_byte_identical(key):
    """reverse(convert(M)) == M byte for byte (explicit replica groups, all_computations)."""
    case = CASES[key]
    if _has_collective(case.text):
        assert case.converted != case.text
        assert "AwsNeuron" in case.converted
    assert case.reversed == case.text


# --------------------------------------------------------------------------- execution


@pytest.mark.parametrize("key", EXECUTABLE)
def test_converted_module_is_not_executable(key):
    """C has AwsNeuron custom-calls: XLA:CPU refuses to compile it, so only R proves anything."""
    case = CASES[key]
    if not _has_collective(case.text):
        pytest.skip("no collective to convert")
    with pytest.raises(xo.jax.errors.JaxRuntimeError, match="AwsNeuron"):
        case.execute(case.converted)


#: where reverse(convert(M)) is not M byte for byte (iota groups written out): only there does
#: executing the two prove more than the byte identity above
DIFFERING = [k for k in EXECUTABLE if CASES[k].reversed != CASES[k].text]
#: where the default pipeline (fusing first) changed M for good
FUSED = [k for k in EXECUTABLE if CASES[k].default_reversed != CASES[k].text]


def test_iota_groups_are_what_execution_compares():
    assert {k for k in DIFFERING if k.startswith("jax-iota:")} == {k for k in CASES if k.startswith("jax-iota:")}


@pytest.mark.parametrize("key", DIFFERING)
def test_reverse_of_convert_executes_equal(key):
    case = CASES[key]
    assert case.reversed != case.text  # else XLA would run one program twice
    for seed in (0, 1):
        case.compare(case.text, case.reversed, seed)


@pytest.mark.parametrize("key", FUSED)
def test_reverse_of_default_pipeline_executes_equal(key):
    """Fusion included: reverse(default pipeline(M)) computes what M computes."""
    case = CASES[key]
    fused = case.default_reversed
    assert fused != case.text
    tol = {"rtol": 1e-6, "atol": 1e-6} if "mean" in key else {}
    for seed in (0, 1):
        case.compare(case.text, fused, seed, **tol)


def test_a_fusion_is_among_the_proven_rewrites():
    """The default-pipeline proof above is not only the identity: some corpus module fuses."""
    assert any("concat-rs" in k for k in FUSED), FUSED


@pytest.mark.parametrize("key", REFUSED)
def test_not_executable_list_is_accurate(key):
    """The modules left out of execution are exactly those XLA:CPU cannot run at all."""
    case = CASES[key]
    with pytest.raises(xo.jax.errors.JaxRuntimeError, match=NOT_EXECUTABLE[case.name]):
        case.execute(case.text)


def test_the_comparison_can_fail():
    """A changed reduction (add -> max) in R is caught by execution."""
    case = CASES["jax:full8_f32"]
    broken = case.reversed.replace("ROOT add.1 = f32[] add(", "ROOT add.1 = f32[] maximum(", 1)
    assert broken != case.reversed
    with pytest.raises(AssertionError, match="compute different results"):
        case.compare(case.text, broken, 0)


def test_outputs_are_not_trivial():
    """The generated programs' outputs differ between devices (grouped collectives at work)."""
    case = CASES["jax:2x4_b_s32"]
    outs = xo.run_spmd(case.form(case.text), case.inputs(0))
    psum = outs[0]
    assert not np.array_equal(psum[0], psum[4])  # different groups {0..3} and {4..7}
    assert np.array_equal(psum[0], psum[1])  # same group
