"""The layouts of ``xla_syntax_cases.py`` read by XLA's own parser (through jaxlib): the same
computations, opcodes, operands and roots as ours; the rejections are XLA's too, but for the
flaws of XLA's own listed in ``docs/decisions.md``; and a short token-level fuzz run finds no
module XLA reads that we reject or read differently."""

from __future__ import annotations

import pytest
from conftest import needs_xla

xla_oracle = needs_xla()
pytestmark = pytest.mark.xla

import fuzz_corpus  # noqa: E402
from xla_syntax_cases import READS, REJECTS, XLA_BUGS  # noqa: E402


@pytest.mark.parametrize("case", sorted(READS))
def test_xla_reads_the_same(case):
    text, expected = READS[case]
    assert fuzz_corpus.xla_skeleton(text) == expected


@pytest.mark.parametrize("case", sorted(REJECTS))
def test_xla_rejects_the_same(case):
    text = REJECTS[case][0]
    if case in XLA_BUGS:
        assert fuzz_corpus.xla_skeleton(text) is not None  # XLA reads it, wrongly
    else:
        assert fuzz_corpus.xla_skeleton(text) is None


def test_xla_misreads_what_we_reject():
    """What the two flaws do: an empty operand read as nothing, an operand named s32 dropped."""
    empty = fuzz_corpus.xla_skeleton(REJECTS["empty_operand"][0])
    assert empty is not None and empty["e"][0][-1] == ("a", "add", ["p0", "p0"])
    dropped = fuzz_corpus.xla_skeleton(REJECTS["operand_named_like_an_element_type"][0])
    assert dropped is not None and dropped["e"][0][-1] == ("t", "tuple", ["e", "c"])


ASYNC_LONG = """HloModule m

%wrapped (p.1: f32[10]) -> f32[20] {
  %p.1 = f32[10]{0} parameter(0)
  ROOT %c = f32[20]{0} custom-call(f32[10]{0} %p.1), custom_call_target="foo"
}

ENTRY %e (p: f32[10]) -> f32[20] {
  %p = f32[10]{0} parameter(0)
  %s = ((f32[10]{0}), f32[20]{0}, s32[]) async-start(%p), calls=%wrapped
  ROOT %d = f32[20]{0} async-done(%s), calls=%wrapped
}
"""

ASYNC_SHORT = """HloModule m

ENTRY %e (p: f32[10]) -> f32[20] {
  %p = f32[10]{0} parameter(0)
  %s = ((f32[10]{0}), f32[20]{0}, s32[]) custom-call-start(%p), custom_call_target="foo"
  ROOT %d = f32[20]{0} custom-call-done(%s)
}
"""


def test_async_ops_read_the_same_in_their_long_and_short_forms():
    """XLA prints an async-start of one instruction in its short form (``custom-call-start``, the
    callee inline) and makes the callee of a short form itself: the comparison takes both forms
    for what they are, and still tells a different reading."""
    reader = fuzz_corpus.XlaReader()
    try:
        assert fuzz_corpus.compare_with_xla(ASYNC_LONG, reader) == ("same", "")
        assert fuzz_corpus.compare_with_xla(ASYNC_SHORT, reader) == ("same", "")
        assert fuzz_corpus.compare_with_xla(ASYNC_SHORT, reader, strict=True) == ("same", "")
    finally:
        reader.close()
    ours = {"e": ([("p", "parameter", []), ("s", "custom-call-start", ["p"]), ("d", "custom-call-done", ["s"])], "d")}
    xla = {"e": ([("p", "parameter", []), ("s", "async-start", ["p"]), ("d", "async-done", ["s"])], "d"),
           "async_wrapped": ([("x", "parameter", [])], "")}
    normal = fuzz_corpus._without_async_sugar
    assert normal(ours) == normal(xla, ours) == {"e": xla["e"]}
    other = {"e": ([("p", "parameter", []), ("s", "async-start", ["p"]), ("d", "async-done", ["p"])], "d")}
    assert normal(other, ours) != normal(ours)


DOT = """HloModule m
ENTRY e {
  p = f32[2,3] parameter(0)
  q = u32[] parameter(1)
  ROOT d = f32[2,2] dot(p, pEXTRA), lhs_contracting_dims={1}, rhs_contracting_dims={1}
}
"""


