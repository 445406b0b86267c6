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
        b"  ar = f32[8]{0} all-reduce(p), replica_groups={}, to_apply=add\n  ROOT n = f32[8]{0} negate(ar)\n}\n"
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
