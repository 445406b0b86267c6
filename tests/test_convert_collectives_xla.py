"""convert-collectives-to-custom-call, with XLA (jaxlib) as the oracle.

XLA checks that every output parses and that each converted line is exactly what XLA's printer
prints for it, and every backend_config field is compared with XLA's own reading of the original
collective. The only normalisation before comparing a converted line with XLA's reprint is
removing the line's indentation (and, for shapes written without layouts, XLA's default layouts);
on both input and output, ``replace_unspecified_api`` (XLA rejects torch-neuronx's
API_VERSION_UNSPECIFIED); and, in modules with a stack-frame table (which XLA renumbers when it
prints), ``stack_frame_id=N`` is compared separately: it must be the id XLA's print of the
*input* gives the collective.
"""

from __future__ import annotations

import json
import re

import golden_cases
import numpy as np
import pytest
from conftest import HAVE_CORPUS, INPUTS, needs_xla, read_exact
from test_convert_collectives import (
    LEFT_ALONE,
    NAME_BASE,
    PASS,
    TABLE,
    _assert_only_converted_lines_differ,
    _case_module,
    _config,
    _lines_by_name,
    _one,
    _run,
    convert_complete_inputs,
)

xo = needs_xla()
pytestmark = pytest.mark.xla
GOLDEN_CASES = golden_cases.cases(PASS)


@pytest.fixture(scope="module")
def corpus_results():
    return convert_complete_inputs()


@pytest.mark.parametrize(("opcode", "variant", "dtype"), TABLE, ids=lambda x: str(x))
def test_target_name_table_agrees_with_xla(opcode, variant, dtype):
    text, _ = _case_module(opcode, variant, dtype)
    module, report, out = _run(text)
    _assert_xla_agrees(text, out, module, {"c"})


_FRAME_RE = re.compile(r"stack_frame_id=\d+")



def _assert_xla_agrees(src: str, out: str, module, converted: set[str]) -> None:
    """XLA parses the output (when it parses the input), and reprints every converted
    line exactly as we printed it."""
    src_x, out_x = xo.replace_unspecified_api(src), xo.replace_unspecified_api(out)
    xo.xla_parse(src_x)  # every input here is one XLA reads: a rejection is a failure
    style = {"operand_shapes": module.style.operand_shapes, "percent": module.style.percent}
    reprint = xo.xla_reprint(out_x, **style)
    ours, theirs = _lines_by_name(out_x), _lines_by_name(reprint)
    frames_before = None
    for name in converted:
        mine = ours[name][0]
        xla = theirs.get(name, [])
        if "stack_frame_id=" in mine:
            # XLA renumbers its stack-frame table when it prints; the frame must be the one
            # XLA gives the original collective, and the rest of the line must be identical.
            if frames_before is None:
                frames_before = _lines_by_name(xo.xla_reprint(src_x, **style))
            want = _FRAME_RE.findall(frames_before[name][0])
            assert [_FRAME_RE.findall(x) for x in xla] == [want], name
            mine = _FRAME_RE.sub("stack_frame_id=N", mine)
            xla = [_FRAME_RE.sub("stack_frame_id=N", x) for x in xla]
        if "]{" not in mine:  # shapes written without layouts; XLA's printer adds the default ones
            xla = [re.sub(r"\]\{[0-9,]*\}", "]", x) for x in xla]
        assert mine in xla, f"XLA prints {name} differently:\n{mine}\n{xla}"



def test_all_keys_and_dimension():
    text = _one(", channel_id=7, replica_groups={{0,1}}, constrain_layout=true, use_global_device_ids=true, "
                "dimensions={1}, to_apply=add", shape="f32[2,4]{1,0}", opcode="reduce-scatter",
                operand="f32[2,8]{1,0}")
    module, _, out = _run(text)
    assert _config(out) == {"replica_groups": [[0, 1]], "channel_id": 7, "use_global_device_ids": True,
                            "constrain_layout": True, "dimension": 1, "to_apply": "add"}
    _assert_xla_agrees(text, out, module, {"c"})



@pytest.mark.parametrize(
    ("written", "kept"),
    [
        ('{"k":1,"s":"a}b"}', '{"k":1,"s":"a}b"}'),
        ('"0"', "0"),
        ('"say \\"hi\\"\\n"', 'say "hi"\n'),
        ("{attn_heads = 32 : i64}", "{attn_heads = 32 : i64}"),
    ],
)
def test_original_backend_config_kept(written, kept):
    text = _one(f", replica_groups={{{{0,1}}}}, to_apply=add, backend_config={written}")
    module, _, out = _run(text)
    assert _config(out)["original_backend_config"] == kept
    _assert_xla_agrees(text, out, module, {"c"})



