"""Every layout XLA's parser reads is read the same way and written back byte for byte; what
it rejects is rejected with the place of the problem (cases in ``xla_syntax_cases.py``)."""

from __future__ import annotations

import pytest
from xla_syntax_cases import READS, REJECTS, skeleton

from hlo_rewrite import HloError, parse_module, print_module
from hlo_rewrite.passes import PassOptions
from hlo_rewrite.pipeline import run_passes


@pytest.mark.parametrize("case", sorted(READS))
def test_reads_and_writes_back_byte_for_byte(case):
    text, expected = READS[case]
    module = parse_module(text, f"{case}.hlo")
    assert skeleton(module) == expected
    assert print_module(module) == text


@pytest.mark.parametrize("case", sorted(READS))
def test_strict_reading_reads_the_same(case):
    text, expected = READS[case]
    module = parse_module(text, f"{case}.hlo", strict=True)
    assert skeleton(module) == expected


@pytest.mark.parametrize("case", sorted(REJECTS))
def test_rejects_with_the_place_of_the_problem(case):
    text, message, line, column = REJECTS[case]
    with pytest.raises(HloError) as info:
        parse_module(text, f"{case}.hlo")
    err = info.value
    assert message in err.message
    assert (err.filename, err.line, err.column) == (f"{case}.hlo", line, column)


def test_an_instruction_written_over_lines_is_printed_on_one_line_when_a_pass_rewrites_it():
    text, _ = READS["trailing_comma_continues"]
    module = parse_module(text, "m.hlo")
    run_passes(module, ["convert-collectives-to-custom-call"], PassOptions())
    out = print_module(module)
    lines = out.split("\n")
    ar = [line for line in lines if "custom-call(" in line]
    assert len(ar) == 2 and ar[0].startswith("  ar = f32[8] custom-call(p), custom_call_target=")
    assert ar[1].startswith("  ROOT ag = f32[64] custom-call(ar), custom_call_target=")
    # the lines nobody touched stay as written
    assert out.startswith(text[: text.index("  ar = ")])
    assert out.endswith("\n}\n") and "to_apply=add\n" not in out and "dimensions={0}\n" not in out


def test_a_send_and_recv_with_comments_in_their_attributes_are_fused_and_the_output_reads_back():
    text, _ = READS["comments_in_the_attributes_of_a_send_and_recv"]
    module = parse_module(text, "m.hlo")
    (report,) = run_passes(module, ["fuse-send-recv"], PassOptions())
    assert report.rewritten
    out = print_module(module)
    fused = [line for line in out.split("\n") if "AwsNeuronSendRecv" in line]
    # the value keeps its comment and the line end after it: one line more
    assert len(fused) == 1 and fused[0].endswith("{{0,1},// c")
    again = parse_module(out, "out.hlo", strict=True)
    assert again.entry.get("rd").frontend_attributes == module.entry.get("rd").frontend_attributes


def test_a_send_and_recv_whose_metadata_values_stand_after_line_ends_are_fused():
    text, _ = READS["metadata_values_after_line_ends_and_comments"]
    module = parse_module(text, "m.hlo")
    (report,) = run_passes(module, ["fuse-send-recv"], PassOptions())
    assert report.rewritten
    again = parse_module(print_module(module), "out.hlo", strict=True)
    assert again.entry.get("rd").opcode == "custom-call"


def test_a_send_and_recv_whose_frontend_attributes_hold_comment_text_are_fused_with_it():
    text, _ = READS["line_comment_text_inside_frontend_attributes"]
    module = parse_module(text, "m.hlo")
    pairs = module.entry.get("r").frontend_attributes["_xla_send_recv_source_target_pairs"]
    assert pairs == "{{0,1},// {1,0}}"  # the value as XLA holds it
    (report,) = run_passes(module, ["fuse-send-recv"], PassOptions())
    assert report.rewritten
    out = print_module(module)
    again = parse_module(out, "out.hlo", strict=True)
    fused = again.entry.get("rd")
    assert fused.opcode == "custom-call"
    assert fused.frontend_attributes["_xla_send_recv_source_target_pairs"] == pairs


