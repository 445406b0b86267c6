"""Modules in XLA's test style (tests/xla_style/): multi-line instructions, comments between
tokens, a whole module on one line. Each must read, print back byte for byte, and convert every
collective of ENTRY."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import read_exact

from hlo_rewrite import parse_module, print_module
from hlo_rewrite.pipeline import run_passes

XLA_STYLE = Path(__file__).resolve().parent / "xla_style"
LAYOUTS = {"multi_line_attributes", "multi_line_send_recv", "comment_inside_instruction_line_end",
           "one_line_module", "comment_between_attributes"}
FILES = sorted(XLA_STYLE.glob("*.hlo"))


def _param(path: Path):
    return pytest.param(path, id=path.stem)


def test_the_cases_are_there():
    assert {p.stem for p in FILES} >= LAYOUTS | {"comments_and_no_percent"}


@pytest.mark.parametrize("path", [_param(p) for p in FILES])
def test_reads_prints_back_and_converts(path: Path) -> None:
    text = read_exact(path)
    module = parse_module(text, str(path))
    assert print_module(module) == text
    module.touch()
    assert print_module(module) == text
    collectives = len(re.findall(r"\b(?:all-reduce|all-gather|reduce-scatter)\(", text))
    reports = run_passes(module, ["fuse-send-recv", "convert-collectives-to-custom-call"])
    out = print_module(module)
    assert len(reports[1].rewritten) == collectives
    if "send(" in text:
        assert len(reports[0].rewritten) == 2
    assert print_module(parse_module(out)) == out