def test_carried_attributes_in_custom_call_printer_order():
    text = """HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  x = f32[8]{0} parameter(0)
  y = f32[8]{0} negate(x)
  c = f32[8]{0} all-reduce(x), channel_id=2, replica_groups={{0,1}}, to_apply=add, sharding={replicated}, frontend_attributes={_xla_a="1",b={x}}, control-predecessors={y}, metadata={op_name="ar" source_line=3}, backend_config={"z":1}
  d = f32[8]{0} add(c, c), control-predecessors={c}
  ROOT t = (f32[8]{0}, f32[8]{0}) tuple(c, d)
}

"""
    module, report, out = _run(text)
    line = [x for x in out.splitlines() if x.startswith("  c = ")][0]
    assert line == (
        '  c = f32[8]{0} custom-call(x), custom_call_target="AwsNeuronAllReduceAdd_f32", sharding={replicated}, '
        'frontend_attributes={_xla_a="1",b={x}}, control-predecessors={y}, metadata={op_name="ar" source_line=3}, '
        'backend_config={"channel_id":2,"constrain_layout":false,"original_backend_config":"{\\"z\\":1}",'
        '"replica_groups":[[0,1]],"to_apply":"add","use_global_device_ids":false}'
    )
    # users and control successors keep referring to the same name: their lines are untouched
    _assert_only_converted_lines_differ(text, out, {"c"})
    _assert_xla_agrees(text, out, module, {"c"})
    skeleton = xo.xla_skeleton(out)
    assert ("c", "custom-call", ["x"]) in skeleton["main"]
    assert "add" in skeleton  # the reduction computation stays in the module



def test_operand_shape_style_and_percent_names():
    text = """HloModule m

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %a, f32[] %b)
}

ENTRY %main (x: f32[8]) -> (f32[8], f32[]) {
  %x = f32[8]{0} parameter(0)
  %t = f32[] constant(0)
  ROOT %c = (f32[8]{0}, f32[]) all-reduce(f32[8]{0} %x, f32[] %t), replica_groups={}, constrain_layout=true, to_apply=%add
}

"""
    module, report, out = _run(text)
    assert report.rewritten[0].target == "AwsNeuronAllReduceAdd_UNKNOWNDTYPE"
    line = out.splitlines()[-3]
    assert line.startswith('  ROOT %c = (f32[8]{0}, f32[]) custom-call(f32[8]{0} %x, f32[] %t), '
                           'custom_call_target="AwsNeuronAllReduceAdd_UNKNOWNDTYPE", backend_config={')
    _assert_xla_agrees(text, out, module, {"c"})



@pytest.mark.parametrize("all_computations", [False, True])
def test_gate_leaves_other_collectives_and_async_forms(all_computations):
    xo.xla_parse(LEFT_ALONE)  # the input is valid HLO
    module, report, out = _run(LEFT_ALONE, all_computations=all_computations)
    assert out == LEFT_ALONE
    assert not module.changed
    assert report.rewritten == []
    left = {r.instruction: r.reason for r in report.left}
    assert set(left) == {"ars", "ags", "rss", "rs"}
    assert "async" in left["ars"] and "async" in left["ags"] and "async" in left["rss"]
    assert "async-start 'rss'" in left["rs"]
    # all-to-all and collective-permute are not collectives this pass matches at all
    assert "a2a" not in left and "cp" not in left



def test_reduce_scatter_start_sugar_is_reported():
    text = _one(", replica_groups={{0,1}}, dimensions={0}, to_apply=add", opcode="reduce-scatter-start",
                shape="((f32[8]{0}), f32[4]{0})")
    head, tail = text.replace("ROOT c =", "c =").rsplit("\n}\n\n", 1)
    text = head + "\n  ROOT d = f32[4]{0} reduce-scatter-done(c)\n}\n\n" + tail
    xo.xla_parse(text)
    _, report, out = _run(text)
    assert out == text
    assert [(r.instruction, "async" in r.reason) for r in report.left] == [("c", True)]



@pytest.mark.parametrize("case", GOLDEN_CASES, ids=lambda c: c.name)
def test_golden_converted_lines_agree_with_xla(case):
    """tests/test_golden.py compares the output; here every converted line is what XLA prints."""
    src = case.source()
    module, [report], out = golden_cases.run(case)
    converted = {r.instruction for r in report.rewritten}
    assert converted and report.left == []
    _assert_only_converted_lines_differ(src, out, converted)
    _assert_xla_agrees(src, out, module, converted)



@pytest.mark.xla
def test_corpus_outputs_parse_and_converted_lines_reprint_unchanged(corpus_results):
    checked = 0
    for _path, src, module, report, out in corpus_results:
        if report.rewritten:
            _assert_xla_agrees(src, out, module, {r.instruction for r in report.rewritten})
            checked += 1
    assert checked > (40 if HAVE_CORPUS else 100)



_IOTA_RE = re.compile(r"\[([\d,]+)\]<=\[([\d,]+)\](?:T\(([\d,]+)\))?")



_COLLECTIVE_LINE_RE = re.compile(r" (all-reduce|reduce-scatter|all-gather)\(")



_GROUPS_RE = re.compile(r"replica_groups=(\{\}|\{\{[\d,{}]*\}\}|\[[\d,]+\]<=\[[\d,]+\](?:T\([\d,]+\))?)")



def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x]