def test_a_rewritten_line_takes_the_percent_names_of_an_entry_that_starts_with_a_comment():
    text = ("HloModule m\n\n%add {\n  %x = f32[] parameter(0)\n  %y = f32[] parameter(1)\n"
            "  ROOT %s = f32[] add(%x, %y)\n}\n\nENTRY %e {\n  /* c */ %p = f32[8] parameter(0)\n"
            "  ROOT %ar = f32[8] all-reduce(f32[8] %p), replica_groups={}, to_apply=%add\n}\n")
    module = parse_module(text, "m.hlo")
    run_passes(module, ["convert-collectives-to-custom-call"], PassOptions())
    out = print_module(module)
    assert "  ROOT %ar = f32[8] custom-call(f32[8] %p), custom_call_target=" in out
    assert "  /* c */ %p = f32[8] parameter(0)\n" in out


def test_the_grammar_reads_operands_named_like_opcodes_after_their_shapes():
    module = parse_module(READS["operands_named_like_opcodes_after_their_shapes"][0], "m.hlo")
    for instr in module.entry.instructions:
        assert instr.syntax().operands == instr.operands
    assert module.entry.get("r").attr("index") == 0


def test_an_index_comment_before_the_operand_list_keeps_the_attributes_after_it():
    module = parse_module(READS["index_comment_between_an_opcode_and_its_operands"][0], "m.hlo")
    assert module.entry.get("o").attrs == [("outfeed_config", '"x"')]


def test_an_instruction_sharing_its_line_starts_a_line_of_its_own_when_rewritten():
    text = (
        "HloModule m\n\nadd {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n\n"
        "ENTRY e {\n  p = f32[8] parameter(0) ar = f32[8] all-reduce(p), replica_groups={}, to_apply=add"
        " ROOT n = f32[8] negate(ar)\n}\n"
    )
    module = parse_module(text, "m.hlo")
    run_passes(module, ["convert-collectives-to-custom-call"], PassOptions())
    out = print_module(module)
    assert out.startswith(text[: text.index("ENTRY")])
    body = out[out.index("ENTRY") :].split("\n")
    assert body[1] == "  p = f32[8] parameter(0)"
    assert body[2].startswith("  ar = f32[8] custom-call(p), custom_call_target=")
    assert body[3] == " ROOT n = f32[8] negate(ar)"
    again = parse_module(out, "out.hlo")
    assert [i.name for i in again.entry.instructions] == ["p", "ar", "n"]


def test_lone_cr_lines_are_counted_in_error_places():
    text = "HloModule m\rENTRY e {\r  p = f32[] parameter(0)\r  ROOT n = f32[] nagate(p)\r}\r"
    with pytest.raises(HloError) as info:
        parse_module(text, "cr.hlo")
    assert (info.value.line, info.value.column) == (4, 18)
    assert "did you mean 'negate'" in info.value.message
    assert info.value.source_line == "  ROOT n = f32[] nagate(p)"


def test_split_input_file_counts_lone_cr_lines_like_the_reader():
    from hlo_rewrite.split import join_chunks, split_chunks

    text = "HloModule a\rENTRY e {\r  ROOT c = f32[] constant(1)\r}\r// -----\rHloModule b\rENTRY e {\r  ROOT c = f32[] nagate()\r}\r"
    chunks, separators = split_chunks(text)
    assert [c.line_offset for c in chunks] == [0, 5] and separators == ["// -----\r"]
    assert join_chunks([c.text for c in chunks], separators) == text
    with pytest.raises(HloError) as info:
        parse_module(chunks[1].text, "b.hlo")
    assert chunks[1].line_offset + info.value.line == 8  # the line of 'nagate' in the whole file


NESTED = (
    "HloModule m\n\nadd {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n\n"
    "ENTRY e {\n  p = f32[8] parameter(0)\n  // kept\n"
    "  ar = f32[8] all-reduce(f32[8] negate(f32[8] exponential(p))), replica_groups={}, to_apply=add\n"
    "  ROOT t = (f32[8], f32[8]) tuple(ar, f32[8] sqrt(p))\n}\n"
)


