"""Lossless round trip: what no pass touches comes out byte for byte."""

from __future__ import annotations

import pytest
from conftest import CORPUS, HAVE_CORPUS, corpus_files, read_exact

from hlo_rewrite import HloError, parse_module, print_module
from hlo_rewrite.ir import Instruction

# Files of the corpus that are hand-edited fragments, not modules, with the
# start of the error each must give (file-relative path -> message fragment).
FRAGMENTS = {
    "torch-neuronx/mlp/test.hlo": "operand 'all-reduce.307' of 'get-tuple-element.328' is not defined",
    "torch-neuronx-wenboqian/baseline_bert_0.hlo": "is not closed: expected '}' before computation 'MaxComputation.1150'",
    "torch-neuronx-wenboqian/gpt2_tp=1.txt-src.hlo": "calls computation 'reduce.107.MaxFunc.112', which is not defined",
    "torch-neuronx-wenboqian/gpt2_tp=1_subgraph.hlo": "calls computation 'reduce.107.MaxFunc.112', which is not defined",
    "torch-neuronx-wenboqian/gpt2_tp=1_bsh.txt-src.hlo": "calls computation 'reduce.108.MaxFunc.113', which is not defined",
    "torch-neuronx-wenboqian/gpt2_tp=1_bsh_subgraph.hlo": "calls computation 'reduce.108.MaxFunc.113', which is not defined",
    "torch-neuronx-wenboqian/gpt2_tp=1_n_layer=2_output0.hlo": "",
    "torch-neuronx-wenboqian/gpt2_tp=2_n_layer=2_output0.hlo": "",
    "torch-neuronx-wenboqian/gpt2_tp=1_n_layer=2_output1.hlo": "operand 'transpose.166' of 'reshape.177' is not defined",
    "torch-neuronx-wenboqian/gpt2_tp=1_n_layer=2_output2.hlo": "operand 'transpose.317' of 'reshape.328' is not defined",
    "torch-neuronx-wenboqian/gpt2_tp=2_n_layer=2_output1.hlo": "is not closed: expected '}' before computation 'all-reduce.184.Reducer.189'",
    "torch-neuronx-wenboqian/gpt2_tp=2_n_layer=2_output2.hlo": "operand 'transpose.329' of 'reshape.340' is not defined",
    "torch-neuronx-wenboqian/gpt2_tp=1_n_layer=2_output0.txt-src.hlo": "is not closed: expected '}' before computation",
    "torch-neuronx-wenboqian/gpt2_tp=1_n_layer=2_output1.txt-src.hlo": "is not closed: expected '}' before computation",
    "torch-neuronx-wenboqian/gpt2_tp=1_n_layer=2_output2.txt-src.hlo": "is not closed: expected '}' before computation",
    "torch-neuronx-wenboqian/gpt2_tp=2_n_layer=2_output0.txt-src.hlo": "is not closed: expected '}' before computation",
    "torch-neuronx-wenboqian/gpt2_tp=2_n_layer=2_output1.txt-src.hlo": "is not closed: expected '}' before computation",
    "torch-neuronx-wenboqian/gpt2_tp=2_n_layer=2_output2.txt-src.hlo": "is not closed: expected '}' before computation",
    "torch-neuronx-wenboqian/llama_fuse_qkv_correct_slice.hlo": "is not closed: expected '}' before the end of the input",
    "torch-neuronx-wenboqian/llama_fuse_qkv_wrong_slice.hlo": "is not closed: expected '}' before the end of the input",
    "torch-neuronx-wenboqian/pp4_tp8_dp1.hlo": "operand 'multiply.42' of 'all-reduce.52' is not defined",
}

FILES = corpus_files()
COMPLETE = [p for p in FILES if str(p.relative_to(CORPUS)) not in FRAGMENTS]
BROKEN = [p for p in FILES if str(p.relative_to(CORPUS)) in FRAGMENTS]


def _id(p):
    return str(p.relative_to(CORPUS))


def test_corpus_is_there():
    if not HAVE_CORPUS:
        pytest.skip("the real dumps are not there (CORPUS is the repository's inputs)")
    assert len(COMPLETE) > 150
    assert set(FRAGMENTS) <= {_id(p) for p in FILES}, "a listed fragment is missing from the corpus"


@pytest.mark.parametrize("path", COMPLETE, ids=_id)
def test_identity(path):
    text = read_exact(path)
    module = parse_module(text, str(path))
    assert print_module(module) == text
    # the slow path, joining every piece, gives the same bytes
    module.touch()
    assert print_module(module) == text


