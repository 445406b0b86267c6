"""convert-collectives-to-custom-call (docs/passes/convert-collectives-to-custom-call.md).

Names, backend_config, scope, and every input file; what XLA says about the same modules is in
``tests/test_convert_collectives_xla.py``.
Expected target names come from the contract's tables written out below, never from the
code under test. XLA (jaxlib) checks that every output parses and that each converted
line is exactly what XLA's printer prints for it. The only normalisation before comparing a
converted line with XLA's reprint is removing the line's indentation; on both input and output,
``replace_unspecified_api`` (XLA rejects torch-neuronx's API_VERSION_UNSPECIFIED); and, in
modules with a stack-frame table (which XLA renumbers when it prints), ``stack_frame_id=N``
is compared separately: it must be the id XLA's print of the *input* gives the collective.
"""

from __future__ import annotations

import functools
import json
import re

import golden_cases
import pytest
from conftest import HAVE_CORPUS, read_exact
from test_roundtrip import COMPLETE

from hlo_rewrite import parse_module, print_module
from hlo_rewrite.errors import HloError
from hlo_rewrite.passes import PassOptions
from hlo_rewrite.pipeline import run_passes

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


def test_empty_backend_config_is_no_backend_config():
    _, _, out = _run(_one(', replica_groups={{0,1}}, to_apply=add, backend_config=""'))
    assert "original_backend_config" not in _config(out)


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


# --------------------------------------------------------------------- corpus


_COLLECTIVE_RE = re.compile(r" (all-reduce|reduce-scatter|all-gather)\(")


@functools.cache
def convert_complete_inputs():
    """Every complete module of CORPUS (the real dumps, or the repository's inputs), converted."""
    results = []
    for path in COMPLETE:  # the fragments, which the reader rejects, are tests/test_roundtrip.py's
        src = read_exact(path)
        module, report, out = _run(src, all_computations=True, filename=str(path))
        results.append((path, src, module, report, out))
    return results


@pytest.fixture(scope="module")
def corpus_results():
    return convert_complete_inputs()


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


# ------------------------------------------- backend_config printed raw, by XLA's lexer rule


def _lexes_as_one_group(text: str) -> bool:
    """XLA's lexer, character by character: one ``{...}`` group, braces in strings not counted,
    a backslash in a string taking the next character along."""
    if not text.startswith("{"):
        return False
    depth, i = 0, 0
    while i < len(text):
        ch = text[i]
        if ch == '"':
            i += 1
            while i < len(text) and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            if i >= len(text):
                return False
        elif ch in "{}":
            depth += 1 if ch == "{" else -1
            if depth == 0:
                return i == len(text) - 1
        i += 1
    return False


@pytest.mark.parametrize("text", [
    "{}", '{"a":1}', '{"a":"}"}', '{"a":"\\"}"}', '{"a\\"}', "{{}}", "{}{}", "{}}", "{{}", '{"x"', '{"}',
    '{"a":{"b":[1,2]}}', "{a}", "", "}", '"{}"', '{"\\\\"}', '{"\\\\\\"}"}', "{\n}", '{"\n"}',
])
def test_a_backend_config_prints_raw_only_when_it_lexes_as_one_group(text):
    from hlo_rewrite.passes.naming import lexes_as_json_dict

    assert lexes_as_json_dict(text) == _lexes_as_one_group(text)


def test_the_lexing_rule_on_any_text_of_braces_quotes_and_backslashes():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from hlo_rewrite.passes.naming import lexes_as_json_dict

    @settings(max_examples=3000, deadline=None)
    @given(st.text(alphabet='{}"\\ a\n', max_size=14))
    def agree(text):
        assert lexes_as_json_dict(text) == _lexes_as_one_group(text)

    agree()
