"""The grammar of record (grammar/hlo.lark) and hlo_rewrite.syntax."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import CORPUS, corpus_files
from hypothesis import given, settings
from hypothesis import strategies as st
from lark import Lark

from hlo_rewrite import syntax
from hlo_rewrite.errors import HloParseError

CORPUS_FILES = corpus_files()

# Hand-edited fragments in the corpus: they are not valid HLO, and the grammar
# must say so (file relative to the corpus -> (line, message substring)).
FRAGMENTS = {
    # an ENTRY header followed by nested computations
    "torch-neuronx-wenboqian/baseline_bert_0.hlo": (3, "expected '=' after '%MaxComputation.1150', found '('"),
    "torch-neuronx-wenboqian/gpt2_tp=2_n_layer=2_output1.hlo": (4, "expected '=' after '%all-reduce.184.Reducer.189'"),
    # computation headers with no bodies, one after the other
    "torch-neuronx-wenboqian/gpt2_tp=1_n_layer=2_output0.txt-src.hlo": (
        2,
        "expected '=' after '%reduce.131.MaxFunc.136'",
    ),
    "torch-neuronx-wenboqian/gpt2_tp=1_n_layer=2_output1.txt-src.hlo": (
        2,
        "expected '=' after '%reduce.282.MaxFunc.287'",
    ),
    "torch-neuronx-wenboqian/gpt2_tp=1_n_layer=2_output2.txt-src.hlo": (
        2,
        "expected '=' after '%reduce.131.MaxFunc.136'",
    ),
    "torch-neuronx-wenboqian/gpt2_tp=2_n_layer=2_output0.txt-src.hlo": (
        2,
        "expected '=' after '%reduce.131.MaxFunc.136'",
    ),
    "torch-neuronx-wenboqian/gpt2_tp=2_n_layer=2_output1.txt-src.hlo": (
        2,
        "expected '=' after '%all-reduce.217.Reducer.222'",
    ),
    "torch-neuronx-wenboqian/gpt2_tp=2_n_layer=2_output2.txt-src.hlo": (
        2,
        "expected '=' after '%reduce.131.MaxFunc.136'",
    ),
    # an operand list with a stray shape
    "torch-neuronx-wenboqian/gpt2_tp=2_n_layer=2_output0.hlo": (109, "expected ')' or ',' after operand, found 'pred'"),
    # bodies cut off before their closing brace
    "torch-neuronx-wenboqian/llama_fuse_qkv_correct_slice.hlo": (12, "found end of input"),
    "torch-neuronx-wenboqian/llama_fuse_qkv_wrong_slice.hlo": (13, "found end of input"),
}


def instr(text: str, **kw) -> syntax.InstructionSyntax:
    return syntax.parse_instruction(text, **kw)


def attr(text: str, name: str):
    a = instr(text).attr(name)
    assert a is not None, name
    return a


# ------------------------------------------------------------------ the grammar


def test_grammar_is_lalr_without_conflicts_or_collisions():
    pytest.importorskip("interegular")  # Lark's strict mode needs it
    text = syntax.grammar_text()
    Lark(text, parser="lalr", strict=True)
    Lark(text, parser="lalr", lexer="contextual", strict=True, start=["start", "single_instruction"])


def test_grammar_path_points_at_the_file():
    p = syntax.grammar_path()
    assert p.name == "hlo.lark" and p.is_file()


# ---------------------------------------------------------------------- corpus


@pytest.mark.skipif(not CORPUS_FILES, reason="corpus not found (set HLO_CORPUS)")
@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: str(p.relative_to(CORPUS)))
def test_corpus_file(path: Path):
    rel = path.relative_to(CORPUS).as_posix()
    text = path.read_bytes().decode("utf-8")
    if rel in FRAGMENTS:
        line, message = FRAGMENTS[rel]
        with pytest.raises(HloParseError) as ei:
            syntax.parse_module(text, filename=str(path))
        e = ei.value
        assert message in e.message
        assert e.line == line
        assert e.filename == str(path)
        assert e.source_line == text.splitlines()[line - 1]
        return
    m = syntax.parse_module(text, filename=str(path))
    assert m.computations
    assert all(c.instructions for c in m.computations)
    # the parsed instruction count matches a line-level count
    n = sum(len(c.instructions) for c in m.computations)
    assert n == sum(1 for ln in text.splitlines() if " = " in ln and not ln.startswith("HloModule"))


@pytest.mark.skipif(not CORPUS_FILES, reason="corpus not found")
def test_corpus_instructions_one_by_one():
    """parse_instruction on single lines agrees with the whole-module parse."""
    path = CORPUS / "jax" / "send_recv" / "send-recv_decomposed-collective-permute.xla.hlo"
    if not path.exists():
        pytest.skip("file missing")
    text = path.read_text()
    whole = [i for c in syntax.parse_module(text).computations for i in c.instructions]
    lines = text.splitlines()
    for w in whole:
        one = syntax.parse_instruction(lines[w.line - 1], line=w.line)
        assert one == w


# ------------------------------------------------------------------ structure


MODULE = """\
HloModule m.1, is_scheduled=true, input_output_alias={ {0}: (3, {}, must-alias), {1}: (2, {}) }, buffer_donor={ (0, {}), (1, {}) }, entry_computation_layout={(f32[2]{0}, (s32[], u32[]))->f32[2]{0}}, allow_spmd_sharding_propagation_to_parameters={false,true}, allow_spmd_sharding_propagation_to_output=true, replica_count=2, num_partitions=4, frontend_attributes={a="b",c={d}}, some_future_thing={x=[1]<=[1] {y}}

