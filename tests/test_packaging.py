"""A plain (non-editable) wheel install works: the grammar ships inside the package."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_wheel_contains_grammar_and_runs_outside_the_repo(tmp_path):
    wheels = tmp_path / "wheels"
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(wheels), str(REPO)],
        capture_output=True, text=True,
    )
    if build.returncode != 0:
        pytest.skip(f"cannot build a wheel here: {build.stderr[-500:]}")
    (wheel,) = wheels.glob("hlo_rewrite-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "hlo_rewrite/grammar/hlo.lark" in names
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--quiet", "--target", str(target), str(wheel)],
        check=True,
    )
    # run from an empty directory with only the installed copy (plus the venv's
    # dependencies) importable, so the repository's sources cannot be used
    env = dict(os.environ, PYTHONPATH=str(target))
    code = (
        "import hlo_rewrite, hlo_rewrite.syntax as s, sys;"
        "assert hlo_rewrite.__file__.startswith(sys.argv[1]), hlo_rewrite.__file__;"
        "assert str(s.grammar_path()).startswith(sys.argv[1]), s.grammar_path();"
        "m = s.parse_module('ENTRY e {\\n  ROOT a = f32[] parameter(0)\\n}\\n');"
        "print(m.computations[0].instructions[0].opcode)"
    )
    run = subprocess.run(
        [sys.executable, "-c", code, str(target)],
        cwd=tmp_path, env=env, capture_output=True, text=True,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "parameter"
