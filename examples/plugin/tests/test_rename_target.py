"""The plugin's own tests: run with the plugin importable (installed, or on PYTHONPATH)."""

from __future__ import annotations

import pytest
from hlo_rewrite_rename_target import RenameCustomCallTarget, RenameOptions

from hlo_rewrite import PassOptions, parse_module, print_module, run_passes

PAIR = """HloModule p

ENTRY main {
  p = f32[4] parameter(0)
  tok = token[] after-all()
  recv = (f32[4], u32[], token[]) recv(tok), channel_id=3
  send = (f32[4], u32[], token[]) send(p, tok), channel_id=3
  recv-done = (f32[4], token[]) recv-done(recv), channel_id=3
  send-done = token[] send-done(send), channel_id=3
  ROOT data = f32[4] get-tuple-element(recv-done), index=0
}
"""


def test_renames_the_fused_target() -> None:
    module = parse_module(PAIR)
    _, report = run_passes(module, ["fuse-send-recv", RenameCustomCallTarget])
    out = print_module(module)
    assert 'custom_call_target="AwsNeuronP2P", custom_call_has_side_effect=true' in out
    assert [(r.instruction, r.target) for r in report.rewritten] == [("recv-done", "AwsNeuronP2P")]


def test_options_by_pass_name() -> None:
    module = parse_module(PAIR)
    options = PassOptions(per_pass={"rename-custom-call-target": {"new": "Mine"}})
    run_passes(module, ["fuse-send-recv", RenameCustomCallTarget], options)
    assert 'custom_call_target="Mine"' in print_module(module)


def test_other_targets_stay() -> None:
    module = parse_module(PAIR)
    [report] = run_passes(module, [RenameCustomCallTarget(RenameOptions(old="Other"))])
    assert print_module(module) == PAIR and not report.records


def test_a_target_needing_escapes_is_refused() -> None:
    with pytest.raises(ValueError, match="is not a plain target name"):
        RenameOptions(new='a"b')
