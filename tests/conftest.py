"""Shared test support: where the inputs are, the two layers, and the golden update mode.

See ``tests/README.md``. In short:

- ``CORPUS``: the directory of real HLO dumps when there is one (``HLO_REWRITE_CORPUS``, default
  ``<repo>/../shared/corpus``), else the repository's own inputs (``tests/inputs``), which use the
  same layout for their JAX part (``jax/allreduce/...``). ``HAVE_CORPUS`` says which.
  ``corpus_files()`` lists the ``*.hlo`` files under ``CORPUS``; ``input_files()`` lists the
  repository's own inputs and, when present, the real dumps too.
- the ``corpus`` fixture: the real dumps, for tests that need a particular real file; skips when
  there are none.
- layers: a test module that uses XLA (jax/jaxlib) starts with ``xo = needs_xla()`` and
  ``pytestmark = pytest.mark.xla``; every other module is the unit layer and must not import jax.
  ``HLO_REWRITE_BLOCK_JAX=1`` makes jax and jaxlib unimportable (``make test-unit`` sets it).
- ``--update-golden``: rewrite the expected outputs of ``tests/golden`` (refused under ``CI``).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

import pytest

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
INPUTS = TESTS / "inputs"
GOLDEN = TESTS / "golden"
sys.path.insert(0, str(TESTS))  # test-support modules such as xla_oracle

BLOCKED = ("jax", "jaxlib")
NO_XLA_REASON = "jax/jaxlib not installed: XLA oracle tests need them (pip install '.[test]')"


class _BlockJax(importlib.abc.MetaPathFinder):
    """Makes jax and jaxlib unimportable (the unit layer must not need them)."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {fullname!r} (blocked by HLO_REWRITE_BLOCK_JAX)", name=fullname)
        return None


JAX_BLOCKED = os.environ.get("HLO_REWRITE_BLOCK_JAX") == "1"
if JAX_BLOCKED:
    sys.meta_path.insert(0, _BlockJax())

#: how a module of the oracle layer marks all of its tests
ORACLE_MARK = "pytestmark = pytest.mark.xla"


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """With jax blocked, a module of the oracle layer is not collected: all its tests are marked
    xla, so it holds none of the unit layer, and importing it would only count it as skipped."""
    if JAX_BLOCKED and collection_path.suffix == ".py" and collection_path.name.startswith("test_"):
        return ORACLE_MARK in collection_path.read_text(encoding="utf-8") or None
    return None


def have_xla() -> bool:
    """jax and jaxlib can be imported (without importing them)."""
    try:
        return all(importlib.util.find_spec(name) is not None for name in BLOCKED)
    except ImportError:
        return False


def needs_xla() -> ModuleType:
    """``xla_oracle`` for an oracle test module; skips the whole module when jax is missing."""
    if not have_xla():
        pytest.skip(NO_XLA_REASON, allow_module_level=True)
    return importlib.import_module("xla_oracle")


#: a small valid module with one all-reduce in ENTRY (the convert pass rewrites it)
ALLREDUCE_MODULE = """HloModule m

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %a, f32[] %b)
}

ENTRY %main (p: f32[8]) -> f32[8] {
  %p = f32[8]{0} parameter(0)
  ROOT %ar = f32[8]{0} all-reduce(f32[8]{0} %p), replica_groups={{0,1}}, to_apply=%add
}
"""


def corpus_dir() -> Path:
    """Where the real dumps are expected: ``HLO_REWRITE_CORPUS``, else ``<repo>/../shared/corpus``."""
    env = os.environ.get("HLO_REWRITE_CORPUS") or os.environ.get("HLO_CORPUS")
    return Path(env) if env else REPO.parent / "shared" / "corpus"


REAL_CORPUS = corpus_dir()
HAVE_CORPUS = REAL_CORPUS.is_dir()
CORPUS = REAL_CORPUS if HAVE_CORPUS else INPUTS
NO_CORPUS_REASON = f"needs the real dumps (corpus not found at {REAL_CORPUS}; set HLO_REWRITE_CORPUS)"


def corpus_files() -> list[Path]:
    """The ``*.hlo`` files under ``CORPUS`` (the real dumps, or the repository's inputs)."""
    return sorted(CORPUS.rglob("*.hlo"))


def input_files() -> list[Path]:
    """The repository's own inputs, then the real dumps when present."""
    files = sorted(INPUTS.rglob("*.hlo"))
    return files + (sorted(REAL_CORPUS.rglob("*.hlo")) if HAVE_CORPUS else [])


def input_id(path: Path) -> str:
    """A short, stable test id for a file of ``input_files()``."""
    for root, tag in ((INPUTS, "inputs"), (REAL_CORPUS, "corpus")):
        if path.is_relative_to(root):
            return f"{tag}/{path.relative_to(root)}"
    return str(path)


def read_exact(path: Path) -> str:
    """The file's text with line endings exactly as stored."""
    with open(path, encoding="utf-8", newline="") as fh:
        return fh.read()


@pytest.fixture(scope="session")
def corpus() -> Path:
    if not HAVE_CORPUS:
        pytest.skip(NO_CORPUS_REASON)
    return REAL_CORPUS


# ------------------------------------------------------------------ golden update mode


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite the expected outputs under tests/golden from the tool's output (review the diff)",
    )


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("--update-golden") and os.environ.get("CI"):
        raise pytest.UsageError("--update-golden is refused under CI: expectations change only in a reviewed commit")


@pytest.fixture(scope="session")
def update_golden(request: pytest.FixtureRequest) -> bool:
    """True under ``pytest --update-golden``."""
    return bool(request.config.getoption("--update-golden"))
