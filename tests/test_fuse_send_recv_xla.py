"""fuse-send-recv with XLA (jaxlib) as the oracle: every golden input and output and every module
of the unit tests parses with XLA's own parser, and new lines are what XLA's printer prints."""

from __future__ import annotations

import re

import pytest
from conftest import needs_xla
from test_fuse_send_recv import (
    CASES,
    FLAT,
    NESTED,
    SIMPLE,
    STRICT_FAILING,
    STRICT_PASSING,
    _lines_by_name,
    case_input,
    case_output,
    run,
    strict_module,
)

from hlo_rewrite import parse_module

xla_oracle = needs_xla()
pytestmark = pytest.mark.xla

STRICT_MODULES = {
    **{message: strict_module(result, body) for message, (result, body, _) in STRICT_FAILING.items()},
    "passing": STRICT_PASSING,
    "nested": NESTED,
    "flat": FLAT,
}


@pytest.mark.parametrize("name", sorted(STRICT_MODULES))
def test_strict_mode_modules_and_their_fused_outputs_parse_with_xla(name: str) -> None:
    text = STRICT_MODULES[name]
    xla_oracle.xla_parse(text)
    out, report = run(text)
    assert len(report.rewritten) == 2
    xla_oracle.xla_parse(out)


@pytest.mark.parametrize("case", sorted(CASES))
def test_input_and_output_parse_with_xla(case: str) -> None:
    xla_oracle.xla_parse(case_input(case))
    out, _ = case_output(case)
    xla_oracle.xla_parse(out)


@pytest.mark.parametrize("case", sorted(CASES))
def test_new_lines_are_what_xla_prints(case: str) -> None:
    out, report = case_output(case)
    module = parse_module(out)
    xla = _lines_by_name(
        xla_oracle.xla_reprint(out, operand_shapes=module.style.operand_shapes, percent=module.style.percent)
    )
    ours = _lines_by_name(out)
    for record in report.rewritten:
        expected = xla[record.instruction]
        if "]{" not in ours[record.instruction]:
            # the input writes shapes without layouts; XLA's printer adds the default ones
            expected = re.sub(r"\]\{[0-9,]*\}", "]", expected)
        assert ours[record.instruction] == expected


def test_target_option() -> None:
    out, report = run(SIMPLE, send_recv_target='NeuronP2P"x')
    assert 'custom_call_target="NeuronP2P\\"x", custom_call_has_side_effect=true' in out
    assert 'backend_config="channel_id=7"' in out
    assert report.rewritten[0].target == 'NeuronP2P"x'
    xla_oracle.xla_parse(out)


def test_cycle_through_a_control_predecessor_is_left_alone() -> None:
    # the send must wait for 'late', which waits for the recv-done: fusing would make a cycle
    text = """HloModule control_cycle

ENTRY %main (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  %tok = token[] after-all()
  %recv = (f32[4]{0}, u32[], token[]) recv(%tok), channel_id=7
  %recv-done = (f32[4]{0}, token[]) recv-done(%recv), channel_id=7
  %late = f32[4]{0} negate(%p), control-predecessors={%recv-done}
  %send = (f32[4]{0}, u32[], token[]) send(%p, %tok), channel_id=7, control-predecessors={%recv, %late}
  %send-done = token[] send-done(%send), channel_id=7
  ROOT %data = f32[4]{0} get-tuple-element(%recv-done), index=0
}
"""
    xla_oracle.xla_parse(text)
    out, report = run(text)
    assert out == text
    assert [r.action for r in report.records] == ["left", "left"]
    assert "control predecessor 'late'" in report.records[0].reason


def test_two_sends_one_recv_on_one_channel_xla_reads_and_the_pass_leaves() -> None:
    text = SIMPLE.replace(
        "  ROOT %data",
        "  %send.2 = (f32[4]{0}, u32[], token[]) send(%p, %tok), channel_id=7\n"
        "  %send-done.2 = token[] send-done(%send.2), channel_id=7\n  ROOT %data",
    )
    # XLA reads it; the pass cannot pair two sends with one recv for sure, so it leaves all three
    xla_oracle.xla_parse(text)
    out, report = run(text)
    assert out == text
    assert not report.rewritten and len(report.left) == 3


def test_send_with_another_user_is_left_alone() -> None:
    text = SIMPLE.replace(
        "  ROOT %data = f32[4]{0} get-tuple-element(%recv-done), index=0",
        "  %data = f32[4]{0} get-tuple-element(%recv-done), index=0\n"
        "  ROOT %out = (f32[4]{0}, (f32[4]{0}, u32[], token[])) tuple(%data, %send)",
    ).replace("-> f32[4] {", "-> (f32[4], (f32[4], u32[], token[])) {")
    xla_oracle.xla_parse(text)
    out, report = run(text)
    assert out == text
    assert "send 'send' is used by 'out' besides its send-done" in report.records[0].reason