def test_operands_xla_drops_are_told_apart_from_a_different_reading():
    """XLA's parser builds a dot from its first two operands and drops the rest: the comparison
    names that, and a dot whose operands differ otherwise stays a different reading."""
    reader = fuzz_corpus.XlaReader()
    try:
        for strict in (False, True):
            assert fuzz_corpus.compare_with_xla(DOT.replace("EXTRA", ""), reader, strict=strict) == ("same", "")
            assert fuzz_corpus.compare_with_xla(DOT.replace("EXTRA", ", q"), reader, strict=strict)[0] == "xla-drops"
    finally:
        reader.close()
    ours = {"e": ([("p", "parameter", []), ("d", "dot", ["p", "q", "p"])], "d")}
    assert fuzz_corpus._compare_skeletons(fuzz_corpus._as_xla_builds(ours),
                                          {"e": ([("p", "parameter", []), ("d", "dot", ["p", "p"])], "d")})[0] == "misread"


def test_the_comparison_with_xla_tells_which_computation_is_entry():
    """The ENTRY computation is part of what is compared: XLA's is the one our reading names."""
    reader = fuzz_corpus.XlaReader()
    try:
        assert fuzz_corpus.compare_with_xla(READS["entry_at_the_end_of_the_module_line"][0], reader) == ("same", "")
    finally:
        reader.close()
    comps = {"c1": ([("a", "constant", [])], "a"), "c2": ([("b", "constant", [])], "b")}
    kind, detail = fuzz_corpus._compare_skeletons({**comps, fuzz_corpus.ENTRY_KEY: ([], "c2")},
                                                  {**comps, fuzz_corpus.ENTRY_KEY: ([], "c1")})
    assert kind == "misread" and "ENTRY" in detail


def test_a_short_token_fuzz_run_agrees_with_xla(tmp_path):
    xla_counts: dict = __import__("collections").Counter()
    counts, done, _ = fuzz_corpus.fuzz(120, 3, 30.0, None, 20_000, tmp_path, True, tokens=True, xla=True,
                                       xla_counts=xla_counts)
    assert not any(counts[k] for k in fuzz_corpus.FAILURES)
    assert not any(xla_counts[k] for k in fuzz_corpus.XLA_FAILURES), [p.name for p in tmp_path.iterdir()]
    assert xla_counts["same"] >= 20


def test_a_short_token_fuzz_run_in_strict_mode_agrees_with_xla(tmp_path):
    xla_counts: dict = __import__("collections").Counter()
    counts, done, _ = fuzz_corpus.fuzz(120, 5, 30.0, None, 20_000, tmp_path, True, tokens=True, xla=True,
                                       xla_counts=xla_counts, strict=True)
    assert not any(counts[k] for k in fuzz_corpus.FAILURES)
    assert not any(xla_counts[k] for k in fuzz_corpus.XLA_FAILURES), [p.name for p in tmp_path.iterdir()]
    assert xla_counts["same"] >= 20 and xla_counts["both-reject"] >= 20


def test_xla_reads_the_lines_a_pass_gives_to_instructions_written_as_operands():
    """After convert-collectives rewrites an all-reduce whose operand is written as an instruction,
    that instruction stands on a line of its own under XLA's name: XLA reads the same module."""
    from test_xla_syntax import NESTED
    from xla_syntax_cases import skeleton

    from hlo_rewrite import parse_module, print_module
    from hlo_rewrite.passes import PassOptions
    from hlo_rewrite.pipeline import run_passes

    module = parse_module(NESTED, "m.hlo")
    run_passes(module, ["convert-collectives-to-custom-call"], PassOptions())
    out = print_module(module)
    assert fuzz_corpus.xla_skeleton(out) == skeleton(parse_module(out, "out.hlo"))


def test_xla_reads_a_rewritten_text_that_is_one_instruction_as_one_instruction():
    from xla_syntax_cases import skeleton

    from hlo_rewrite import parse_module, print_module
    from hlo_rewrite.passes import PassOptions
    from hlo_rewrite.pipeline import run_passes

    module = parse_module("ag = f32[8] all-gather(f32[4] p), dimensions={0}, replica_groups={}", "one.hlo")
    run_passes(module, ["convert-collectives-to-custom-call"], PassOptions())
    out = print_module(module)
    assert fuzz_corpus.xla_skeleton(out) == skeleton(parse_module(out, "out.hlo"))


def test_xla_reads_the_fused_send_and_recv_with_the_comments_of_their_attributes():
    from xla_syntax_cases import skeleton

    from hlo_rewrite import parse_module, print_module
    from hlo_rewrite.passes import DEFAULT_PIPELINE, PassOptions
    from hlo_rewrite.pipeline import run_passes

    for case in ("comments_in_the_attributes_of_a_send_and_recv", "line_comment_text_inside_frontend_attributes"):
        module = parse_module(READS[case][0], "m.hlo")
        run_passes(module, DEFAULT_PIPELINE, PassOptions())
        out = print_module(module)
        assert "AwsNeuronSendRecv" in out
        assert fuzz_corpus.xla_skeleton(out) == skeleton(parse_module(out, "out.hlo"))
