"""fuse-send-recv (docs/passes/fuse-send-recv.md): reports, the cases left alone, errors, strict mode.

The golden cases are ``tests/golden/fuse-send-recv/<case>.hlo`` (compared with their expected
output by ``tests/test_golden.py``). Here: each case's report, untouched lines, the cases left
alone, errors and strict mode; what XLA says about the same modules is in
``tests/test_fuse_send_recv_xla.py``.
"""

from __future__ import annotations

import re
from pathlib import Path

import golden_cases
import pytest
from conftest import read_exact

from hlo_rewrite import parse_module, print_module
from hlo_rewrite.errors import PassError
from hlo_rewrite.escapes import c_escape, c_unescape
from hlo_rewrite.passes import PassOptions, PassReport
from hlo_rewrite.passes.fuse_send_recv import FuseSendRecv
from hlo_rewrite.pipeline import run_passes

GOLDEN = Path(__file__).resolve().parent / "golden" / "fuse-send-recv"

#: the golden cases of this pass
CASES = {c.name: c for c in golden_cases.cases("fuse-send-recv")}

# case -> the report: (instruction, action, a piece of the reason)
RECORDS: dict[str, list[tuple[str, str, str]]] = {
    "decomposed-collective-permute": [
        ("recv-done", "rewritten", "channel_id=1: send 'send' and recv 'recv'"),
        ("send-done", "rewritten", "channel_id=1"),
    ],
    "psend-precv-ring": [
        ("precv.5", "rewritten", "send 'psend.4' and recv 'precv.4'"),
        ("psend.5", "rewritten", "channel_id=1"),
    ],
    "two-channels": [
        ("recv-done.0", "rewritten", "channel_id=1"),
        ("send-done.0", "rewritten", "channel_id=1"),
        ("recv-done.1", "rewritten", "channel_id=2"),
        ("send-done.1", "rewritten", "channel_id=2"),
    ],
    "pipelined-while": [
        ("recv-done.q", "left", "pipelined across a while loop"),
        ("send-done.q", "left", "pipelined across a while loop"),
        ("recv", "left", "its recv-done is not in this computation"),
        ("send", "left", "its send-done is not in this computation"),
        ("recv-done.w", "left", "pipelined across a while loop"),
        ("send-done.w", "left", "pipelined across a while loop"),
        ("recv.0", "left", "used by 'init'"),
        ("send.0", "left", "used by 'init'"),
        ("recv-done.2", "rewritten", "channel_id=2"),
        ("send-done.2", "rewritten", "channel_id=2"),
    ],
    "host-transfer": [
        ("send-done.host", "left", "host transfer"),
        ("recv-done.host", "left", "host transfer"),
        ("recv-done", "rewritten", "channel_id=1"),
        ("send-done", "rewritten", "channel_id=1"),
    ],
    "unpaired": [
        ("send-done", "left", "send 'send' has no recv on channel_id=3"),
        ("recv-done", "left", "recv 'recv' has no send on channel_id=4"),
    ],
    "cycle": [
        ("recv-done", "left", "cycle: the send's data ('doubled') depends on the recv"),
        ("send-done", "left", "cycle"),
    ],
    "scheduled": [
        ("recv-done", "rewritten", "channel_id=1"),
        ("send-done", "rewritten", "channel_id=1"),
    ],
}


def run(text: str, filename: str = "in.hlo", **options) -> tuple[str, PassReport]:
    module = parse_module(text, filename)
    [report] = run_passes(module, ["fuse-send-recv"], PassOptions(**options))
    return print_module(module), report


def case_input(case: str) -> str:
    return CASES[case].source()


_OUTPUTS: dict[str, tuple[str, PassReport]] = {}


def case_output(case: str) -> tuple[str, PassReport]:
    if case not in _OUTPUTS:
        _, [report], out = golden_cases.run(CASES[case])
        _OUTPUTS[case] = (out, report)
    return _OUTPUTS[case]


