"""The one golden runner: every ``tests/golden/<group>/<case>.hlo`` against its expected output.

Each case runs the passes and options of its ``// RUN:`` line (``tests/golden_cases.py``); the
output must equal ``<case>.expected.hlo`` byte for byte, and running the same passes on the output
changes nothing. ``pytest --update-golden`` rewrites the expectations instead of comparing (then
review the diff); under ``CI`` that option is refused. That XLA parses every output is checked in
``tests/test_golden_xla.py`` (the oracle layer).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import golden_cases as gc
import pytest

CASES = gc.cases()
GROUPS = {
    "convert-collectives-to-custom-call": {"jax_post_shard_map", "jax_pre_psum_groups", "torch_neuronx_sharding_fsdp"},
    "fuse-reduce-scatter": {"three_ops", "mean_outputs_divided", "jax_concat-rs_2ops_scatter0_concat1_f32"},
    "fuse-send-recv": {"decomposed-collective-permute", "psend-precv-ring", "pipelined-while"},
}


def test_every_group_has_its_cases():
    by_group: dict[str, set[str]] = {}
    for case in CASES:
        by_group.setdefault(case.group, set()).add(case.name)
    for group, names in GROUPS.items():
        assert names <= by_group.get(group, set()), group


def test_every_file_is_an_input_or_the_expectation_of_one():
    names = {c.path for c in CASES} | {c.expected_path for c in CASES}
    stray = [p for p in sorted(gc.GOLDEN.rglob("*")) if p.is_file() and p.suffix == ".hlo" and p not in names]
    assert stray == []


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_golden(case: gc.GoldenCase, update_golden: bool) -> None:
    _, reports, out = gc.run(case)
    if update_golden:
        with open(case.expected_path, "w", encoding="utf-8", newline="") as fh:
            fh.write(out)
    assert case.expected_path.exists(), f"missing {case.expected_path.name}: run pytest --update-golden"
    assert out == case.expected()
    assert out.split("\n", 1)[0] == case.source().split("\n", 1)[0]  # the RUN line is kept
    assert [r.name for r in reports] == list(case.passes)
    # twice equals once
    module2, reports2, out2 = gc.run(case, out)
    assert out2 == out and not module2.changed
    assert all(r.rewritten == [] for r in reports2)


@pytest.mark.parametrize(
    "line, message",
    [
        ("HloModule m", "must start with"),
        ("// RUN: --all-computations", "names no --passes="),
        ("// RUN: --passes=fuse-send-recv --bogus", "unknown option '--bogus'"),
        ("// RUN: --passes=fuse-send-recv --all-computations=yes", "unknown option"),
    ],
)
def test_bad_run_lines_are_refused(line: str, message: str) -> None:
    with pytest.raises(gc.BadRunLine, match=message):
        gc.parse_run_line(line, "x.hlo")


def test_run_line_options() -> None:
    passes, options = gc.parse_run_line(
        "// RUN: --passes=fuse-send-recv,convert-collectives-to-custom-call --all-computations "
        "--send-recv-target=MySendRecv --strict-tokens"
    )
    assert passes == ("fuse-send-recv", "convert-collectives-to-custom-call")
    assert options.all_computations and options.strict_tokens and options.send_recv_target == "MySendRecv"


# ------------------------------------------------------------------- the update mode

_STALE_INPUT = """// RUN: --passes=convert-collectives-to-custom-call
HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  p = f32[8]{0} parameter(0)
  ROOT r = f32[8]{0} all-reduce(p), replica_groups={}, to_apply=add
}
"""


def _pytest(golden: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k not in ("CI", "UPDATE_GOLDEN")}
    environ.update(env, HLO_REWRITE_GOLDEN_DIR=str(golden), PYTHONDONTWRITEBYTECODE="1")
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
           f"{Path(__file__).resolve()}::test_golden", *args]
    return subprocess.run(cmd, env=environ, capture_output=True, text=True, timeout=300,
                          cwd=Path(__file__).resolve().parents[1])


@pytest.mark.slow
def test_update_mode_is_an_explicit_option_refused_under_ci(tmp_path: Path) -> None:
    group = tmp_path / "convert-collectives-to-custom-call"
    group.mkdir()
    (group / "one.hlo").write_text(_STALE_INPUT)
    expected = group / "one.expected.hlo"
    expected.write_text("stale\n")

    assert _pytest(tmp_path).returncode == 1  # a stale expectation fails
    assert _pytest(tmp_path, UPDATE_GOLDEN="1").returncode == 1  # the old environment switch is gone
    assert expected.read_text() == "stale\n"
    refused = _pytest(tmp_path, "--update-golden", CI="true")
    assert refused.returncode == 4 and "refused under CI" in refused.stderr
    assert expected.read_text() == "stale\n"

    updated = _pytest(tmp_path, "--update-golden")
    assert updated.returncode == 0, updated.stdout + updated.stderr
    assert "AwsNeuronAllReduceAdd_f32" in expected.read_text()
