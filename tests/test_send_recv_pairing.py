"""fuse-send-recv on the send/recv real programs emit: several pairs on one channel,
pipelined forms, host transfers.

Pairing and the cases left alone, on hand-written modules in XLA's style (no jax needed). The
structural proof, with XLA's parser as the oracle, is in ``test_send_recv_pairing_xla.py``.
"""

from __future__ import annotations

from typing import Any

import pytest

from hlo_rewrite import parse_module, print_module
from hlo_rewrite.errors import PassError
from hlo_rewrite.passes import PassOptions, PassReport
from hlo_rewrite.pipeline import run_passes

FWD = "{{0,1},{1,2},{2,3},{3,0}}"
BWD = "{{0,3},{1,0},{2,1},{3,2}}"


def run(text: str, **options: Any) -> tuple[str, PassReport]:
    module = parse_module(text, "in.hlo")
    [report] = run_passes(module, ["fuse-send-recv"], PassOptions(**options))
    return print_module(module), report


def pair_lines(k: int, data: str, pairs: str | None, channel: int = 1, token: str | None = None) -> str:
    """One send/recv pair in XLA's decomposed collective-permute style."""
    fa = f", frontend_attributes={{_xla_send_recv_source_target_pairs={pairs}}}" if pairs else ""
    tok = token or f"tok.{k}"
    head = "" if token else f"  tok.{k} = token[] after-all()\n"
    return (
        head
        + f"  recv.{k} = (f32[4]{{0}}, u32[], token[]) recv({tok}), channel_id={channel}{fa}\n"
        f"  send.{k} = (f32[4]{{0}}, u32[], token[]) send({data}, {tok}), channel_id={channel}{fa}, "
        f"control-predecessors={{recv.{k}}}\n"
        f"  recv-done.{k} = (f32[4]{{0}}, token[]) recv-done(recv.{k}), channel_id={channel}{fa}, "
        f"control-predecessors={{send.{k}}}\n"
        f"  send-done.{k} = token[] send-done(send.{k}), channel_id={channel}{fa}, "
        f"control-predecessors={{recv-done.{k}}}\n"
        f"  data.{k} = f32[4]{{0}} get-tuple-element(recv-done.{k}), index=0\n"
    )


def module(body: str, result: str = "data.0") -> str:
    return (
        "HloModule m, num_partitions=4\n\nENTRY main {\n  p = f32[4]{0} parameter(0)\n"
        + body
        + f"  ROOT out = f32[4]{{0}} copy({result})\n}}\n"
    )


def fused_pairs(report: PassReport) -> list[tuple[str, str]]:
    """(recv-done, send-done) of every fused pair, from the report."""
    out = []
    for r in report.rewritten:
        if r.target != "get-tuple-element":
            sd = next(s for s in report.rewritten if s.target == "get-tuple-element" and s.reason == r.reason)
            out.append((r.instruction, sd.instruction))
    return out


