"""The opcode table and the lexicon: their facts, and the grammar's terminal lists held equal to them."""

from __future__ import annotations

import re

import pytest

from hlo_rewrite import lexicon, opcodes
from hlo_rewrite.opcodes import OPCODES, Kind
from hlo_rewrite.syntax import grammar_text


def _terminal(name: str) -> str:
    m = re.search(rf"^{name}(?:\.\d+)?:\s*/(.*)/\s*$", grammar_text(), re.M)
    assert m is not None, f"terminal {name} not in the grammar"
    return m.group(1)


def _alternatives(pattern: str) -> set[str]:
    m = re.search(r"\(\?:([^()]*)\)", pattern)
    assert m is not None
    return {w.replace("\\-", "-") for w in m.group(1).split("|")}


def test_grammar_element_types_are_the_lexicon():
    assert _alternatives(_terminal("SHAPE_ARRAY")) == set(lexicon.ELEMENT_TYPES)


def test_grammar_opcodes_are_the_table():
    # parameter and constant have terminals of their own
    assert _alternatives(_terminal("OPCODE")) | {"parameter", "constant"} == set(opcodes.OPCODE_NAMES)


_GRAMMAR_KINDS = {
    "A_INTTREE": {Kind.INT_LIST, Kind.INT_LIST_LIST},
    "A_INT": {Kind.INT, Kind.INT32},
    "A_BOOL": {Kind.BOOL},
    "A_COMP": {Kind.COMPUTATION},
    "A_COMPLIST": {Kind.COMPUTATION_LIST, Kind.INSTRUCTION_LIST},
    "A_REPLICA_GROUPS": {Kind.REPLICA_GROUPS},
    "A_STRING": {Kind.STRING},
    "A_ENUM": {Kind.ENUM, Kind.WORD, Kind.DOT_ALGORITHM, Kind.RNG_ALGORITHM},
    "A_BOOL_LIST": {Kind.BOOL_LIST, Kind.BRACED_BOOL_LIST},
}


@pytest.mark.parametrize("terminal", sorted(_GRAMMAR_KINDS))
def test_grammar_attribute_names_are_the_table(terminal):
    kinds = _GRAMMAR_KINDS[terminal]
    in_grammar = _alternatives(_terminal(terminal)) if "(?:" in _terminal(terminal) else {
        _terminal(terminal).rstrip("=")}
    in_table = {n for n, k in opcodes.ATTRIBUTE_KINDS.items() if k in kinds}
    if terminal == "A_STRING":
        in_grammar.add(_terminal("A_EXEC_THREAD").rstrip("="))
    assert in_grammar == in_table


def test_every_grammar_attribute_name_is_known_to_the_table():
    names: set[str] = set()
    for m in re.finditer(r"^A_[A-Z_]+\.\d+:\s*/(.*)=/\s*$", grammar_text(), re.M):
        pat = m.group(1)
        names |= _alternatives(pat) if "(?:" in pat else {pat}
    assert names <= set(opcodes.ATTRIBUTE_KINDS)


def test_arity_from_xla_parser():
    assert OPCODES["negate"].arity == 1
    assert OPCODES["add"].arity == 2
    assert OPCODES["select"].arity == 3
    assert OPCODES["batch-norm-grad"].arity == 5
    assert OPCODES["tuple"].arity is None
    assert OPCODES["all-reduce"].arity is None
    assert OPCODES["iota"].arity == 0


def test_required_and_common_attributes():
    ar = OPCODES["all-reduce"]
    assert ar.attrs["to_apply"].required and ar.attrs["to_apply"].kind == Kind.COMPUTATION
    assert not ar.attrs["replica_groups"].required
    assert OPCODES["all-gather"].attrs["dimensions"].required
    assert not OPCODES["all-to-all"].attrs["dimensions"].required
    for spec in OPCODES.values():
        assert opcodes.COMMON_ATTRS <= set(spec.attrs)
    assert "result_accuracy" in OPCODES["exponential"].attrs
    assert "result_accuracy" not in OPCODES["negate"].attrs
    assert OPCODES["custom-call"].required() == ["custom_call_target"]


def test_callee_attributes():
    assert opcodes.CALLEE_ATTRS == {"to_apply", "calls", "condition", "body", "select", "scatter",
                                    "true_computation", "false_computation"}
    assert opcodes.CALLEE_LIST_ATTRS == {"branch_computations", "called_computations"}


def test_async_spellings():
    assert opcodes.split_async_opcode("custom-call-start") == ("async-start", "custom-call")
    assert opcodes.split_async_opcode("fusion-done") == ("async-done", "fusion")
    assert opcodes.split_async_opcode("all-reduce-start") is None  # an opcode of its own
    assert opcodes.split_async_opcode("allreduce-start") is None
    assert opcodes.spec_of("custom-call-update").name == "async-update"
    assert opcodes.spec_of("le") is None


def test_closest_opcode():
    assert opcodes.closest_opcode("allreduce") == "all-reduce"
    assert opcodes.closest_opcode("zzzzzz") is None


def test_identifier():
    assert lexicon.is_identifier("a.b-c_1")
    assert not lexicon.is_identifier("1a")
    assert not lexicon.is_identifier("%a")
    assert lexicon.NAME_RE.fullmatch("%a.1")
    assert lexicon.ATTRIBUTE_NAME_RE.match("control-predecessors={").group(1) == "control-predecessors"


def test_element_types_cover_xla_primitive_types():
    for t in ("s2", "u2", "s4", "u4", "s1", "u1", "f8e4m3fn", "f8e8m0fnu", "f4e2m1fn", "f6e2m3fn",
              "f6e3m2fn", "token", "opaque", "pred", "c128", "bf16"):
        assert t in lexicon.ELEMENT_TYPES
    assert "tuple" not in lexicon.ELEMENT_TYPES and "f33" not in lexicon.ELEMENT_TYPES


def test_ranges():
    assert lexicon.integer_range("s8") == (-128, 127)
    assert lexicon.integer_range("u32") == (0, 2**32 - 1)
    assert lexicon.float_max("f16") == (65504.0, 65520.0)
    assert lexicon.float_max("f8e4m3fn")[0] == 448.0


def test_booleans_are_lower_case_only():
    assert lexicon.read_bool("true") is True
    assert lexicon.read_bool(" false ") is False
    assert lexicon.read_bool("TRUE") is None
    assert lexicon.read_bool("1") is None


@pytest.mark.parametrize("text", [
    'a={1,"x,}"}, b',
    "a=(1,[2,3]), b",
    "a=/* , */1, b",
    "a='q,', b",
    'a="\\",", b',
    "a=1 // , b\n, b",
])
def test_find_top_level(text):
    assert lexicon.find_top_level(text) == text.rindex(", b")
    assert lexicon.find_top_level("no comma") == 8


@pytest.mark.parametrize("text,message", [
    ("{1,2", "missing '}'"),
    ("(1]", "']' where ')' was expected"),
    ('"abc', "unterminated string"),
    ("/* x", "unterminated comment"),
    ("1}", "unbalanced '}'"),
])
def test_find_top_level_errors(text, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        lexicon.find_top_level(text)


def test_split_and_matching_close():
    assert lexicon.split_top_level("{a,b}, c ,d") == ["{a,b}", " c ", "d"]
    assert lexicon.matching_close("x{a{b}}y", 1) == 7
    assert lexicon.skip_trivia(" /* c */ // d\n x", 0) == 15
