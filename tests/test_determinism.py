"""The same input gives the same bytes: across runs, hash seeds and job counts.

The command line runs as a real process with ``PYTHONHASHSEED`` = 0, 1, 2 and ``random`` over
inputs on which every pass fires (the examples, the golden inputs of every pass, corpus
modules with fusable reduce-scatters, send/recv pairs and many collectives). The written files,
standard error, the exit code and the ``--report`` JSON (without its timings) must be equal.
One more run with ``-j 2`` must agree too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CORPUS, REPO

GOLDEN = REPO / "tests" / "golden"
CORPUS_INPUTS = [
    "jax/rs_concat/concat-rs_2ops_scatter0_concat1_f32.pre.hlo",
    "jax/rs_concat/concat-rs-mean_outputs-divided_scatter0_concat1.pre.hlo",
    "jax/send_recv/send-recv_decomposed-collective-permute.xla.hlo",
    "jax/send_recv/psend-precv_ring.cpu-lowered.pre.hlo",
    "torch-neuronx/llama2/llama2_dp=1_tp=8_pp=4.hlo",
    "xla-benchmarks/hlo_llama3_8b_cp_bf16_1x4.hlo",
]
SEEDS = ["0", "1", "2", "random"]


def _inputs() -> list[Path]:
    files = sorted((REPO / "examples").glob("*.hlo"))
    files += sorted(p for p in GOLDEN.rglob("*.hlo") if not p.name.endswith(".expected.hlo"))
    files += [CORPUS / rel for rel in CORPUS_INPUTS if (CORPUS / rel).is_file()]
    return files


def _strip_timings(value):
    if isinstance(value, dict):
        return {k: _strip_timings(v) for k, v in value.items() if k != "seconds"}
    if isinstance(value, list):
        return [_strip_timings(v) for v in value]
    return value


def _run(tmp: Path, tag: str, hashseed: str, extra: list[str]) -> dict:
    out_dir = tmp / tag
    report = tmp / f"{tag}.json"
    env = dict(os.environ, PYTHONHASHSEED=hashseed)
    proc = subprocess.run(
        [sys.executable, "-m", "hlo_rewrite", *map(str, _inputs()), "-o", f"{out_dir}/", "--report", str(report),
         "-q", *extra],
        capture_output=True, env=env, cwd=REPO, timeout=600,
    )
    files = {p.name: p.read_bytes() for p in sorted(out_dir.iterdir())} if out_dir.is_dir() else {}
    text = report.read_text().replace(str(out_dir), "<out>")
    return {
        "exit": proc.returncode,
        "stdout": proc.stdout,
        "stderr": proc.stderr.decode().replace(str(out_dir), "<out>"),
        "files": files,
        "report": _strip_timings(json.loads(text)),
    }


@pytest.fixture(scope="module", params=[[], ["--all-computations"]], ids=["entry", "all-computations"])
def runs(request, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("det")
    tag = "all" if request.param else "entry"
    results = {seed: _run(tmp, f"{tag}-{seed}", seed, request.param) for seed in SEEDS}
    results["j2"] = _run(tmp, f"{tag}-j2", "random", [*request.param, "-j", "2"])
    return results


def test_every_pass_fires(runs):
    rewritten: dict[str, int] = {}
    for file in runs["0"]["report"]["files"]:
        for module in file["modules"]:
            for p in module["passes"]:
                rewritten[p["pass"]] = rewritten.get(p["pass"], 0) + p["rewritten"]
    assert set(rewritten) == {"fuse-reduce-scatter", "fuse-send-recv", "convert-collectives-to-custom-call"}
    assert all(rewritten.values()), rewritten
    assert len(runs["0"]["files"]) >= 20


@pytest.mark.parametrize("other", [s for s in SEEDS if s != "0"] + ["j2"])
def test_same_bytes_and_report(runs, other):
    base, run = runs["0"], runs[other]
    assert run["exit"] == base["exit"]
    assert run["files"].keys() == base["files"].keys()
    for name, data in base["files"].items():
        assert run["files"][name] == data, name
    assert run["stderr"] == base["stderr"]
    assert run["report"] == base["report"]