# ------------------------------------------------------------------ pairing on one channel
def test_two_pairs_on_one_channel_pair_by_source_target_pairs() -> None:
    # the sends come first and the recvs in the opposite order: the attribute decides
    body = (
        "  tok = token[] after-all()\n"
        f"  send.a = (f32[4]{{0}}, u32[], token[]) send(p, tok), channel_id=1, "
        f"frontend_attributes={{_xla_send_recv_source_target_pairs={FWD}}}\n"
        f"  send.b = (f32[4]{{0}}, u32[], token[]) send(p, tok), channel_id=1, "
        f"frontend_attributes={{_xla_send_recv_source_target_pairs={BWD}}}\n"
        f"  recv.b = (f32[4]{{0}}, u32[], token[]) recv(tok), channel_id=1, "
        f"frontend_attributes={{_xla_send_recv_source_target_pairs={BWD}}}\n"
        f"  recv.a = (f32[4]{{0}}, u32[], token[]) recv(tok), channel_id=1, "
        f'frontend_attributes={{_xla_send_recv_source_target_pairs="{FWD}"}}\n'
        "  done.sa = token[] send-done(send.a), channel_id=1\n"
        "  done.sb = token[] send-done(send.b), channel_id=1\n"
        "  done.rb = (f32[4]{0}, token[]) recv-done(recv.b), channel_id=1\n"
        "  done.ra = (f32[4]{0}, token[]) recv-done(recv.a), channel_id=1\n"
        "  data.0 = f32[4]{0} get-tuple-element(done.ra), index=0\n"
        "  data.1 = f32[4]{0} get-tuple-element(done.rb), index=0\n"
        "  sum = f32[4]{0} add(data.0, data.1)\n"
    )
    out, report = run(module(body, "sum"))
    reasons = {r.instruction: r.reason for r in report.rewritten}
    assert reasons["done.ra"] == "channel_id=1: send 'send.a' and recv 'recv.a' fused into 'done.ra'"
    assert reasons["done.rb"] == "channel_id=1: send 'send.b' and recv 'recv.b' fused into 'done.rb'"
    assert sorted(fused_pairs(report)) == [("done.ra", "done.sa"), ("done.rb", "done.sb")]
    assert "send(" not in out and "recv(" not in out


def test_without_source_target_pairs_pairs_follow_program_order() -> None:
    text = module(pair_lines(0, "p", None) + pair_lines(1, "data.0", None), "data.1")
    out, report = run(text)
    assert fused_pairs(report) == [("recv-done.0", "send-done.0"), ("recv-done.1", "send-done.1")]
    assert "recv-done.1 = (f32[4]{0}, token[]) custom-call(data.0, tok.1)" in out


def test_same_source_target_pairs_twice_pair_in_program_order() -> None:
    text = module(pair_lines(0, "p", FWD) + pair_lines(1, "data.0", FWD), "data.1")
    _, report = run(text)
    assert fused_pairs(report) == [("recv-done.0", "send-done.0"), ("recv-done.1", "send-done.1")]


def test_one_send_one_recv_with_different_pairs_are_left_alone() -> None:
    text = module(pair_lines(0, "p", FWD).replace(f"recv(tok.0), channel_id=1, frontend_attributes="
                                                   f"{{_xla_send_recv_source_target_pairs={FWD}}}",
                                                   f"recv(tok.0), channel_id=1, frontend_attributes="
                                                   f"{{_xla_send_recv_source_target_pairs={BWD}}}"))
    assert text.count(BWD) == 1
    out, report = run(text)
    assert out == text
    [rd, sd] = report.records
    assert (rd.instruction, rd.action) == ("recv-done.0", "left")
    assert rd.reason == (f"recv 'recv.0' has no send on channel_id=1 with "
                         f"_xla_send_recv_source_target_pairs={BWD} in this computation")
    assert (sd.instruction, sd.action) == ("send-done.0", "left")


def test_one_pair_with_the_attribute_on_one_side_only_is_fused() -> None:
    text = module(pair_lines(0, "p", None).replace(
        "send(p, tok.0), channel_id=1", f"send(p, tok.0), channel_id=1, "
                                       f"frontend_attributes={{_xla_send_recv_source_target_pairs={FWD}}}"))
    _, report = run(text)
    assert fused_pairs(report) == [("recv-done.0", "send-done.0")]


def test_uneven_group_is_ambiguous_and_the_rest_of_the_channel_is_fused() -> None:
    # FWD: one pair; BWD: two sends and one recv -> left alone, FWD still fused
    extra = (
        f"  send.x = (f32[4]{{0}}, u32[], token[]) send(p, tok.1), channel_id=1, "
        f"frontend_attributes={{_xla_send_recv_source_target_pairs={BWD}}}\n"
        "  send-done.x = token[] send-done(send.x), channel_id=1\n"
    )
    text = module(pair_lines(0, "p", FWD) + pair_lines(1, "p", BWD) + extra)
    out, report = run(text)
    assert fused_pairs(report) == [("recv-done.0", "send-done.0")]
    left = {r.instruction: r.reason for r in report.left}
    assert set(left) == {"recv-done.1", "send-done.1", "send-done.x"}
    assert all(f"ambiguous: 2 sends and 1 recvs on channel_id=1 with _xla_send_recv_source_target_pairs={BWD}"
               in (reason or "") for reason in left.values())
    assert "send.x = " in out and "recv.1 = " in out