@pytest.mark.parametrize("path", BROKEN, ids=_id)
def test_fragments_are_located_errors(path):
    text = read_exact(path)
    with pytest.raises(HloError) as info:
        parse_module(text, str(path))
    err = info.value
    assert FRAGMENTS[_id(path)] in err.message
    assert err.filename == str(path)
    assert err.line is not None and err.line >= 1
    rendered = err.render()
    assert rendered.startswith(f"{path}:{err.line}:")
    assert "^" in rendered


def _touch_one(module, opcode):
    for comp in module.computations:
        for instr in comp.instructions:
            if instr.opcode == opcode:
                instr.mark_changed()
                return instr
    raise AssertionError(f"no {opcode} in module")


@pytest.mark.parametrize(
    "relpath",
    [
        "torch-neuronx/gpt/gpt2_tp=2.hlo",
        "jax/allreduce/all-reduce_sum_f32.pre.hlo",
        "xla-benchmarks/hlo_llama3_8b_cp_bf16_1x4.hlo",
    ],
)
def test_reprinted_line_matches_source_and_neighbours_untouched(corpus, relpath):
    """A reprinted instruction is spelled as the dump spells it (XLA style), and
    every other line is unchanged."""
    path = corpus / relpath
    text = read_exact(path)
    module = parse_module(text, str(path))
    instr = _touch_one(module, "all-reduce")
    out = print_module(module)
    old_lines = text.split("\n")
    new_lines = out.split("\n")
    assert len(old_lines) == len(new_lines)
    diff = [i for i, (a, b) in enumerate(zip(old_lines, new_lines, strict=True)) if a != b]
    # XLA's own print of an unchanged instruction equals the dump's line
    assert diff == [], [(old_lines[i], new_lines[i]) for i in diff]
    assert instr.text is None


def test_crlf_round_trip_and_new_lines_follow_crlf(corpus):
    text = read_exact(corpus / "torch-neuronx/gpt/gpt2_tp=2.hlo").replace("\n", "\r\n")
    module = parse_module(text, "crlf.hlo")
    assert print_module(module) == text
    assert module.style.newline == "\r\n"
    instr = _touch_one(module, "all-reduce")
    out = print_module(module)
    assert out == text  # reprinted identically, CRLF kept
    comp = instr.computation
    new = Instruction(module.fresh_name("copy"), "copy", instr.shape, [instr.name])
    comp.add_instruction(new, after=instr)
    out = print_module(module)
    assert "\r\n  %copy = " in out and "\n\n" not in out.replace("\r\n", "")


def test_style_detection(corpus):
    torch = parse_module(read_exact(corpus / "torch-neuronx/gpt/gpt2_tp=2.hlo"))
    assert torch.style.percent and torch.style.operand_shapes
    jax_pre = parse_module(read_exact(corpus / "jax/allreduce/all-reduce_sum_f32.pre.hlo"))
    assert not jax_pre.style.percent and not jax_pre.style.operand_shapes
    bench = parse_module(read_exact(corpus / "xla-benchmarks/hlo_llama31_70b_bf16_16x8.hlo"))
    assert bench.style.percent and not bench.style.operand_shapes and bench.style.index_comments


def test_new_instruction_printed_in_module_style(corpus):
    module = parse_module(read_exact(corpus / "torch-neuronx/gpt/gpt2_tp=2.hlo"))
    entry = module.entry
    p = entry.parameters()[0]
    new = Instruction(module.fresh_name("negate"), "negate", p.shape, [p.name], [("metadata", '{op_name="x"}')])
    entry.add_instruction(new, after=p)
    out = print_module(module)
    assert f"  %{new.name} = {p.shape} negate({p.shape} %{p.name}), metadata={{op_name=\"x\"}}\n" in out


def test_index_comments_every_five_operands():
    text = (
        "HloModule m\n\nENTRY %e (a: f32[]) -> (f32[], f32[], f32[], f32[], f32[], f32[]) {\n"
        "  %a = f32[] parameter(0)\n"
        "  ROOT %t = (f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[]) tuple(%a, %a, %a, %a, %a, /*index=5*/%a)\n"
        "}\n\n"
    )
    module = parse_module(text)
    module.entry.root.mark_changed()
    assert print_module(module) == text


def test_fresh_names_are_unique_and_deterministic(corpus):
    module = parse_module(read_exact(corpus / "torch-neuronx/gpt/gpt2_tp=2.hlo"))
    names = [module.fresh_name("add") for _ in range(3)]
    assert len(set(names)) == 3
    assert all(n not in {i.name for c in module.computations for i in c.instructions} for n in names)
    again = parse_module(read_exact(corpus / "torch-neuronx/gpt/gpt2_tp=2.hlo"))
    assert [again.fresh_name("add") for _ in range(3)] == names
