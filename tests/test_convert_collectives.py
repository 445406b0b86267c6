"""convert-collectives-to-custom-call (docs/passes/convert-collectives-to-custom-call.md).

Names, backend_config, gate, scope, the golden cases' agreement with XLA, and every input file.
Expected target names come from the contract's tables written out below, never from the
code under test. XLA (jaxlib) checks that every output parses and that each converted
line is exactly what XLA's printer prints for it. The only normalisation before comparing a
converted line with XLA's reprint is removing the line's indentation; on both input and output,
``replace_unspecified_api`` (XLA rejects torch-neuronx's API_VERSION_UNSPECIFIED); and, in
modules with a stack-frame table (which XLA renumbers when it prints), ``stack_frame_id=N``
is compared separately: it must be the id XLA's print of the *input* gives the collective.
"""

from __future__ import annotations

import json
import re

import golden_cases
import numpy as np
import pytest
from conftest import CORPUS, HAVE_CORPUS, needs_xla, read_exact
from test_roundtrip import COMPLETE

from hlo_rewrite import parse_module, print_module
from hlo_rewrite.errors import HloError
from hlo_rewrite.passes import PassOptions
from hlo_rewrite.pipeline import run_passes

xo = needs_xla()
pytestmark = pytest.mark.xla

PASS = "convert-collectives-to-custom-call"
GOLDEN = golden_cases.GOLDEN / PASS

# --------------------------------------------- the naming tables (docs/contract.md)
NAME_BASE = {
    "all-reduce": "AwsNeuronAllReduce",
    "reduce-scatter": "AwsNeuronReduceScatter",
    "all-gather": "AwsNeuronAllGather",
}
NAME_INFIX = {  # reduction body variant -> infix (all-gather never has one)
    "add": "Add",
    "maximum": "Max",
    "minimum": "Min",
    "multiply": "UNKNOWNOP",
    "and": "UNKNOWNOP",
    "or": "UNKNOWNOP",
    "convert_wrapped_add": "UNKNOWNOP",  # ROOT is convert
    "non_parameter_operand": "UNKNOWNOP",  # ROOT add(p0, copy(p1))
}
NAME_SUFFIX = {  # result element type -> suffix
    "f32": "_f32",
    "bf16": "_bf16",
    "f16": "_f16",
    "u32": "_u32",
    "s64": "_s64",
    "s32": "_s32",
    "s8": "_UNKNOWNDTYPE",
    "u8": "_UNKNOWNDTYPE",
    "u16": "_UNKNOWNDTYPE",
    "u64": "_UNKNOWNDTYPE",
    "pred": "_UNKNOWNDTYPE",
    "f64": "_UNKNOWNDTYPE",
    "c64": "_UNKNOWNDTYPE",
    "f8e4m3fn": "_UNKNOWNDTYPE",
    "tuple": "_UNKNOWNDTYPE",  # variadic (f32[..], f32[..])
    "torch_tuple": "_UNKNOWNDTYPE",  # torch_xla's (data, scalar) form, bf16 data
}


def _body(variant: str, et: str) -> str:
    if variant == "convert_wrapped_add":
        return """body {
  p0 = bf16[] parameter(0)
  p1 = bf16[] parameter(1)
  a = f32[] convert(p0)
  b = f32[] convert(p1)
  s = f32[] add(a, b)
  ROOT r = bf16[] convert(s)
}
"""
    if variant == "non_parameter_operand":
        return f"""body {{
  p0 = {et}[] parameter(0)
  p1 = {et}[] parameter(1)
  q = {et}[] copy(p1)
  ROOT r = {et}[] add(p0, q)
}}
"""
    return f"""body {{
  p0 = {et}[] parameter(0)
  p1 = {et}[] parameter(1)
  ROOT r = {et}[] {variant}(p0, p1)
}}
"""