def test_halves_without_the_attribute_among_halves_with_it_are_ambiguous() -> None:
    text = module(pair_lines(0, "p", FWD) + pair_lines(1, "p", None))
    out, report = run(text)
    assert fused_pairs(report) == [("recv-done.0", "send-done.0")]
    assert [r.instruction for r in report.left] == ["recv-done.1", "send-done.1"]
    assert all("ambiguous" in (r.reason or "") for r in report.left)
    assert "recv.1 = " in out


def test_a_lone_half_is_reported_and_the_others_fused() -> None:
    lone = (
        "  tok.x = token[] after-all()\n"
        "  recv.x = (f32[4]{0}, u32[], token[]) recv(tok.x), channel_id=2\n"
        "  recv-done.x = (f32[4]{0}, token[]) recv-done(recv.x), channel_id=2\n"
    )
    _, report = run(module(pair_lines(0, "p", None) + lone))
    assert fused_pairs(report) == [("recv-done.0", "send-done.0")]
    [left] = report.left
    assert left.reason == "recv 'recv.x' has no send on channel_id=2 in this computation"


#: each send sends what the other pair received: once pair 0 is one call, pair 1's send
#: would need pair 0's result, which needs pair 1's recv-done
_FA = "frontend_attributes={_xla_send_recv_source_target_pairs=%s}"
CROSS = module(
    "  tok = token[] after-all()\n"
    f"  recv.0 = (f32[4]{{0}}, u32[], token[]) recv(tok), channel_id=1, {_FA % FWD}\n"
    f"  recv.1 = (f32[4]{{0}}, u32[], token[]) recv(tok), channel_id=1, {_FA % BWD}\n"
    "  recv-done.0 = (f32[4]{0}, token[]) recv-done(recv.0), channel_id=1\n"
    "  recv-done.1 = (f32[4]{0}, token[]) recv-done(recv.1), channel_id=1\n"
    "  data.0 = f32[4]{0} get-tuple-element(recv-done.0), index=0\n"
    "  data.1 = f32[4]{0} get-tuple-element(recv-done.1), index=0\n"
    f"  send.0 = (f32[4]{{0}}, u32[], token[]) send(data.1, tok), channel_id=1, {_FA % FWD}\n"
    f"  send.1 = (f32[4]{{0}}, u32[], token[]) send(data.0, tok), channel_id=1, {_FA % BWD}\n"
    "  send-done.0 = token[] send-done(send.0), channel_id=1\n"
    "  send-done.1 = token[] send-done(send.1), channel_id=1\n"
)


def test_two_pairs_that_feed_each_other_fuse_one_and_leave_the_other_as_a_cycle() -> None:
    out, report = run(CROSS)
    assert fused_pairs(report) == [("recv-done.0", "send-done.0")]
    assert [(r.instruction, r.action) for r in report.left] == [("recv-done.1", "left"), ("send-done.1", "left")]
    assert "fusing would create a cycle: the send's data ('data.0')" in (report.left[0].reason or "")
    assert "send.1 = " in out and "recv.1 = " in out
    assert print_module(parse_module(out)) == out


def test_missing_channel_id_is_still_an_error() -> None:
    text = module(pair_lines(0, "p", FWD) + pair_lines(1, "p", FWD).replace(
        "send(p, tok.1), channel_id=1", "send(p, tok.1)"))
    with pytest.raises(PassError) as info:
        run(text)
    assert info.value.message == "Send and Recv must have channel_id: send 'send.1' has none"
    assert info.value.line == text.splitlines().index(
        next(line for line in text.splitlines() if line.startswith("  send.1 = "))) + 1


