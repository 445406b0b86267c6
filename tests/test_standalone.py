"""The repository stands alone: no file outside tests/ and .ci/ points at material it does not have,
and the unit layer needs no jax."""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import JAX_BLOCKED, ORACLE_MARK

REPO = Path(__file__).resolve().parents[1]
OUTSIDE = re.compile(r"\.\./shared|\bSPEC\b|\b[Tt]he seed\b")
JAX_IMPORT = re.compile(r"^\s*(?:import|from)\s+(?:jax|jaxlib|xla_oracle|jax_programs)\b|import(?:orskip|_module)\(\"(?:jax|jaxlib|xla_oracle|jax_programs)\"", re.M)
ORACLE_MODULE = re.compile(r"^\w+ = needs_xla\(\)$", re.M)


def _tracked() -> list[str]:
    run = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True)
    if run.returncode != 0:
        pytest.skip("not a git checkout")
    return run.stdout.splitlines()


def test_no_file_outside_tests_points_at_files_the_repository_does_not_have():
    hits = []
    for name in _tracked():
        if name.startswith(("tests/", ".ci/")):
            continue
        path = REPO / name
        if not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if OUTSIDE.search(line.replace("API_VERSION_UNSPECIFIED", "")):
                hits.append(f"{name}:{n}: {line.strip()}")
    assert hits == []


def test_the_check_finds_what_it_looks_for():
    for line in ("see SPEC §3", "../shared/reference/x.md", "The seed lists", "(`SPEC.md`)"):
        assert OUTSIDE.search(line), line
    for line in ("api_version=API_VERSION_UNSPECIFIED".replace("API_VERSION_UNSPECIFIED", ""), "_SPECIAL_RE", "--seed 0"):
        assert not OUTSIDE.search(line), line


def _test_modules() -> list[Path]:
    return sorted((REPO / "tests").glob("test_*.py"))


def test_every_module_that_uses_xla_is_in_the_oracle_layer():
    """A module that imports jax (or the oracle) declares itself with needs_xla() and the xla mark;
    every other module is the unit layer."""
    for path in _test_modules():
        text = path.read_text(encoding="utf-8")
        uses_xla = bool(JAX_IMPORT.search(text)) or bool(ORACLE_MODULE.search(text))
        if uses_xla:
            assert ORACLE_MODULE.search(text), f"{path.name} imports jax without needs_xla()"
            assert ORACLE_MARK in text, f"{path.name} lacks {ORACLE_MARK}"


@pytest.mark.slow
def test_the_unit_layer_runs_with_jax_unimportable():
    """What ``make test-unit`` runs: everything but the oracle layer, with jax and jaxlib blocked
    (over the repository's own inputs: the real dumps, when present, add time, not coverage of
    this property). ``make test`` runs the unit layer that way, and this test with it: there the
    run it is part of is the proof, and it only checks that jax really is blocked in it."""
    if JAX_BLOCKED:
        for name in ("jax", "jaxlib"):
            with pytest.raises(ImportError, match="blocked by HLO_REWRITE_BLOCK_JAX"):
                importlib.import_module(name)
        return
    env = dict(os.environ, HLO_REWRITE_BLOCK_JAX="1", PYTHONDONTWRITEBYTECODE="1",
               HLO_REWRITE_CORPUS=str(Path(__file__).resolve().parent / "no-such-corpus"))
    me = f"{Path(__file__).resolve()}::test_the_unit_layer_runs_with_jax_unimportable"
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not xla and not slow",
         "--deselect", me, str(REPO / "tests")],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=900,
    )
    tail = run.stdout[-3000:]
    assert run.returncode == 0, tail + run.stderr[-2000:]
    summary = tail.strip().splitlines()[-1]  # pytest's closing line ("N passed, ... in Xs")
    assert re.search(r"\d+ passed", summary) and not re.search(r"\d+ (?:failed|errors?)\b", summary), tail


def test_jax_is_blocked_when_asked(monkeypatch):
    code = "import conftest\ntry:\n    import jax\nexcept ImportError as e:\n    print('blocked', e)\n"
    env = dict(os.environ, HLO_REWRITE_BLOCK_JAX="1")
    run = subprocess.run([sys.executable, "-c", code], cwd=REPO / "tests", env=env, capture_output=True, text=True)
    assert run.stdout.startswith("blocked"), run.stdout + run.stderr