# ------------------------------------------------------------------ golden cases
def test_every_golden_case_has_its_report() -> None:
    assert set(CASES) == set(RECORDS)


@pytest.mark.parametrize("case", sorted(CASES))
def test_report(case: str) -> None:
    _, report = case_output(case)
    got = [(r.instruction, r.action, r.reason or "") for r in report.records]
    assert [(n, a) for n, a, _ in got] == [(n, a) for n, a, _ in RECORDS[case]]
    for (_, _, reason), (_, _, piece) in zip(got, RECORDS[case], strict=True):
        assert piece in reason
    for r in report.rewritten:
        assert r.target in ("AwsNeuronSendRecv", "get-tuple-element")


@pytest.mark.parametrize("case", sorted(CASES))
def test_running_twice_equals_running_once(case: str) -> None:
    out, _ = case_output(case)
    _, [report], again = golden_cases.run(CASES[case], out)
    assert again == out
    assert not report.rewritten


def _lines_by_name(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        m = re.match(r"\s*(?:ROOT )?%?([A-Za-z_][\w.\-]*) = ", line)
        if m:
            out.setdefault(m.group(1), line.strip())
    return out


@pytest.mark.parametrize("case", sorted(CASES))
def test_untouched_lines_stay_byte_identical(case: str) -> None:
    text = case_input(case)
    out, report = case_output(case)
    module = parse_module(text)
    removed = set()
    for record in report.rewritten:
        removed.add(record.instruction)
        comp = module.computation(record.computation)
        assert comp is not None
        done = comp.get(record.instruction)
        assert done is not None
        removed.add(done.operands[0])  # the send / recv
    out_lines = set(out.splitlines(keepends=True))
    for comp in module.computations:
        for instr in comp.instructions:
            if instr.name in removed or instr.text is None:
                continue
            if any(p in removed for p in instr.control_predecessors):
                continue  # its control-predecessors now name the fused op
            assert instr.text in out_lines, instr.name


def test_corpus_decomposed_permute_fused_form() -> None:
    out, _ = case_output("decomposed-collective-permute")
    assert "send(" not in out and "recv(" not in out
    fused = _lines_by_name(out)["recv-done"]
    assert fused.startswith("%recv-done = (f32[8,16]{1,0}, token[]) custom-call(%p, %after-all), ")
    assert 'custom_call_target="AwsNeuronSendRecv", custom_call_has_side_effect=true, ' in fused
    assert "_xla_send_recv_source_target_pairs={{0,1},{1,2},{2,3},{3,4},{4,5},{5,6},{6,7},{7,0}}" in fused
    assert fused.endswith(', backend_config="channel_id=1"')
    assert "control-predecessors" not in fused  # {recv} and {recv-done} referred to the pair itself
    assert _lines_by_name(out)["send-done"] == "%send-done = token[] get-tuple-element(%recv-done), index=1"


def test_psend_precv_needs_all_computations() -> None:
    text = case_input("psend-precv-ring")
    out, report = run(text)
    assert out == text
    # the pair outside ENTRY is reported once per done, in the one out-of-scope wording
    assert [(r.instruction, r.action) for r in report.records] == [("psend.5", "left"), ("precv.5", "left")]
    assert all(r.reason == "outside scope: computation 'xla.sdy.manual_computation_body.1' is not the ENTRY "
               "computation; all_computations extends the scope" for r in report.records)


def test_two_channels_carries_metadata_control_and_escaped_attributes() -> None:
    out, _ = case_output("two-channels")
    lines = _lines_by_name(out)
    first = lines["recv-done.0"]
    # recv-done's own attribute merged with the recv's and send's, keys sorted
    assert ('frontend_attributes={_xla_gpu_collective_stream="p2p",_xla_send_recv_pipeline="0",'
            "_xla_send_recv_source_target_pairs={{0,1},{1,2},{2,3}}}") in first
    assert 'metadata={op_name="jit(f)/ppermute" source_file="f.py" source_line=10}' in first
    second = lines["recv-done.1"]
    assert 'note="back edge: \\"3->0\\""' in second
    # the recv's token came from another after-all: kept as a control predecessor
    assert "control-predecessors={%after-all.2}" in second
    # an instruction ordered after the removed send is now ordered after the fused op
    assert lines["negate"].endswith("control-predecessors={%recv-done.1}")


# --------------------------------------------------------------------- options
SIMPLE = """HloModule simple

ENTRY %main (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  %tok = token[] after-all()
  %recv = (f32[4]{0}, u32[], token[]) recv(%tok), channel_id=7
  %send = (f32[4]{0}, u32[], token[]) send(%p, %tok), channel_id=7, control-predecessors={%recv}
  %recv-done = (f32[4]{0}, token[]) recv-done(%recv), channel_id=7, control-predecessors={%send}
  %send-done = token[] send-done(%send), channel_id=7, control-predecessors={%recv-done}
  ROOT %data = f32[4]{0} get-tuple-element(%recv-done), index=0
}
"""


def test_frontend_attribute_conflict_is_left_alone() -> None:
    text = SIMPLE.replace(
        "recv(%tok), channel_id=7", 'recv(%tok), channel_id=7, frontend_attributes={_xla_send_recv_pipeline="0"}'
    ).replace(
        "send(%p, %tok), channel_id=7", 'send(%p, %tok), channel_id=7, frontend_attributes={_xla_send_recv_pipeline="1"}'
    )
    out, report = run(text)
    assert out == text
    assert [r.action for r in report.records] == ["left", "left"]
    assert "frontend attribute '_xla_send_recv_pipeline' differs" in report.records[0].reason


def test_quoted_and_braced_values_of_one_attribute_agree() -> None:
    # XLA prints "{{0,1}}" as {{0,1}}: the same value, so no conflict
    text = SIMPLE.replace(
        "recv(%tok), channel_id=7", 'recv(%tok), channel_id=7, frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1}}"}'
    ).replace(
        "send(%p, %tok), channel_id=7", "send(%p, %tok), channel_id=7, frontend_attributes={_xla_send_recv_source_target_pairs={{0,1}}}"
    )
    out, report = run(text)
    assert len(report.rewritten) == 2
    assert "frontend_attributes={_xla_send_recv_source_target_pairs={{0,1}}}" in out


def test_c_escape_round_trip() -> None:
    for s in ['plain', 'a "q" \\ b', "tab\tnl\n'", "ünï"]:
        assert c_unescape(c_escape(s)) == s
    assert c_escape("it's") == "it\\'s"
    assert c_unescape("\\101\\x42") == "AB"
    # code points, as absl::CUnescape reads them: written again as the UTF-8 bytes they stand for
    assert c_unescape("\\u00e9t\\U0001F600") == "\u00e9t\U0001F600"
    assert c_escape(c_unescape("caf\\u00e9")) == "caf\\303\\251"
    assert c_unescape("\\u00e") == "\\u00e"  # refused by absl: kept as written


# ---------------------------------------------------------------------- errors
def _raises(text: str, **options) -> PassError:
    with pytest.raises(PassError) as info:
        run(text, "bad.hlo", **options)
    err = info.value
    assert err.filename == "bad.hlo"
    assert err.line is not None and err.column is not None
    assert err.source_line == text.splitlines()[err.line - 1]
    assert err.render().splitlines()[-1].strip() == "^"
    return err


@pytest.mark.parametrize("which", ["send", "recv"])
def test_missing_channel_id(which: str) -> None:
    if which == "send":
        text = SIMPLE.replace("send(%p, %tok), channel_id=7", "send(%p, %tok)")
    else:
        text = SIMPLE.replace("recv(%tok), channel_id=7", "recv(%tok)")
    err = _raises(text)
    assert err.message.startswith("Send and Recv must have channel_id")
    assert f"{which} '{which}'" in err.message
    assert err.source_line.lstrip().startswith(f"%{which} = ")


def test_missing_channel_id_on_a_pipelined_send() -> None:
    text = read_exact(GOLDEN / "pipelined-while.hlo").replace(
        "send(shifted, after-all), channel_id=1,", "send(shifted, after-all),"
    )
    err = _raises(text, all_computations=True)
    assert err.message.startswith("Send and Recv must have channel_id: send 'send'")


def test_an_error_in_a_later_computation_leaves_the_module_unchanged() -> None:
    # the body's pair on channel 2 is fusable, but ENTRY's send.0 has no channel_id
    text = read_exact(GOLDEN / "pipelined-while.hlo").replace(
        "send(input, after-all.0), channel_id=1,", "send(input, after-all.0),"
    )
    module = parse_module(text, "bad.hlo")
    with pytest.raises(PassError, match="send 'send.0' has none"):
        FuseSendRecv(PassOptions(all_computations=True)).run(module)
    assert not module.changed
    assert print_module(module) == text


def test_two_sends_one_recv_on_one_channel_is_left_alone() -> None:
    # several pairs may share a channel; two sends and one recv cannot be paired for sure
    text = SIMPLE.replace(
        "  ROOT %data",
        "  %send.2 = (f32[4]{0}, u32[], token[]) send(%p, %tok), channel_id=7\n"
        "  %send-done.2 = token[] send-done(%send.2), channel_id=7\n  ROOT %data",
    )
    out, report = run(text)
    assert out == text
    assert [(r.instruction, r.action) for r in report.records] == [
        ("recv-done", "left"), ("send-done", "left"), ("send-done.2", "left")
    ]
    assert all("ambiguous: 2 sends and 1 recvs on channel_id=7" in (r.reason or "") for r in report.records)


def test_two_recvs_one_send_on_one_channel_is_left_alone() -> None:
    text = SIMPLE.replace(
        "  ROOT %data",
        "  %recv.2 = (f32[4]{0}, u32[], token[]) recv(%tok), channel_id=7\n"
        "  %recv-done.2 = (f32[4]{0}, token[]) recv-done(%recv.2), channel_id=7\n  ROOT %data",
    )
    out, report = run(text)
    assert out == text
    assert len(report.left) == 3 and not report.rewritten
    assert "ambiguous: 1 sends and 2 recvs on channel_id=7" in (report.records[0].reason or "")


def test_done_whose_operand_is_not_the_matching_op() -> None:
    text = SIMPLE.replace("send-done(%send)", "send-done(%recv)")
    err = _raises(text)
    assert err.message == "operand 0 of send-done 'send-done' must be a send, but 'recv' is a recv"
    assert err.line == 9


def test_one_send_completed_twice() -> None:
    text = SIMPLE.replace(
        "  ROOT %data", "  %send-done.2 = token[] send-done(%send), channel_id=7\n  ROOT %data"
    )
    err = _raises(text)
    assert err.message == "send 'send' is completed twice: by 'send-done' and by 'send-done.2'"


def test_done_channel_differs_from_its_op() -> None:
    text = SIMPLE.replace("recv-done(%recv), channel_id=7", "recv-done(%recv), channel_id=8")
    err = _raises(text)
    assert "channel_id=8 but its recv 'recv' has channel_id=7" in err.message


# ------------------------------------------------------------------ strict mode
STRICT = """HloModule strict

ENTRY %main (p: f32[4]) -> RESULT {
  %p = f32[4]{0} parameter(0)
  %tok = token[] after-all()
  %recv = (f32[4]{0}, u32[], token[]) recv(%tok), channel_id=1
  %send = (f32[4]{0}, u32[], token[]) send(%p, %tok), channel_id=1, control-predecessors={%recv}
  %recv-done = (f32[4]{0}, token[]) recv-done(%recv), channel_id=1, control-predecessors={%send}
  %send-done = token[] send-done(%send), channel_id=1, control-predecessors={%recv-done}
  %data = f32[4]{0} get-tuple-element(%recv-done), index=0
  %recv-token = token[] get-tuple-element(%recv-done), index=1
BODY}
"""


def strict_module(result: str, body: str) -> str:
    return STRICT.replace("RESULT", result).replace("BODY", body)


STRICT_FAILING = {
    "Unexpected non-root tuple uses token": (
        "f32[4]",
        "  %pair = (f32[4]{0}, token[]) tuple(%data, %send-done)\n"
        "  ROOT %out = f32[4]{0} get-tuple-element(%pair), index=0\n",
        "pair",
    ),
    "Unexpected non-CustomCall op returns token": (
        "(f32[4], token[])",
        "  %joined = token[] after-all(%send-done, %recv-token)\n"
        "  ROOT %out = (f32[4]{0}, token[]) tuple(%data, %joined)\n",
        "joined",
    ),
    "Unexpected instruction type uses token": (
        "f32[4]",
        "  %ordered = f32[4]{0} add-dependency(%data, %recv-token)\n"
        "  ROOT %out = f32[4]{0} negate(%ordered)\n",
        "ordered",
    ),
}

STRICT_PASSING = strict_module(
    "(f32[4], token[], token[])",
    "  %marker = token[] custom-call(%recv-token), custom_call_target=\"Marker\", custom_call_has_side_effect=true\n"
    "  ROOT %out = (f32[4]{0}, token[], token[]) tuple(%data, %send-done, %marker)\n",
)

NESTED = """HloModule nested

ENTRY %main (p: (f32[4], (s32[], s32[]))) -> (f32[4], (s32[], s32[])) {
  %p = (f32[4]{0}, (s32[], s32[])) parameter(0)
  %tok = token[] after-all()
  %recv = ((f32[4]{0}, (s32[], s32[])), u32[], token[]) recv(%tok), channel_id=1
  %send = ((f32[4]{0}, (s32[], s32[])), u32[], token[]) send(%p, %tok), channel_id=1
  %recv-done = ((f32[4]{0}, (s32[], s32[])), token[]) recv-done(%recv), channel_id=1
  %send-done = token[] send-done(%send), channel_id=1
  ROOT %data = (f32[4]{0}, (s32[], s32[])) get-tuple-element(%recv-done), index=0
}
"""
FLAT = NESTED.replace("(s32[], s32[])", "s32[]")


@pytest.mark.parametrize("message", sorted(STRICT_FAILING))
def test_strict_token_check_fails(message: str) -> None:
    result, body, culprit = STRICT_FAILING[message]
    text = strict_module(result, body)
    err = _raises(text, strict_tokens=True)
    assert err.message.startswith(message + ": ")
    assert err.source_line.lstrip().startswith(f"%{culprit} = ")
    # without strict mode the same module is fused, and the output is valid
    out, report = run(text)
    assert len(report.rewritten) == 2


def test_strict_token_checks_pass_on_allowed_uses() -> None:
    out, report = run(STRICT_PASSING, strict_tokens=True)
    assert len(report.rewritten) == 2
    assert out == run(STRICT_PASSING)[0]


def test_strict_nested_tuple_fails() -> None:
    err = _raises(NESTED, strict_tokens=True)
    assert err.message.startswith("Cannot handle nested tuple shape: ")
    assert err.source_line.lstrip().startswith("%recv-done = ")
    out, report = run(NESTED)
    assert len(report.rewritten) == 2
    assert "%recv-done = ((f32[4]{0}, (s32[], s32[])), token[]) custom-call(%p, %tok)" in out


def test_strict_flat_tuple_passes() -> None:
    out, report = run(FLAT, strict_tokens=True)
    assert len(report.rewritten) == 2
    assert "%recv-done = ((f32[4]{0}, s32[]), token[]) custom-call(%p, %tok)" in out


def test_pass_metadata() -> None:
    assert FuseSendRecv.name == "fuse-send-recv"
    assert "\n" not in FuseSendRecv.description