def test_host_transfers_on_a_shared_channel_are_left_alone() -> None:
    host = (
        "  tok.h = token[] after-all()\n"
        "  send.h = (f32[4]{0}, u32[], token[]) send(p, tok.h), channel_id=1, is_host_transfer=true\n"
        "  send-done.h = token[] send-done(send.h), channel_id=1, is_host_transfer=true\n"
    )
    out, report = run(module(pair_lines(0, "p", None) + host))
    assert fused_pairs(report) == [("recv-done.0", "send-done.0")]
    [left] = report.left
    assert (left.instruction, left.reason) == ("send-done.h", "host transfer (is_host_transfer=true)")
    assert "send.h = " in out


# ------------------------------------------------------------------ pipelined forms
#: XLA's pipelined send/recv: the next iteration's transfer is issued at the end of the body and
#: completed at the top of the next one (or after the loop); the contexts ride in the loop tuple
PIPELINED = """HloModule pipelined, num_partitions=4

cond {
  param = (u32[], (f32[4], u32[], token[]), (f32[4], u32[], token[])) parameter(0)
  count = u32[] get-tuple-element(param), index=0
  ub = u32[] constant(4)
  ROOT lt = pred[] compare(count, ub), direction=LT
}

body {
  param = (u32[], (f32[4], u32[], token[]), (f32[4], u32[], token[])) parameter(0)
  count = u32[] get-tuple-element(param), index=0
  recv.in = (f32[4], u32[], token[]) get-tuple-element(param), index=1
  recv-done.in = (f32[4], token[]) recv-done(recv.in), channel_id=1, frontend_attributes={_xla_send_recv_pipeline="0"}
  send.in = (f32[4], u32[], token[]) get-tuple-element(param), index=2
  send-done.in = token[] send-done(send.in), channel_id=1, frontend_attributes={_xla_send_recv_pipeline="0"}
  data = f32[4] get-tuple-element(recv-done.in), index=0
  one = u32[] constant(1)
  next = u32[] add(count, one)
  tok = token[] after-all()
  recv.out = (f32[4], u32[], token[]) recv(tok), channel_id=1, frontend_attributes={_xla_send_recv_pipeline="0",_xla_send_recv_source_target_pairs={{0,1},{1,2},{2,3}}}
  send.out = (f32[4], u32[], token[]) send(data, tok), channel_id=1, frontend_attributes={_xla_send_recv_pipeline="0",_xla_send_recv_source_target_pairs={{0,1},{1,2},{2,3}}}, control-predecessors={recv.out}
  tok.2 = token[] after-all()
  recv.2 = (f32[4], u32[], token[]) recv(tok.2), channel_id=1, frontend_attributes={_xla_send_recv_pipeline="1",_xla_send_recv_source_target_pairs={{3,0}}}
  send.2 = (f32[4], u32[], token[]) send(data, tok.2), channel_id=1, frontend_attributes={_xla_send_recv_pipeline="1",_xla_send_recv_source_target_pairs={{3,0}}}, control-predecessors={recv.2}
  recv-done.2 = (f32[4], token[]) recv-done(recv.2), channel_id=1, frontend_attributes={_xla_send_recv_pipeline="1"}, control-predecessors={send.2}
  send-done.2 = token[] send-done(send.2), channel_id=1, frontend_attributes={_xla_send_recv_pipeline="1"}, control-predecessors={recv-done.2}
  ROOT result = (u32[], (f32[4], u32[], token[]), (f32[4], u32[], token[])) tuple(next, recv.out, send.out)
}

ENTRY main {
  p = f32[4] parameter(0)
  zero = u32[] constant(0)
  tok.0 = token[] after-all()
  recv.0 = (f32[4], u32[], token[]) recv(tok.0), channel_id=1, frontend_attributes={_xla_send_recv_pipeline="0",_xla_send_recv_source_target_pairs={{0,1},{1,2},{2,3}}}
  send.0 = (f32[4], u32[], token[]) send(p, tok.0), channel_id=1, frontend_attributes={_xla_send_recv_pipeline="0",_xla_send_recv_source_target_pairs={{0,1},{1,2},{2,3}}}, control-predecessors={recv.0}
  init = (u32[], (f32[4], u32[], token[]), (f32[4], u32[], token[])) tuple(zero, recv.0, send.0)
  loop = (u32[], (f32[4], u32[], token[]), (f32[4], u32[], token[])) while(init), condition=cond, body=body
  recv.last = (f32[4], u32[], token[]) get-tuple-element(loop), index=1
  recv-done.last = (f32[4], token[]) recv-done(recv.last), channel_id=1, frontend_attributes={_xla_send_recv_pipeline="0"}
  send.last = (f32[4], u32[], token[]) get-tuple-element(loop), index=2
  send-done.last = token[] send-done(send.last), channel_id=1, frontend_attributes={_xla_send_recv_pipeline="0"}
  ROOT out = f32[4] get-tuple-element(recv-done.last), index=0
}
"""