def _case_module(opcode: str, variant: str | None, dtype: str) -> tuple[str, str]:
    """A small module with one collective ``c``; returns (text, the collective's line)."""
    et = {"tuple": "f32", "torch_tuple": "bf16"}.get(dtype, dtype)
    in_n, out_n = {"all-reduce": (8, 8), "reduce-scatter": (16, 8), "all-gather": (4, 8)}[opcode]
    params = [f"  x = {et}[{in_n}]{{0}} parameter(0)"]
    if dtype == "tuple":
        params.append(f"  y = {et}[{in_n}]{{0}} parameter(1)")
        shape, operands = f"({et}[{out_n}]{{0}}, {et}[{out_n}]{{0}})", "x, y"
    elif dtype == "torch_tuple":
        params.append(f"  y = {et}[] parameter(1)")
        shape, operands = f"({et}[{out_n}]{{0}}, {et}[])", "x, y"
    else:
        shape, operands = f"{et}[{out_n}]{{0}}", "x"
    attrs = "channel_id=3, replica_groups={{0,1,2,3},{4,5,6,7}}, use_global_device_ids=true"
    if opcode == "all-gather":
        attrs = "channel_id=3, replica_groups={{0,1,2,3},{4,5,6,7}}, dimensions={0}, use_global_device_ids=true"
    elif opcode == "reduce-scatter":
        attrs += ", dimensions={0}, to_apply=body"
    else:
        attrs += ", to_apply=body"
    line = f"  ROOT c = {shape} {opcode}({operands}), {attrs}, metadata={{op_name=\"c\"}}\n"
    text = f"HloModule case_{opcode.replace('-', '_')}\n\n"
    if variant is not None:
        text += _body(variant, et) + "\n"
    text += "ENTRY main {\n" + "\n".join(params) + "\n" + line + "}\n\n"
    return text, line


TABLE = [(op, v, t) for op in ("all-reduce", "reduce-scatter") for v in NAME_INFIX for t in NAME_SUFFIX]
TABLE += [("all-gather", None, t) for t in NAME_SUFFIX]


def _run(text: str, *, all_computations: bool = False, filename: str = "in.hlo"):
    module = parse_module(text, filename)
    report = run_passes(module, [PASS], PassOptions(all_computations=all_computations))[0]
    return module, report, print_module(module)


_NAME_RE = re.compile(r"^\s*(?:ROOT )?%?([A-Za-z_][A-Za-z0-9_.\-]*) = ")


