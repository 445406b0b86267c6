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


# ------------------------------------------------ one reader and one formatter per kind

from hlo_rewrite.opcodes import Kind  # noqa: E402
from hlo_rewrite.values import ValueReadError, format_value, read  # noqa: E402

READS = [
    (Kind.INT, " -3 ", -3),
    (Kind.INT, "/* c */ 7", 7),
    (Kind.INT, "18446744073709551615", -1),  # XLA reads a non-negative integer as 64 bits
    (Kind.INT32, "2147483647", 2147483647),
    (Kind.FLOAT, "1e-3", 0.001),
    (Kind.BOOL, "true", True),
    (Kind.BOOL_LIST, "false", [False]),
    (Kind.BOOL_LIST, "{true, false}", [True, False]),
    (Kind.BRACED_BOOL_LIST, "{true}", [True]),
    (Kind.INT_LIST, "{}", []),
    (Kind.INT_LIST, "{0, 1 /* x */}", [0, 1]),
    (Kind.INT_LIST_LIST, "{{0,1},{2,3}}", [[0, 1], [2, 3]]),
    (Kind.REPLICA_GROUPS, "{{0,1},{2,3}}", [[0, 1], [2, 3]]),
    (Kind.REPLICA_GROUPS, "[2,2]<=[4]", [[0, 1], [2, 3]]),
    (Kind.REPLICA_GROUPS, "[2,2]<=[2,2]T(1,0)", [[0, 2], [1, 3]]),
    (Kind.COMPUTATION, " %add.1", "add.1"),
    (Kind.COMPUTATION_LIST, "{%a, b}", ["a", "b"]),
    (Kind.INSTRUCTION_LIST, "{%x}", ["x"]),
    (Kind.STRING, '"a\\"b"', 'a"b'),
    (Kind.STRING_OR_DICT, '{"k": [1, {"x": "}"}]}', ""),
    (Kind.WORD, "rng_default", "rng_default"),
    (Kind.WINDOW, "{size=3x3 stride=2x2 pad=0_1x1_0}", {"size": [3, 3], "stride": [2, 2], "pad": [(0, 1), (1, 0)],
                                                       "lhs_dilate": [1, 1], "rhs_dilate": [1, 1],
                                                       "rhs_reversal": [0, 0]}),
    (Kind.WINDOW, "{ rhs_dilate=2 /* c */ size=5 pad=-1_2 }", {"size": [5], "stride": [1], "pad": [(-1, 2)],
                                                            "lhs_dilate": [1], "rhs_dilate": [2], "rhs_reversal": [0]}),
    (Kind.WINDOW, "{}", {"size": [], "stride": [], "pad": [], "lhs_dilate": [], "rhs_dilate": [], "rhs_reversal": []}),
    (Kind.DIM_LABELS, "b01f_01io->b01f", "b01f_01io->b01f"),
    (Kind.PADDING, "0_0x1_1_2", "0_0x1_1_2"),
    (Kind.SLICE, "{[0:2], [1:5:2]}", [(0, 2, 1), (1, 5, 2)]),
    (Kind.PRECISION_LIST, "{default,HIGHEST}", ["default", "HIGHEST"]),
    (Kind.FRONTEND_ATTRIBUTES, '{a="x",b={mesh = #sdy.mesh<["x"=8]>}}', None),
    (Kind.STATISTICS, "{visualizing_index=1,stat-1=33}", {"visualizing_index": 1, "stat-1": 33.0}),
    (Kind.METADATA, '{op_name="a" source_line=3}', ""),
    (Kind.BRACED, '{{"v1"}}', ""),
]


@pytest.mark.parametrize("kind,text,value", READS, ids=[f"{k}:{t}" for k, t, _ in READS])
def test_each_kind_has_a_reader(kind, text, value):
    got = read(kind, text)
    if value is not None:
        assert got == value


@pytest.mark.parametrize("kind,text,at", [
    (Kind.INT, "1.5", 0),
    (Kind.INT, "18446744073709551616", 0),
    (Kind.INT32, "2147483648", 0),
    (Kind.BOOL, "True", 0),
    (Kind.INT_LIST, "{1,}", 3),
    (Kind.INT_LIST, "{1 2}", 3),
    (Kind.INSTRUCTION_LIST, "{}", 1),
    (Kind.STRING, "abc", 0),
    (Kind.REPLICA_GROUPS, "[2,2]<=[2,2]", 12),
    (Kind.REPLICA_GROUPS, "[3,2]<=[4]", 0),
    (Kind.WINDOW, "{size=3x3 bogus=1}", 10),
    (Kind.STATISTICS, "{visualizing_index=x}", 19),
    (Kind.BRACED, "{{}", 0),
    (Kind.FRONTEND_ATTRIBUTES, "{a=1}", 3),
])
def test_readers_say_where_a_value_is_wrong(kind, text, at):
    with pytest.raises(ValueReadError) as ei:
        read(kind, text)
    assert ei.value.offset == at, ei.value.message


def test_enumerations_take_their_words_only():
    assert read(Kind.ENUM, "kLoop", "kind") == "kLoop"
    assert read(Kind.ENUM, "API_VERSION_UNSPECIFIED", "api_version") == "API_VERSION_UNSPECIFIED"
    with pytest.raises(ValueReadError, match="is not a value of direction"):
        read(Kind.ENUM, "LESS", "direction")


@pytest.mark.parametrize("kind,value,text", [
    (Kind.INT, -3, "-3"),
    (Kind.BOOL, False, "false"),
    (Kind.BOOL_LIST, [True, False], "{true,false}"),
    (Kind.INT_LIST, [1, 0], "{1,0}"),
    (Kind.REPLICA_GROUPS, [[0, 1], [2, 3]], "{{0,1},{2,3}}"),
    (Kind.COMPUTATION, "add", "%add"),
    (Kind.COMPUTATION_LIST, ["a", "b"], "{%a, %b}"),
    (Kind.STRING, 'a"b\n', '"a\\"b\\n"'),
    (Kind.FRONTEND_ATTRIBUTES, {"b": "2", "a": "1"}, '{a="1",b="2"}'),
])
def test_each_kind_has_a_formatter_that_its_reader_reads_back(kind, value, text):
    assert format_value(kind, value) == text
    assert read(kind, text) == value or kind == Kind.FRONTEND_ATTRIBUTES
    assert format_value(Kind.COMPUTATION, "add", percent=False) == "add"