#: a send and a recv whose dones are in another computation: the contexts are passed to a call
SPLIT_ACROSS_CALL = """HloModule split, num_partitions=2

finish {
  ctx = ((f32[4], u32[], token[]), (f32[4], u32[], token[])) parameter(0)
  recv = (f32[4], u32[], token[]) get-tuple-element(ctx), index=0
  send = (f32[4], u32[], token[]) get-tuple-element(ctx), index=1
  recv-done = (f32[4], token[]) recv-done(recv), channel_id=5
  send-done = token[] send-done(send), channel_id=5
  ROOT data = f32[4] get-tuple-element(recv-done), index=0
}

ENTRY main {
  p = f32[4] parameter(0)
  tok = token[] after-all()
  recv = (f32[4], u32[], token[]) recv(tok), channel_id=5
  send = (f32[4], u32[], token[]) send(p, tok), channel_id=5, control-predecessors={recv}
  ctx = ((f32[4], u32[], token[]), (f32[4], u32[], token[])) tuple(recv, send)
  ROOT out = f32[4] call(ctx), to_apply=finish
}
"""


def test_pipelined_loop_fuses_only_the_pair_one_computation_holds() -> None:
    out, report = run(PIPELINED, all_computations=True)
    assert fused_pairs(report) == [("recv-done.2", "send-done.2")]
    left = {(r.computation, r.instruction): r.reason or "" for r in report.left}
    assert set(left) == {
        ("body", "recv-done.in"), ("body", "send-done.in"), ("body", "recv.out"), ("body", "send.out"),
        ("main", "recv.0"), ("main", "send.0"), ("main", "recv-done.last"), ("main", "send-done.last"),
    }
    assert "pipelined across a while loop" in left[("body", "recv-done.in")]
    assert "its send-done is not in this computation" in left[("body", "send.out")]
    assert "used by 'init'" in left[("main", "recv.0")]
    # the pipelined halves share channel 1 with the fused pair and do not disturb its pairing
    assert 'frontend_attributes={_xla_send_recv_pipeline="1",_xla_send_recv_source_target_pairs={{3,0}}}' in out
    for name in ("recv.in", "send.in", "recv.out", "send.out", "recv.0", "send.0", "recv.last", "send.last"):
        assert f"  {name} = " in out


def test_send_and_done_in_different_computations_are_left_alone() -> None:
    out, report = run(SPLIT_ACROSS_CALL, all_computations=True)
    assert out == SPLIT_ACROSS_CALL
    reasons = [(r.computation, r.instruction, r.reason or "") for r in report.records]
    assert [(c, i) for c, i, _ in reasons] == [
        ("finish", "recv-done"), ("finish", "send-done"), ("main", "recv"), ("main", "send")
    ]
    assert "carried through a tuple" in reasons[0][2]
    assert "its recv-done is not in this computation (the recv is used by 'ctx')" in reasons[2][2]
