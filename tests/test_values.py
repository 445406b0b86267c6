"""The grammar-free readings of attribute values equal the grammar's readings."""

from __future__ import annotations

import pytest
from conftest import CORPUS, corpus_files, read_exact
from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_rewrite import HloError, parse_module, syntax
from hlo_rewrite.values import UNREAD, read_value

NAMES = ("channel_id", "replica_groups", "dimensions", "use_global_device_ids", "constrain_layout",
         "is_host_transfer")


def grammar_value(name: str, text: str) -> object:
    """What the grammar reads for ``name=text`` (or UNREAD when it rejects it)."""
    try:
        parsed = syntax.parse_instruction(f"c = all-reduce(), {name}={text}")
    except HloError:
        return UNREAD
    return parsed.attrs[0].value


def corpus_values() -> list[tuple[str, str]]:
    seen: set[tuple[str, str]] = set()
    for path in corpus_files():
        try:
            module = parse_module(read_exact(path))
        except HloError:
            continue
        for comp in module.computations:
            for name, _op, _line in comp.find(frozenset({"all-reduce", "all-gather", "reduce-scatter", "send",
                                                          "recv", "custom-call", "concatenate"})):
                instr = comp.get(name)
                assert instr is not None
                for key, value in instr.attrs:
                    if key in NAMES:
                        seen.add((key, value))
    return sorted(seen)


CORPUS_VALUES = corpus_values() if CORPUS.is_dir() else []


@pytest.mark.skipif(not CORPUS.is_dir(), reason="corpus not found")
def test_the_corpus_has_every_kind_of_value():
    kinds = {k for k, _ in CORPUS_VALUES}
    assert {"channel_id", "replica_groups", "dimensions", "use_global_device_ids"} <= kinds
    assert any(v.startswith("[") for k, v in CORPUS_VALUES if k == "replica_groups")  # iota form


@pytest.mark.parametrize("name, text", CORPUS_VALUES)
def test_corpus_values_read_as_the_grammar_reads_them(name, text):
    quick = read_value(name, text)
    assert quick is not UNREAD, f"{name}={text} is a plain spelling and should be read without the grammar"
    assert quick == grammar_value(name, text)


_ints = st.lists(st.integers(0, 40), max_size=5)
_ws = st.sampled_from(["", " ", "  ", "\t"])


@st.composite
def spelled(draw) -> tuple[str, str]:
    name = draw(st.sampled_from(NAMES))
    w = draw(_ws)
    if name == "channel_id":
        return name, f"{w}{draw(st.integers(-3, 10**6))}{w}"
    if name in ("use_global_device_ids", "constrain_layout", "is_host_transfer"):
        return name, draw(st.sampled_from(["true", "false", "True", "1", " true"]))
    if name == "dimensions":
        return name, "{" + f",{w}".join(map(str, draw(_ints))) + "}"
    if draw(st.booleans()):
        groups = draw(st.lists(_ints, max_size=4))
        return name, "{" + f",{w}".join("{" + f",{w}".join(map(str, g)) + "}" for g in groups) + "}"
    dims = draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
    total = 1
    for d in dims:
        total *= d
    size = draw(st.sampled_from([s for s in range(1, total + 1) if total % s == 0]))
    text = f"[{total // size},{w}{size}]{w}<={w}[{','.join(map(str, dims))}]"
    if draw(st.booleans()):
        perm = draw(st.permutations(list(range(len(dims)))))
        if draw(st.booleans()):
            perm = perm[:-1]  # not a permutation of all dimensions: the grammar's error
        text += f"T({','.join(map(str, perm))})"
    return name, text


@settings(max_examples=400, deadline=None)
@given(spelled())
def test_generated_values_read_as_the_grammar_reads_them(case):
    name, text = case
    quick = read_value(name, text)
    if quick is not UNREAD:  # an unread spelling goes to the grammar, which is then the reading
        assert quick == grammar_value(name, text)