def _lines_by_name(text: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in text.splitlines():
        m = _NAME_RE.match(line)
        if m:
            out.setdefault(m.group(1), []).append(line.strip())
    return out


def _assert_only_converted_lines_differ(src: str, out: str, converted: set[str]) -> None:
    a, b = src.splitlines(keepends=True), out.splitlines(keepends=True)
    assert len(a) == len(b)
    seen = set()
    for x, y in zip(a, b, strict=True):
        if x == y:
            continue
        m = _NAME_RE.match(y)
        assert m and m.group(1) in converted, f"unexpected change:\n- {x}+ {y}"
        assert " custom-call(" in y
        seen.add(m.group(1))
    assert seen == converted


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


# ------------------------------------------------------------------- table test
@pytest.mark.parametrize(("opcode", "variant", "dtype"), TABLE, ids=lambda x: str(x))
def test_target_name_table(opcode, variant, dtype):
    text, line = _case_module(opcode, variant, dtype)
    expected = NAME_BASE[opcode] + (NAME_INFIX[variant] if variant else "") + NAME_SUFFIX[dtype]
    module, report, out = _run(text)
    assert [(r.instruction, r.target) for r in report.rewritten] == [("c", expected)]
    assert report.left == []
    _assert_only_converted_lines_differ(text, out, {"c"})
    new_line = [x for x in out.splitlines() if x.startswith("  ROOT c = ")][0]
    shape = line.split(" = ", 1)[1].split(f" {opcode}(")[0]
    assert new_line.startswith(f"  ROOT c = {shape} custom-call(")
    assert f'custom_call_target="{expected}", metadata={{op_name="c"}}, backend_config={{' in new_line
    config = json.loads(new_line.split("backend_config=", 1)[1])
    want = {"replica_groups": [[0, 1, 2, 3], [4, 5, 6, 7]], "channel_id": 3, "use_global_device_ids": True,
            "constrain_layout": False}
    if opcode != "all-reduce":
        want["dimension"] = 0
    if opcode != "all-gather":
        want["to_apply"] = "body"
    assert config == want
    _assert_xla_agrees(text, out, module, {"c"})


# ------------------------------------------------------------ backend_config
def _one(attrs: str, *, shape="f32[8]{0}", opcode="all-reduce", operand="f32[8]{0}") -> str:
    return f"""HloModule m

add {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}}

ENTRY main {{
  x = {operand} parameter(0)
  ROOT c = {shape} {opcode}(x){attrs}
}}

"""


def _config(out: str) -> dict:
    line = [x for x in out.splitlines() if "custom-call(" in x][0]
    value = line.split("backend_config=", 1)[1]
    assert value == json.dumps(json.loads(value), sort_keys=True, separators=(",", ":"))  # compact, sorted
    return json.loads(value)


@pytest.mark.parametrize(
    ("groups", "expected"),
    [
        ("{{0,1},{2,3},{4,5},{6,7}}", [[0, 1], [2, 3], [4, 5], [6, 7]]),
        ("{{0, 4}, {1, 5}}", [[0, 4], [1, 5]]),
        ("{}", []),
        ("[2,4]<=[8]", [[0, 1, 2, 3], [4, 5, 6, 7]]),
        ("[2,4]<=[4,2]T(1,0)", [[0, 2, 4, 6], [1, 3, 5, 7]]),
        ("[4,2]<=[2,2,2]T(2,1,0)", [[0, 4], [2, 6], [1, 5], [3, 7]]),
    ],
)
def test_replica_groups_expanded(groups, expected):
    _, _, out = _run(_one(f", replica_groups={groups}, to_apply=add"))
    assert _config(out)["replica_groups"] == expected


def test_missing_replica_groups_and_channel_give_empty_and_null():
    _, report, out = _run(_one(", to_apply=add"))
    assert _config(out) == {"replica_groups": [], "channel_id": None, "use_global_device_ids": False,
                            "constrain_layout": False, "to_apply": "add"}
    assert report.rewritten[0].target == "AwsNeuronAllReduceAdd_f32"


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


def test_empty_backend_config_is_no_backend_config():
    _, _, out = _run(_one(', replica_groups={{0,1}}, to_apply=add, backend_config=""'))
    assert "original_backend_config" not in _config(out)


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


# ------------------------------------------------------------------ the gate
LEFT_ALONE = """HloModule left_alone, num_partitions=8

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

wrapped_rs {
  w = f32[16]{0} parameter(0)
  ROOT rs = f32[2]{0} reduce-scatter(w), channel_id=5, replica_groups={{0,1,2,3,4,5,6,7}}, dimensions={0}, to_apply=add
}

ENTRY main {
  x = f32[16]{0} parameter(0)
  a2a = f32[16]{0} all-to-all(x), channel_id=1, replica_groups={{0,1,2,3,4,5,6,7}}, dimensions={0}
  cp = f32[16]{0} collective-permute(x), channel_id=2, source_target_pairs={{0,1},{1,0}}
  ars = f32[16]{0} all-reduce-start(x), channel_id=3, replica_groups={{0,1,2,3,4,5,6,7}}, to_apply=add
  ard = f32[16]{0} all-reduce-done(ars)
  ags = (f32[16]{0}, f32[128]{0}) all-gather-start(x), channel_id=4, replica_groups={{0,1,2,3,4,5,6,7}}, dimensions={0}
  agd = f32[128]{0} all-gather-done(ags)
  rss = ((f32[16]{0}), f32[2]{0}) async-start(x), calls=wrapped_rs
  rsd = f32[2]{0} async-done(rss)
  ROOT t = (f32[16]{0}, f32[16]{0}, f32[16]{0}, f32[128]{0}, f32[2]{0}) tuple(a2a, cp, ard, agd, rsd)
}

"""


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


def test_unknown_attribute_leaves_the_collective():
    text = _one(", replica_groups={{0,1}}, to_apply=add, mode=foo")
    _, report, out = _run(text)
    assert out == text
    assert "mode" in report.left[0].reason


# ------------------------------------------------------------------- scope
def _jax_pre(name: str) -> str:
    return (GOLDEN / f"{name}.hlo").read_text()


def test_entry_only_by_default_reports_outside_scope():
    text = _jax_pre("jax_pre_psum_groups")
    module, report, out = _run(text)
    assert out == text and not module.changed
    assert report.rewritten == []
    assert len(report.left) == 1 and report.left[0].reason.startswith("outside scope")
    assert "all_computations" in report.left[0].reason


def test_all_computations_skips_fusion_bodies():
    text = """HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

fused {
  p = f32[8]{0} parameter(0)
  ROOT r = f32[8]{0} all-reduce(p), replica_groups={}, to_apply=add
}

callee {
  q = f32[8]{0} parameter(0)
  ROOT r2 = f32[8]{0} all-reduce(q), replica_groups={}, to_apply=add
}

ENTRY main {
  x = f32[8]{0} parameter(0)
  f = f32[8]{0} fusion(x), kind=kLoop, calls=fused
  ROOT c = f32[8]{0} call(f), to_apply=callee
}

"""
    _, report, out = _run(text, all_computations=True)
    assert [r.instruction for r in report.rewritten] == ["r2"]
    assert [(r.instruction, "fusion" in r.reason) for r in report.left] == [("r", True)]
    _, report, _ = _run(text)
    assert report.rewritten == [] and {r.instruction for r in report.left} == {"r", "r2"}


# --------------------------------------------------------------- golden cases
GOLDEN_CASES = golden_cases.cases(PASS)


def test_golden_cases_present():
    assert {"jax_post_shard_map", "jax_pre_psum_groups", "torch_neuronx_sharding_fsdp"} <= {c.name for c in GOLDEN_CASES}


@pytest.mark.parametrize("case", GOLDEN_CASES, ids=lambda c: c.name)
def test_golden_converted_lines_agree_with_xla(case):
    """tests/test_golden.py compares the output; here every converted line is what XLA prints."""
    src = case.source()
    module, [report], out = golden_cases.run(case)
    converted = {r.instruction for r in report.rewritten}
    assert converted and report.left == []
    _assert_only_converted_lines_differ(src, out, converted)
    _assert_xla_agrees(src, out, module, converted)


# --------------------------------------------------------------------- corpus


_COLLECTIVE_RE = re.compile(r" (all-reduce|reduce-scatter|all-gather)\(")


@pytest.fixture(scope="module")
def corpus_results():
    """Every complete module of CORPUS (the real dumps, or the repository's inputs), converted."""
    results = []
    for path in COMPLETE:  # the fragments, which the reader rejects, are tests/test_roundtrip.py's
        src = read_exact(path)
        module, report, out = _run(src, all_computations=True, filename=str(path))
        results.append((path, src, module, report, out))
    return results


def test_corpus_without_collectives_is_byte_identical(corpus_results):
    checked = 0
    for path, src, module, report, out in corpus_results:
        if not _COLLECTIVE_RE.search(src):
            assert out == src and not module.changed and report.records == [], path
            checked += 1
    assert checked > (40 if HAVE_CORPUS else 0)


def test_corpus_converts_every_collective(corpus_results):
    total = 0
    for path, src, _module, report, out in corpus_results:
        if not _COLLECTIVE_RE.search(src):
            continue
        expected = len(_COLLECTIVE_RE.findall(src))
        assert len(report.rewritten) == expected, path
        assert not _COLLECTIVE_RE.search(out), path
        converted = {r.instruction for r in report.rewritten}
        _assert_only_converted_lines_differ(src, out, converted)
        total += expected
    assert total > (500 if HAVE_CORPUS else 150)


@pytest.mark.xla
def test_corpus_outputs_parse_and_converted_lines_reprint_unchanged(corpus_results):
    checked = 0
    for _path, src, module, report, out in corpus_results:
        if report.rewritten:
            _assert_xla_agrees(src, out, module, {r.instruction for r in report.rewritten})
            checked += 1
    assert checked > (40 if HAVE_CORPUS else 100)


def test_corpus_idempotent(corpus_results):
    for path, _src, _module, report, out in corpus_results:
        if report.rewritten:
            _, report2, out2 = _run(out, all_computations=True, filename=str(path))
            assert out2 == out and report2.rewritten == [], path


def test_malformed_collective_attribute_is_a_located_error():
    text = _one(", replica_groups={{0,1},{2,[3]}}, to_apply=add")
    with pytest.raises(HloError) as info:
        _run(text, filename="bad.hlo")
    err = info.value
    assert err.filename == "bad.hlo" and err.line == 11
    assert err.render().startswith("bad.hlo:11:")


# ------------------------------------------- the meaning of backend_config, read by XLA
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
        root = re.search(r"\n\s*ROOT %?[\w.\-]+ = \S+ ([\w\-]+)\(", block)
        if head and root:
            roots[head.group(1)] = root.group(1)
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
            infix = {"add": "Add", "maximum": "Max", "minimum": "Min"}.get(roots[xla["to_apply"]], "UNKNOWNOP")
            base = NAME_BASE[xla["opcode"]]
            # the name says the reduction XLA sees (a root on non-parameters is UNKNOWNOP too)
            assert record.target.startswith(base + infix) or record.target.startswith(base + "UNKNOWNOP")
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
    text = read_exact(CORPUS.parent / "inputs" / "handwritten" / "iota_replica_groups.hlo") if not HAVE_CORPUS else None
    text = text or read_exact(golden_cases.GOLDEN.parent / "inputs" / "handwritten" / "iota_replica_groups.hlo")
    module, report, _ = _run(text)
    assert _assert_backend_config_means_what_xla_reads(text, module, report) == 4
    config = json.loads(module.entry.get("all-reduce.1").backend_config)
    assert config["replica_groups"] == [[0, 4], [1, 5], [2, 6], [3, 7]]
