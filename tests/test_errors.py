"""Bad input gives a located error of the tool's own type, never a traceback."""

from __future__ import annotations

import pytest
from conftest import ALLREDUCE_MODULE, read_exact
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hlo_rewrite import HloError, parse_module

GOOD = ALLREDUCE_MODULE


def error_of(text: str, filename: str = "bad.hlo") -> HloError:
    with pytest.raises(HloError) as info:
        parse_module(text, filename)
    err = info.value
    assert err.filename == filename
    assert err.line is not None and err.line >= 1
    assert err.column is not None and err.column >= 1
    assert err.render().startswith(f"{filename}:{err.line}:{err.column}: error: ")
    return err


def test_good_module_parses():
    assert parse_module(GOOD).entry.root.opcode == "all-reduce"


def test_empty_input():
    err = error_of("")
    assert "empty input" in err.message
    err = error_of("  \n\n")
    assert "empty input" in err.message


def test_truncated_module():
    err = error_of(GOOD[: GOOD.index("ROOT %ar")])
    assert "not closed" in err.message
    assert err.line == 9  # the ENTRY header


def test_truncated_inside_instruction():
    cut = GOOD.index("to_apply=%add") - 2
    err = error_of(GOOD[:cut] + "{{0,\n")
    assert err.line == 11


def test_unbalanced_braces():
    err = error_of(GOOD.replace("replica_groups={{0,1}}", "replica_groups={{0,1}"))
    assert "never closed" in err.message or "expected" in err.message
    assert err.line == 11


def test_too_many_closing_brackets():
    err = error_of(GOOD.replace("replica_groups={{0,1}}", "replica_groups={{0,1}}}"))
    assert err.line == 11


def test_bad_shape():
    err = error_of(GOOD.replace("%p = f32[8]{0} parameter(0)", "%p = f33[8]{0} parameter(0)"))
    assert err.line == 10


def test_undefined_operand():
    err = error_of(GOOD.replace("all-reduce(f32[8]{0} %p)", "all-reduce(f32[8]{0} %q)"))
    assert "operand 'q' of 'ar' is not defined" in err.message
    assert err.line == 11
    assert err.source_line.strip().startswith("ROOT %ar")
    assert err.source_line[err.column - 1 :].startswith("q")


def test_undefined_computation():
    err = error_of(GOOD.replace("to_apply=%add", "to_apply=%mul"))
    assert "'ar' calls computation 'mul', which is not defined" in err.message
    assert err.line == 11
    assert err.source_line[err.column - 1 :].startswith("mul")


def test_two_roots():
    err = error_of(GOOD.replace("  %b = f32[] parameter(1)", "  ROOT %b = f32[] parameter(1)"))
    assert "a second ROOT in computation 'add'" in err.message
    assert err.line == 6


def test_duplicate_instruction():
    err = error_of(GOOD.replace("%b = f32[] parameter(1)", "%a = f32[] parameter(1)"))
    assert "defined twice" in err.message and err.line == 5


def test_two_entries():
    err = error_of(GOOD.replace("%add (a: f32[]", "ENTRY %add (a: f32[]"))
    assert "ENTRY" in err.message


def test_binary_garbage():
    err = error_of("\x7fELF\x02\x01\x01\x00\x00\x00binary")
    assert "NUL byte" in err.message


def test_nul_byte_inside_module_is_located():
    text = GOOD.replace("%b = f32[]", "%b = f32\x00[]")
    err = error_of(text)
    assert err.line == 5 and err.column == 11


def test_garbage_text():
    err = error_of("this is not hlo at all\n")
    assert err.line == 1


def test_render_shows_source_and_caret():
    err = error_of(GOOD.replace("all-reduce(f32[8]{0} %p)", "all-reduce(f32[8]{0} %q)"))
    lines = err.render().split("\n")
    assert lines[1].strip().startswith("ROOT %ar")
    assert lines[2].index("^") == lines[1].index("%q") + 1


MUTATION_SOURCES = [
    "torch-neuronx/gpt/gpt2_tp=2.hlo",
    "jax/rs_concat/concat-rs_2ops_scatter0_concat1_f32.pre.hlo",
    "jax/send_recv/send-recv_decomposed-collective-permute.xla.hlo",
]


@pytest.fixture(scope="module")
def sources(corpus):
    return [read_exact(corpus / p) for p in MUTATION_SOURCES]


CHUNKS = ["{", "}", "(", ")", "[", "]", ",", "=", "%", '"', "ROOT ", "\n", "/*", "//", "\x00", "f32[", "-> ", ":", "\r"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutations_raise_only_located_hlo_errors(sources, data):
    """Random edits of real modules either parse or raise HloError with a location."""
    text = data.draw(st.sampled_from(sources))
    for _ in range(data.draw(st.integers(1, 4))):
        pos = data.draw(st.integers(0, len(text)))
        kind = data.draw(st.sampled_from(["delete", "insert", "truncate", "duplicate"]))
        if kind == "delete":
            end = min(len(text), pos + data.draw(st.integers(1, 40)))
            text = text[:pos] + text[end:]
        elif kind == "insert":
            text = text[:pos] + data.draw(st.sampled_from(CHUNKS)) + text[pos:]
        elif kind == "truncate":
            text = text[:pos]
        else:
            end = min(len(text), pos + data.draw(st.integers(1, 80)))
            text = text[:pos] + text[pos:end] + text[pos:]
    try:
        module = parse_module(text, "mutant.hlo")
    except HloError as err:
        assert err.filename == "mutant.hlo"
        assert err.line is not None
        err.render()
    else:
        from hlo_rewrite import print_module

        assert print_module(module) == text


def test_callee_named_inside_a_string_is_not_an_error():
    text = GOOD.replace(
        "to_apply=%add\n",
        'to_apply=%add, metadata={op_name="x, to_apply=%nope, branch_computations={%gone}"}\n',
    )
    assert parse_module(text).entry.root.to_apply == "add"


def test_second_fusion_callee_is_checked():
    text = (
        "HloModule m\n\n%f (a: f32[]) -> f32[] {\n  ROOT %a = f32[] parameter(0)\n}\n\n"
        "ENTRY %e (p: f32[]) -> f32[] {\n  %p = f32[] parameter(0)\n"
        "  ROOT %fu = f32[] fusion(%p), kind=kLoop, calls=%f, %g\n}\n"
    )
    err = error_of(text)
    assert "calls computation 'g', which is not defined" in err.message
    assert err.line == 9


def test_undefined_control_predecessor():
    err = error_of(GOOD.replace("to_apply=%add\n", "to_apply=%add, control-predecessors={%p, %ghost}\n"))
    assert "control predecessor 'ghost'" in err.message
    assert err.line == 11


def test_unterminated_comment_in_attributes():
    err = error_of(GOOD.replace("to_apply=%add\n", "to_apply=%add /* no end\n"))
    assert "unterminated comment" in err.message and err.line == 11


def test_garbage_in_dimensions_or_layout_is_located():
    for bad in ("f32[8,x(]{0}", "f32[8]{0),1}"):
        err = error_of(GOOD.replace("%p = f32[8]{0} parameter(0)", f"%p = {bad} parameter(0)"))
        assert err.line == 10, bad