FileNames
1 "path/a.py"
FunctionNames
1 "fn"
FileLocations
1 {file_name_id=1 function_name_id=1 line=10 end_line=10 column=2 end_column=9}
StackFrames
1 {file_location_id=1 parent_frame_id=0}

%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %add = f32[] add(f32[] %x, f32[] %y)
}, execution_thread="other"

cond {
  p = (s32[], f32[2]) parameter(0)
  g = s32[] get-tuple-element(p), index=0
  c = s32[] constant(10)
  ROOT lt = pred[] compare(g, c), direction=LT
}

ENTRY %main (p0.1: f32[2], p1: (s32[], u32[])) -> f32[2] {
  %p0.1 = f32[2]{0} parameter(0), metadata={op_type="a" op_name="b" source_file="x.py" source_line=3 stack_frame_id=1}
  %p1 = (s32[], u32[]) parameter(1)
  %ar = f32[2]{0} all-reduce(%p0.1), channel_id=1, replica_groups={{0,1}}, to_apply=%add
  ROOT %w = f32[2]{0} add(%ar, /*index=1*/%ar) // trailing comment
}
"""


def test_module_structure():
    m = syntax.parse_module(MODULE, filename="m.hlo")
    assert m.name == "m.1"
    names = [a.name for a in m.header_attrs]
    assert names == [
        "is_scheduled",
        "input_output_alias",
        "buffer_donor",
        "entry_computation_layout",
        "allow_spmd_sharding_propagation_to_parameters",
        "allow_spmd_sharding_propagation_to_output",
        "replica_count",
        "num_partitions",
        "frontend_attributes",
        "some_future_thing",
    ]
    h = {a.name: a for a in m.header_attrs}
    assert h["is_scheduled"].value is True
    assert h["replica_count"].value == 2 and h["num_partitions"].value == 4
    assert h["input_output_alias"].value_text == "{ {0}: (3, {}, must-alias), {1}: (2, {}) }"
    assert h["entry_computation_layout"].value_text == "{(f32[2]{0}, (s32[], u32[]))->f32[2]{0}}"
    assert h["frontend_attributes"].value == {"a": "b", "c": "{d}"}
    assert h["some_future_thing"].value_text == "{x=[1]<=[1] {y}}"
    assert h["is_scheduled"].line == 1 and h["is_scheduled"].column == 16
    comps = m.computations
    assert [(c.name, c.is_entry) for c in comps] == [("add", False), ("cond", False), ("main", True)]
    assert comps[0].execution_thread == "other"
    assert comps[0].line == 12
    main = comps[2]
    assert [i.name for i in main.instructions] == ["p0.1", "p1", "ar", "w"]
    w = main.instructions[3]
    assert w.is_root and w.operands == ["ar", "ar"] and w.line == 29 and w.column == 3
    assert main.instructions[0].parameter_number == 0
    assert main.instructions[1].shape == "(s32[], u32[])"
    assert comps[1].instructions[2].literal_text == "10"
    assert comps[1].instructions[3].attrs[0].name == "direction"


def test_crlf_and_module_without_header():
    text = "ENTRY e {\r\n  a = f32[] parameter(0)\r\n  ROOT b = f32[] negate(a)\r\n}\r\n"
    m = syntax.parse_module(text)
    assert m.name is None and m.computations[0].is_entry
    b = m.computations[0].instructions[1]
    assert (b.line, b.column, b.operands) == (3, 3, ["a"])


def test_instruction_fields_and_operand_forms():
    i = instr("  ROOT %t = (f32[2,4]{1,0}, (s32[], token[])) tuple(f32[2,4]{1,0} %a, (s32[], token[]) %b)\n")
    assert i.is_root and i.name == "t" and i.opcode == "tuple"
    assert i.shape == "(f32[2,4]{1,0}, (s32[], token[]))"
    assert i.operands == ["a", "b"]
    assert i.column == 3
    i = instr("x = add(a, b)")  # shape omitted
    assert i.shape is None and i.operands == ["a", "b"]
    i = instr("x=f32[] add(a, b)")  # name glued to '='
    assert i.name == "x"
    i = instr("x = f32[] get-tuple-element(t#0#1)")
    assert i.operands == ["t#0#1"]
    i = instr("a = token[] after-all()")
    assert i.operands == [] and i.shape == "token[]"
    i = instr('%x = f32[<=10,?]{1,0} custom-call(%a, /* c */ %b), custom_call_target="f"')
    assert i.shape == "f32[<=10,?]{1,0}" and i.operands == ["a", "b"]


@pytest.mark.parametrize(
    "shape",
    [
        "f32[]",
        "f32[2,4]",
        "f32[2,4]{1,0}",
        "f32[]{:S(2)}",
        "bf16[8,128]{1,0:T(8,128)(2,1)S(1)}",
        "u32[4]{0:T(256)E(32)}",
        "f32[<=10,?]",
        "token[]",
        "opaque[]",
        "()",
        "(f32[], (s32[], token[]))",
        "(f32[1], f32[2], f32[3], f32[4], f32[5], /*index=5*/f32[6])",
        "f8e4m3fn[2]{0}",
        "pred[3,1]{0,1}",
    ],
)
def test_shapes(shape):
    assert instr(f'x = {shape} custom-call(), custom_call_target="t"').shape == shape


@pytest.mark.parametrize(
    "literal",
    [
        "1",
        "-1",
        "1e-05",
        "0.5",
        "-inf",
        "inf",
        "nan",
        "-nan",
        "nan(0x1f)",
        "true",
        "false",
        "{...}",
        "{}",
        "{1, 2, 3}",
        "{ { 0, 1 }, { 1, 0 } }",
        "{ {1} {2} }",
        "( 1, {2, 3} )",
        "(1, 2)",
        "{ /*i0=0*/ { {1} } }",
    ],
)
def test_constant_literals(literal):
    i = instr(f"c = f32[2] constant({literal})")
    assert i.opcode == "constant" and i.literal_text == literal.replace("/*i0=0*/ ", "/*i0=0*/ ") and i.operands == []


# ------------------------------------------------------------------ replica groups


def np_iota(g, s, dims, perm=None):
    a = np.arange(int(np.prod(dims))).reshape(dims)
    if perm is not None:
        a = a.transpose(perm)
    return a.reshape(g, s).tolist()


@pytest.mark.parametrize(
    "text,expected",
    [
        ("{{0,1},{2,3}}", [[0, 1], [2, 3]]),
        ("{ {0, 1}, {2, 3} }", [[0, 1], [2, 3]]),
        ("{}", []),
        ("[2,4]<=[8]", np_iota(2, 4, [8])),
        ("[2,4]<=[4,2]T(1,0)", np_iota(2, 4, [4, 2], [1, 0])),
        ("[4,2]<=[2,2,2]T(2,0,1)", np_iota(4, 2, [2, 2, 2], [2, 0, 1])),
        ("[1,128]<=[128]", [list(range(128))]),
        ("[2,64]<=[128]", np_iota(2, 64, [128])),
    ],
)
def test_replica_groups(text, expected):
    a = attr(f"x = f32[2] all-reduce(a), replica_groups={text}, to_apply=add", "replica_groups")
    assert a.value_text == text and a.value == expected


def test_iota_examples_written_out():
    assert attr(
        "x = f32[2] all-gather(a), replica_groups=[2,4]<=[4,2]T(1,0), dimensions={0}", "replica_groups"
    ).value == [[0, 2, 4, 6], [1, 3, 5, 7]]
    assert attr("x = f32[2] all-gather(a), replica_groups=[4,2]<=[8], dimensions={0}", "replica_groups").value == [
        [0, 1],
        [2, 3],
        [4, 5],
        [6, 7],
    ]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.data())
def test_iota_matches_numpy(dims, data):
    n = int(np.prod(dims))
    perm = data.draw(st.permutations(list(range(len(dims)))))
    g = data.draw(st.sampled_from([d for d in range(1, n + 1) if n % d == 0]))
    text = f"[{g},{n // g}]<=[{','.join(map(str, dims))}]T({','.join(map(str, perm))})"
    assert attr(f"x = f32[2] all-reduce(a), replica_groups={text}, to_apply=f", "replica_groups").value == np_iota(
        g, n // g, dims, perm
    )


@pytest.mark.parametrize(
    "text,axes,grouped",
    [
        ("mesh['a'=2,'b'=4] {'b'}", [("a", 2), ("b", 4)], ["b"]),
        ("mesh['a'=2,'b'=4] {'a'}", [("a", 2), ("b", 4)], ["a"]),
        ("mesh['a'=2,'b'=2,'c'=2] {'c','a'}", [("a", 2), ("b", 2), ("c", 2)], ["c", "a"]),
        ("mesh['x'=8] {'x'}", [("x", 8)], ["x"]),
    ],
)
def test_mesh_replica_groups(text, axes, grouped):
    sizes = [s for _, s in axes]
    names = [n for n, _ in axes]
    others = [n for n in names if n not in grouped]
    perm = [names.index(n) for n in others + grouped]
    gsize = int(np.prod([dict(axes)[n] for n in grouped]))
    expected = np.arange(int(np.prod(sizes))).reshape(sizes).transpose(perm).reshape(-1, gsize).tolist()
    a = attr(f"x = f32[2] all-reduce(a), replica_groups={text}, to_apply=f", "replica_groups")
    assert a.value_text == text and a.value == expected


def test_mesh_written_out():
    a = attr("x = f32[2] all-reduce(a), replica_groups=mesh['a'=2,'b'=4] {'a'}, to_apply=f", "replica_groups")
    assert a.value == [[0, 4], [1, 5], [2, 6], [3, 7]]


def test_bad_iota_is_an_error():
    with pytest.raises(HloParseError, match="do not cover"):
        instr("x = f32[2] all-reduce(a), replica_groups=[2,3]<=[8], to_apply=f")
    with pytest.raises(HloParseError, match="not a permutation"):
        instr("x = f32[2] all-reduce(a), replica_groups=[2,4]<=[4,2]T(0,0), to_apply=f")
    with pytest.raises(HloParseError, match="list of integer lists"):
        instr("x = f32[2] all-reduce(a), replica_groups={0,1}, to_apply=f")


# ------------------------------------------------------------------ attribute values


COLL = "x = f32[2] all-reduce(a), "


@pytest.mark.parametrize(
    "text,name,value",
    [
        ("source_target_pairs={{0,1},{1,2}}", "source_target_pairs", [[0, 1], [1, 2]]),
        ("dimensions={0}", "dimensions", [0]),
        ("dimensions={}", "dimensions", []),
        ("dimensions={ 1, 0 }", "dimensions", [1, 0]),
        ("lhs_contracting_dims={1}", "lhs_contracting_dims", [1]),
        ("slice_sizes={1,2}", "slice_sizes", [1, 2]),
        ("channel_id=5", "channel_id", 5),
        ("index=2", "index", 2),
        ("iota_dimension=0", "iota_dimension", 0),
        ("use_global_device_ids=true", "use_global_device_ids", True),
        ("constrain_layout=false", "constrain_layout", False),
        ("is_host_transfer=true", "is_host_transfer", True),
        ("to_apply=%add.1", "to_apply", "add.1"),
        ("to_apply=add.1", "to_apply", "add.1"),
        ("calls=%fused", "calls", "fused"),
        ("condition=%c, body=%b", "condition", "c"),
        ("condition=%c, body=%b", "body", "b"),
        ("select=%s, scatter=%t", "scatter", "t"),
        ("true_computation=%t, false_computation=%f", "false_computation", "f"),
        ("branch_computations={%a, %b}", "branch_computations", ["a", "b"]),
        ("called_computations={c}", "called_computations", ["c"]),
        ("control-predecessors={%recv, %x.1}", "control-predecessors", ["recv", "x.1"]),
        ("control-predecessors={}", "control-predecessors", []),
        ('custom_call_target="AwsNeuron\\"X\\\\"', "custom_call_target", 'AwsNeuron"X\\'),
        ("api_version=API_VERSION_UNSPECIFIED", "api_version", "API_VERSION_UNSPECIFIED"),
        ("api_version=API_VERSION_TYPED_FFI", "api_version", "API_VERSION_TYPED_FFI"),
        ('backend_config="0"', "backend_config", "0"),
        ('backend_config="a\\nb\\x41\\101\\\'"', "backend_config", "a\nbAA'"),
        ('backend_config={"k": {"x": "}"}, "n": [1, 2]}', "backend_config", '{"k": {"x": "}"}, "n": [1, 2]}'),
        (
            'backend_config={attn_heads = 32 : i64, mask = #te<Mask NO_MASK>, s = "y"}',
            "backend_config",
            '{attn_heads = 32 : i64, mask = #te<Mask NO_MASK>, s = "y"}',
        ),
        ('frontend_attributes={neff_input_names="input0"}', "frontend_attributes", {"neff_input_names": "input0"}),
        (
            'frontend_attributes={_xla_send_recv_source_target_pairs={{0,1},{1,2}},b="x\\"y"}',
            "frontend_attributes",
            {"_xla_send_recv_source_target_pairs": "{{0,1},{1,2}}", "b": 'x"y'},
        ),
        ("frontend_attributes={}", "frontend_attributes", {}),
        ("direction=GT", "direction", None),
        ('metadata={op_type="a" op_name="b/c" source_file="x.py" source_line=1 profile_type={1}}', "metadata", None),
        ("window={size=3x3 stride=2x2 pad=1_1x1_1 lhs_dilate=1x2 rhs_reversal=1x0}", "window", None),
        ("window={size=2 pad=-1_0}", "window", None),
        ("dim_labels=b01f_01io->b01f", "dim_labels", None),
        ("dim_labels=0fb_0io->0fb", "dim_labels", None),
        ("slice={[0:2], [1:5:2]}", "slice", None),
        ("padding=0_0x1_1_2", "padding", None),
        ("sharding={replicated}", "sharding", None),
        ("sharding={maximal device=0}", "sharding", None),
        ("sharding={devices=[2,1]0,1}", "sharding", None),
        ("sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}", "sharding", None),
        ("sharding={devices=[2,2]<=[2,2]T(1,0) last_tile_dims={manual, replicated}}", "sharding", None),
        ("sharding={{replicated}, {maximal device=1}, /*index=2*/{manual}}", "sharding", None),
        ("sharding={}", "sharding", None),
        ('sharding={replicated shard_as 1 metadata={op_name="a"}}', "sharding", None),
        ("operand_layout_constraints={f32[2]{0}, (s32[], f32[1]{0})}", "operand_layout_constraints", None),
        ("output_to_operand_aliasing={{0}: (0, {}), {1}: (1, {2})}", "output_to_operand_aliasing", None),
        ("literal=s32[2]{0} {1, 2}", "literal", None),
        ("statistics={visualizing_index=1,stat-1=33,stat-2=0.5}", "statistics", None),
        ('origin={(({}, {"v2"}), {"v3"})}', "origin", None),
        ("result_accuracy={tolerance={atol=0.1,rtol=0,ulps=1}}", "result_accuracy", None),
        ('domain={kind="sharding", entry={maximal device=0}, exit={replicated}}', "domain", None),
        ("operand_precision={default,high}", "operand_precision", None),
        ("epsilon=0.001", "epsilon", None),
        ("unknown_attr=[2,4]<=[4,2]T(1,0)", "unknown_attr", None),
        ("unknown_attr=foo", "unknown_attr", None),
        ('unknown_attr="s"', "unknown_attr", None),
        ("unknown_attr=(1, [2], {3})", "unknown_attr", None),
    ],
)
def test_attribute_values(text, name, value):
    i = instr(COLL + text)
    a = i.attr(name)
    assert a is not None
    assert a.value == value
    # the source text of the value is kept exactly
    start = text.index(name + "=") + len(name) + 1
    rest = text[start:]
    assert rest.startswith(a.value_text)
    tail = rest[len(a.value_text) :]
    assert tail == "" or tail.startswith(",")


def test_attribute_positions_across_lines():
    text = "  %x = f32[2] all-reduce(%a),\n    channel_id=1,\r\n  replica_groups={{0,1}}, to_apply=%f"
    i = syntax.parse_instruction(text, filename="f.hlo", line=40, column=1)
    pos = {a.name: (a.line, a.column) for a in i.attrs}
    assert pos == {"channel_id": (41, 5), "replica_groups": (42, 3), "to_apply": (42, 27)}
    assert (i.line, i.column) == (40, 3)
    # a snippet that starts mid-line shifts columns of its first line only
    i = syntax.parse_instruction("%x = f32[] add(a, b), index=1", line=7, column=11)
    assert (i.line, i.column) == (7, 11) and (i.attrs[0].line, i.attrs[0].column) == (7, 33)


def test_unknown_attribute_does_not_swallow_next_instruction():
    m = syntax.parse_module("e {\n a = f32[] parameter(0), foo=bar\n ROOT b = f32[] negate(a), baz={1}\n}\n")
    ins = m.computations[0].instructions
    assert [i.name for i in ins] == ["a", "b"]
    assert ins[0].attrs[0].value_text == "bar"


# ------------------------------------------------------------------ errors


@pytest.mark.parametrize(
    "text,line,column,message",
    [
        ("x = f32[] add(a foo)", 1, 17, "expected ')' or ',' after operand, found 'foo'"),
        ("x = f32[] add(a, b", 1, 19, "found end of input"),
        ('x = f32[] add(a), foo="abc', 1, 23, "unterminated string"),
        ("x = f32[] add(a) /* x", 1, 18, "unterminated comment"),
        ("x = f32[] add(a\0)", 1, 16, "NUL byte"),
        ("x = f32[] add(a), / b", 1, 19, "'/'"),
        ("x = f32[2 add(a)", 1, 5, "found 'f32'"),
        ("x = f32[] add(a),\n  dimensions={0,x}", 2, 17, "expected"),
        ("x = f32[] add(a), channel_id=abc", 1, 30, "expected an integer"),
    ],
)
def test_instruction_errors(text, line, column, message):
    with pytest.raises(HloParseError) as ei:
        syntax.parse_instruction(text, filename="in.hlo")
    e = ei.value
    assert message in e.message
    assert (e.filename, e.line, e.column) == ("in.hlo", line, column)
    assert e.source_line == text.split("\n")[line - 1].replace("\0", "\0")


def test_error_line_offset_and_render():
    with pytest.raises(HloParseError) as ei:
        syntax.parse_instruction("  x = f32[] add(a b)", filename="big.hlo", line=1234)
    e = ei.value
    assert (e.line, e.column) == (1234, 19)
    assert e.render().startswith("big.hlo:1234:19: error: expected ')' or ',' after operand, found 'b'")


@pytest.mark.parametrize("text", ["", "   \n\n", "// only a comment\n", "/* c */"])
def test_empty_input(text):
    with pytest.raises(HloParseError, match="empty input: expected an HLO module"):
        syntax.parse_module(text)


def test_module_errors_have_positions():
    with pytest.raises(HloParseError) as ei:
        syntax.parse_module(
            "HloModule m\n\nENTRY e {\n  a = f32[] parameter(0)\n  b = f32[] add(a,, a)\n}\n", filename="x"
        )
    assert (ei.value.line, ei.value.column) == (5, 19)
    with pytest.raises(HloParseError) as ei:
        syntax.parse_module("HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n")
    assert "found end of input" in ei.value.message
    with pytest.raises(HloParseError):
        syntax.parse_module("HloModule m\n")


def test_no_lark_exception_escapes():
    bad = [
        "x",
        "=",
        "x =",
        "x = (",
        "x = f32[] add(",
        "{",
        "}",
        "ENTRY",
        "HloModule",
        "x = f32[] add(a), k=",
        "x = f32[] add(a), k={",
        "x = f32[] add(a), k=[",
        "x = f32[] constant({1,",
        '"',
        "'",
        "%",
        "#",
        "@",
        "x = f32[] add(a), replica_groups=mesh['a'=2] {'q'}",
        'x = f32[] add(a), backend_config={"a}',
    ]
    for text in bad:
        for fn in (syntax.parse_instruction, syntax.parse_module):
            with pytest.raises(HloParseError):
                fn(text)


@pytest.mark.skipif(not CORPUS_FILES, reason="corpus not found")
def test_grammar_reads_what_the_reader_reads():
    """Over the corpus, the grammar of record and the fast reader see the same computations,
    instruction names, opcodes and operands (strict mode no longer runs the grammar on each
    instruction, so the agreement is held here)."""
    from hlo_rewrite import HloError, parse_module

    checked = 0
    for path in CORPUS_FILES:
        if path.relative_to(CORPUS).as_posix() in FRAGMENTS:
            continue
        text = path.read_bytes().decode("utf-8")
        try:
            ours = parse_module(text, str(path))
        except HloError:
            continue  # a file the reader rejects (it says where); the grammar's errors are tested above
        grammar = syntax.parse_module(text, filename=str(path))
        assert [(c.name, [(i.name, i.opcode, list(i.operands)) for i in c.instructions])
                for c in grammar.computations] == [
                    (c.name, [(i.name, i.opcode, list(i.operands)) for i in c.instructions])
                    for c in ours.computations], path
        checked += 1
    assert checked
