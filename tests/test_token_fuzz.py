"""Token-level mutation fuzzing, a short seeded run: every mutated module is read (and written
back byte for byte when no pass rewrote it) or rejected with a located error; the line reader
and the one-pass body check agree with the line-by-line reading."""

from __future__ import annotations

import random

import fuzz_corpus
import pytest

TOKEN_MUTATIONS = sorted(fuzz_corpus.TOKEN_WEIGHTS)


def test_a_short_seeded_run_has_no_failure(tmp_path):
    counts, done, _ = fuzz_corpus.fuzz(250, 11, 20.0, None, 20_000, tmp_path, True, tokens=True)
    assert done == 250
    assert not any(counts[k] for k in fuzz_corpus.FAILURES), [p.name for p in tmp_path.iterdir()]
    assert counts["accepted"] >= 50 and counts["rejected"] >= 25  # both outcomes are exercised


@pytest.mark.parametrize("name", TOKEN_MUTATIONS)
def test_each_token_mutation_changes_the_input(name):
    data = (
        b"HloModule m\n\nENTRY e {\n  p = f32[8]{0} parameter(0)\n"
        b"  ar = f32[8]{0} all-reduce(p), replica_groups={}, to_apply=add\n"
        b"  ROOT n = f32[8]{0} reverse(ar), dimensions={0}\n}\n"
    )
    rng = random.Random(5)
    changed = sum(fuzz_corpus.MUTATIONS[name](rng, data) != data for _ in range(20))
    assert changed >= 15


def test_split_and_join_keep_the_tokens():
    data = b"HloModule m\nENTRY e {\n  ROOT c = f32[] constant(1)\n}\n"
    rng = random.Random(1)
    for _ in range(20):
        for name in ("split-line", "join-lines"):
            out = fuzz_corpus.MUTATIONS[name](rng, data)
            assert out.split() == data.split() or b"".join(out.split()) == b"".join(data.split())


TWO_MODULES = (
    b"// RUN: hlo-opt %s\n\nHloModule a\n\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n"
    b"// -----\n\nHloModule b\n\nENTRY e {\n  ROOT p = f32[] parameter(0)\n  oops\n}\n"
    b"// -----\n// CHECK: nothing but comments here\n"
)


def test_files_are_judged_module_by_module_as_they_are(tmp_path):
    """``--files``: a file of XLA's tests holds modules apart by ``// -----`` lines; each is judged
    as it is (no mutation), and a part of only comments is no module."""
    (tmp_path / "two.hlo").write_bytes(TWO_MODULES)
    (tmp_path / "one.hlo").write_bytes(b"HloModule c\n\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n")
    files = fuzz_corpus.given_files([tmp_path])
    assert [p.name for p in files] == ["one.hlo", "two.hlo"]
    pieces = list(fuzz_corpus.modules_of(files))
    assert [p.name for p, _ in pieces] == ["one.hlo", "two.hlo#0", "two.hlo#1"]
    assert pieces[1][1].startswith(b"// RUN") and pieces[2][1].startswith(b"\nHloModule b")
    counts, done, _ = fuzz_corpus.fuzz(0, 0, 20.0, None, 0, None, True, given=files)
    assert done == 3 and counts["accepted"] == 2 and counts["rejected"] == 1


def test_a_reading_with_names_renamed_is_compared_by_the_places_of_operands():
    """XLA renames names repeated across computations (``p`` becomes ``p.1``): the comparison then
    looks at each operand's place, so a renamed reading agrees and an operand read as another does not."""
    ours = {"f": ([("p", "parameter", []), ("n", "negate", ["p"])], "n"),
            "e": ([("p", "parameter", []), ("q", "parameter", []), ("a", "add", ["p", "q"])], "a")}
    xla = {"f": ([("p", "parameter", []), ("n", "negate", ["p"])], "n"),
           "e": ([("p.1", "parameter", []), ("q", "parameter", []), ("a", "add", ["p.1", "q"])], "a")}
    assert fuzz_corpus._unnamed(ours) == fuzz_corpus._unnamed(xla)
    swapped = {**xla, "e": ([("p.1", "parameter", []), ("q", "parameter", []), ("a", "add", ["q", "p.1"])], "a")}
    assert fuzz_corpus._unnamed(ours) != fuzz_corpus._unnamed(swapped)
