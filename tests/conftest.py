"""Shared test fixtures: where the corpus is, and the corpus files by kind."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
sys.path.insert(0, str(TESTS))  # test-support modules such as xla_oracle


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
    env = os.environ.get("HLO_CORPUS")
    return Path(env) if env else REPO.parent / "shared" / "corpus"


CORPUS = corpus_dir()


def corpus_files() -> list[Path]:
    return sorted(CORPUS.rglob("*.hlo")) if CORPUS.is_dir() else []


def read_exact(path: Path) -> str:
    """The file's text with line endings exactly as stored."""
    with open(path, encoding="utf-8", newline="") as fh:
        return fh.read()


@pytest.fixture(scope="session")
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.skip(f"corpus not found at {CORPUS}")
    return CORPUS