def test_operands_written_as_instructions_get_lines_of_their_own_when_a_pass_rewrites_their_holder():
    module = parse_module(NESTED, "m.hlo")
    run_passes(module, ["convert-collectives-to-custom-call"], PassOptions())
    out = print_module(module)
    body = out[out.index("ENTRY") :].split("\n")
    assert body[1:5] == [
        "  p = f32[8] parameter(0)",
        "  // kept",
        "  exponential.anon = f32[8] exponential(p)",
        "  negate.anon = f32[8] negate(exponential.anon)",
    ]
    assert body[5].startswith("  ar = f32[8] custom-call(negate.anon), custom_call_target=\"AwsNeuronAllReduceAdd_f32\"")
    # the tuple, which no pass touched, keeps the instruction written inside it
    assert body[6] == "  ROOT t = (f32[8], f32[8]) tuple(ar, f32[8] sqrt(p))"
    again = parse_module(out, "out.hlo")
    assert [i.name for i in again.entry.instructions] == [
        "p", "exponential.anon", "negate.anon", "ar", "sqrt.anon", "t"]


def test_an_instruction_written_as_an_operand_that_a_pass_changes_reprints_its_holder():
    module = parse_module(NESTED, "m.hlo")
    entry = module.entry
    inner = entry.get("sqrt.anon")
    assert inner is not None and inner.text == "" and inner.written_in is entry.get("t")
    inner.operands = ["ar"]
    inner.mark_changed()
    out = print_module(module)
    body = out[out.index("ENTRY") :].split("\n")
    assert body[3:6] == [
        "  ar = f32[8] all-reduce(f32[8] negate(f32[8] exponential(p))), replica_groups={}, to_apply=add",
        "  sqrt.anon = f32[8] sqrt(ar)",
        "  ROOT t = (f32[8], f32[8]) tuple(ar, sqrt.anon)",
    ]


def test_instructions_written_as_operands_stay_as_written_when_a_pass_changes_another_line():
    module = parse_module(NESTED, "m.hlo")
    p = module.entry.get("p")
    assert p is not None
    p.set_attr("sharding", "{replicated}")
    out = print_module(module)
    assert out == NESTED.replace("  p = f32[8] parameter(0)\n", "  p = f32[8] parameter(0), sharding={replicated}\n")


def test_a_text_that_is_one_instruction_stays_one_instruction_when_a_pass_rewrites_it():
    text = "ag = f32[8] all-gather(f32[4] p), dimensions={0}, replica_groups={}"
    module = parse_module(text, "one.hlo")
    run_passes(module, ["convert-collectives-to-custom-call"], PassOptions())
    out = print_module(module)
    assert out.startswith('ag = f32[8] custom-call(f32[4] p), custom_call_target="AwsNeuronAllGather_f32", ')
    assert out.count("\n") == 1 and out.endswith("}\n")
    again = parse_module(out, "out.hlo", strict=True)
    assert [(i.name, i.opcode) for i in again.entry.instructions] == [("p", "parameter"), ("ag", "custom-call")]


def test_the_line_reader_takes_headers_with_layouts_and_leaves_a_body_on_its_header_line():
    """A header with layouts, its body on the lines after it, is the line reader's; a body opened
    on its header's line is the token reader's (the line reader read on into the next
    computation)."""
    from hlo_rewrite.reader.plain import NotPlain, read_plain

    text, expected = READS["header_with_layouts"]
    assert skeleton(read_plain(text, "m.hlo", False)) == expected
    for case in ("computation_on_its_header_line_before_another", "computation_closed_where_the_next_one_opens"):
        with pytest.raises(NotPlain):
            read_plain(READS[case][0], "m.hlo", False)


@pytest.mark.parametrize("strict", [False, True])
def test_an_entry_at_the_end_of_the_module_line_marks_the_next_computation(strict):
    module = parse_module(READS["entry_at_the_end_of_the_module_line"][0], "m.hlo", strict=strict)
    assert module.entry.name == "c1"
