"""The quick readings of attribute text agree with the full attribute splitter."""

from __future__ import annotations

from conftest import read_exact
from test_roundtrip import COMPLETE

from hlo_rewrite import parse_module
from hlo_rewrite.attributes import called_computation_names, quick_called_computations, split_attributes


def test_quick_callees_agree_with_splitter_on_corpus(corpus):
    checked = 0
    for path in COMPLETE:
        module = parse_module(read_exact(path), str(path))
        for comp in module.computations:
            for instr in comp.instructions:
                text = instr.attrs_text or ""
                quick = quick_called_computations(text)
                full = called_computation_names(split_attributes(text))
                if quick is not None:
                    assert quick == full, (path, instr.name)
                    checked += bool(full)
    assert checked > 1000


def test_quick_callees_refuse_what_they_cannot_vouch_for():
    assert quick_called_computations(", calls=%a, %b") is None
    assert quick_called_computations(', metadata={op_name="x, to_apply=%y"}, to_apply=%add') is None
    assert quick_called_computations(', metadata={op_name="calls=%x"}') is None
    assert quick_called_computations(", condition=%c, body=%b") == ["c", "b"]
    assert quick_called_computations(", branch_computations={%a, %b}") == ["a", "b"]
    assert quick_called_computations(", dimensions={0}") == []