def _groups_as_xla_prints_them(value: str) -> list[list[int]]:
    """XLA's printed replica_groups as lists; the iota form expanded here, independently."""
    m = _IOTA_RE.fullmatch(value)
    if m:
        ids = np.arange(int(np.prod(_ints(m.group(2))))).reshape(_ints(m.group(2)))
        if m.group(3):
            ids = ids.transpose(_ints(m.group(3)))
        return ids.reshape(_ints(m.group(1))).tolist()
    return [_ints(g) for g in re.findall(r"\{([\d,]*)\}", value[1:-1])]



def _xla_collectives(text: str) -> tuple[dict[str, dict], dict[str, str]]:
    """XLA's reading of every collective of ``text`` (its fields, from XLA's print of each
    instruction) and the root opcode of every computation."""
    module = xo.xla_parse(xo.replace_unspecified_api(text))
    fields: dict[str, dict] = {}
    for comp in module.computations():
        for instr in comp.instructions():
            line = instr.to_string()
            m = _COLLECTIVE_LINE_RE.search(line)
            if not m or m.group(1) not in ("all-reduce", "reduce-scatter", "all-gather"):
                continue
            channel = re.search(r"channel_id=(\d+)", line)
            groups = _GROUPS_RE.search(line)
            dims = re.search(r"dimensions=\{(\d+)\}", line)
            to_apply = re.search(r"to_apply=%?([\w.\-]+)", line)
            fields[instr.name] = {
                "opcode": m.group(1),
                "replica_groups": _groups_as_xla_prints_them(groups.group(1)) if groups else [],
                "channel_id": int(channel.group(1)) if channel else None,
                "use_global_device_ids": "use_global_device_ids=true" in line,
                "constrain_layout": "constrain_layout=true" in line,
                "dimension": int(dims.group(1)) if dims else None,
                "to_apply": to_apply.group(1) if to_apply else None,
            }
    roots = {}
    for block in re.split(r"\n\n+", module.to_string()):
        head = re.match(r"(?:ENTRY )?%?([\w.\-]+) ", block)
        root = re.search(r"\n\s*ROOT %?[\w.\-]+ = \S+ ([\w\-]+)\(([^)]*)\)", block)
        if head and root:
            params = set(re.findall(r"\n\s*%?([\w.\-]+) = \S+ parameter\(", block))
            operands = re.findall(r"%?([\w.\-]+)(?:,|$)", root.group(2))
            # the infix XLA's reading implies: add/maximum/minimum of the two parameters
            plain = len(operands) == 2 and set(operands) == params and len(params) == 2
            infix = {"add": "Add", "maximum": "Max", "minimum": "Min"}.get(root.group(1)) if plain else None
            roots[head.group(1)] = infix or "UNKNOWNOP"
    return fields, roots



def _assert_backend_config_means_what_xla_reads(src: str, module, report) -> int:
    """Every converted collective's backend_config field equals XLA's reading of the original."""
    theirs, roots = _xla_collectives(src)
    for record in report.rewritten:
        xla = theirs[record.instruction]
        comp = module.computation(record.computation)
        config = json.loads(comp.get(record.instruction).backend_config)
        assert config["replica_groups"] == xla["replica_groups"], record.instruction
        assert config["channel_id"] == xla["channel_id"], record.instruction
        assert config["use_global_device_ids"] == xla["use_global_device_ids"], record.instruction
        assert config["constrain_layout"] == xla["constrain_layout"], record.instruction
        if xla["opcode"] == "all-reduce":
            assert "dimension" not in config
        else:
            assert config["dimension"] == xla["dimension"], record.instruction
        if xla["opcode"] == "all-gather":
            assert "to_apply" not in config
        else:
            assert config["to_apply"] == xla["to_apply"], record.instruction
            # the name says the reduction XLA reads in the to_apply computation
            assert record.target.startswith(NAME_BASE[xla["opcode"]] + roots[xla["to_apply"]] + "_"), record.target
    return len(report.rewritten)



@pytest.mark.parametrize(("opcode", "variant", "dtype"), TABLE, ids=lambda x: str(x))
def test_backend_config_fields_are_what_xla_reads(opcode, variant, dtype):
    text, _ = _case_module(opcode, variant, dtype)
    module, report, _ = _run(text)
    assert _assert_backend_config_means_what_xla_reads(text, module, report) == 1



def test_backend_config_fields_of_every_input_are_what_xla_reads(corpus_results):
    checked = 0
    for _path, src, module, report, _out in corpus_results:
        if report.rewritten:
            checked += _assert_backend_config_means_what_xla_reads(src, module, report)
    assert checked > (500 if HAVE_CORPUS else 150)



def test_iota_groups_are_written_out_as_xla_reads_them():
    text = read_exact(INPUTS / "handwritten" / "iota_replica_groups.hlo")
    module, report, _ = _run(text)
    assert _assert_backend_config_means_what_xla_reads(text, module, report) == 4
    config = json.loads(module.entry.get("all-reduce.1").backend_config)
    assert config["replica_groups"] == [[0, 4], [1, 5], [2, 6], [3, 7]]

