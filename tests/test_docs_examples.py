"""The shell examples of docs/cli.md work as written.

Every fenced block opened with ```` ```sh test ```` is run, in document order,
in one temporary directory, by ``bash -euo pipefail`` with the installed
``hlo-rewrite`` first on PATH.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "cli.md"
BIN = Path(sys.executable).parent
FENCE = re.compile(r"^```sh test\n(.*?)^```$", re.S | re.M)


def blocks() -> list[str]:
    return FENCE.findall(DOC.read_text(encoding="utf-8"))


def test_docs_have_a_pipeline_and_a_ci_example():
    found = blocks()
    assert len(found) >= 3
    assert any("| hlo-rewrite -" in b for b in found)
    assert any("--check" in b for b in found)


@pytest.mark.skipif(not (BIN / "hlo-rewrite").exists(), reason="hlo-rewrite not installed")
def test_docs_shell_examples_run(tmp_path):
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env.pop("NO_COLOR", None)
    for i, block in enumerate(blocks()):
        r = subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, f"docs/cli.md block {i + 1} failed ({r.returncode}):\n{block}\n{r.stderr}"


def test_pre_commit_hook_runs_check_on_hlo_files(tmp_path):
    """The hook's entry, run the way pre-commit runs it (entry + matching file names)."""
    text = (DOC.parent.parent / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    fields = dict(re.findall(r"^\s*-?\s*(\w+): (.*)$", text, re.M))
    assert fields["id"] == "hlo-rewrite-check"
    assert fields["entry"] == "hlo-rewrite --check"
    files = re.compile(fields["files"])
    assert files.search("golden/model.hlo") and not files.search("model.hlo.txt")
    if not (BIN / "hlo-rewrite").exists():
        pytest.skip("hlo-rewrite not installed")
    plain = tmp_path / "plain.hlo"
    plain.write_text("HloModule m\n\nENTRY %e (p: f32[]) -> f32[] {\n  ROOT %p = f32[] parameter(0)\n}\n")
    stale = tmp_path / "stale.hlo"
    stale.write_text(
        "HloModule m\n\n%add (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n"
        "  %b = f32[] parameter(1)\n  ROOT %s = f32[] add(f32[] %a, f32[] %b)\n}\n\n"
        "ENTRY %e (p: f32[4]) -> f32[4] {\n  %p = f32[4]{0} parameter(0)\n"
        "  ROOT %r = f32[4]{0} all-reduce(f32[4]{0} %p), replica_groups={}, to_apply=%add\n}\n"
    )
    entry = fields["entry"].split()
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    ok = subprocess.run([*entry, str(plain)], env=env, capture_output=True, timeout=60)
    assert ok.returncode == 0, ok.stderr
    fail = subprocess.run([*entry, str(plain), str(stale)], env=env, capture_output=True, timeout=60)
    assert fail.returncode == 1 and b"would rewrite" in fail.stderr and stale.name.encode() in fail.stderr
