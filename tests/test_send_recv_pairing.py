"""fuse-send-recv on the send/recv real programs emit: several pairs on one channel,
pipelined forms, host transfers.

Two layers:

- pairing and the cases left alone, on hand-written modules in XLA's style (no jax needed);
- the structural proof (XLA:CPU cannot execute send/recv), on JAX programs lowered in the test
  and on the hand-written modules: XLA's parser reads the output, and in XLA's own reading the
  fused call's operands are the send's data and token, every user of the recv's data reads
  element 0 of the fused call, every user of the send-done reads element 1, and no send, recv or
  done of a fused pair is left. Those tests need jax/jaxlib and skip without them.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS, read_exact

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


# ------------------------------------------------------------------ the structural proof
def _xla() -> Any:
    pytest.importorskip("jax", reason="jax/jaxlib (the XLA oracle) is not installed")
    return importlib.import_module("xla_oracle")


@dataclass
class XlaInstr:
    name: str
    opcode: str
    operands: list[str]
    index: int | None  # get-tuple-element's index


def xla_view(text: str) -> dict[str, dict[str, XlaInstr]]:
    """The module as XLA's parser read it: computation -> name -> instruction."""
    module = _xla().xla_parse(text)
    view: dict[str, dict[str, XlaInstr]] = {}
    for comp in module.computations():
        instrs: dict[str, XlaInstr] = {}
        for instr in comp.instructions():
            printed = instr.to_string()
            opcode = re.search(r" = .*? ([a-z][a-z0-9-]*)\(", printed)
            index = re.search(r", index=(\d+)", printed)
            assert opcode is not None
            instrs[instr.name] = XlaInstr(
                instr.name, opcode.group(1), [op.name for op in instr.operands()],
                int(index.group(1)) if index and opcode.group(1) == "get-tuple-element" else None,
            )
        view[comp.name] = instrs
    return view


def users(comp: dict[str, XlaInstr], name: str) -> list[str]:
    return [i.name for i in comp.values() if name in i.operands]


def assert_fused(before: str, after: str, pairs: list[tuple[str, str]], target: str = "AwsNeuronSendRecv") -> None:
    """The structural proof for each (recv-done, send-done) pair fused in ``after``."""
    old, new = xla_view(before), xla_view(after)  # XLA parses both
    assert pairs
    # a send or recv of a fused pair is now the fused call (named after its recv-done)
    moved = {half: rd for rd, sd in pairs for half in _halves(old, rd, sd)}
    for rd, sd in pairs:
        [cname] = [c for c, instrs in old.items() if rd in instrs and sd in instrs]
        o, n = old[cname], new[cname]
        send, recv = o[sd].operands[0], o[rd].operands[0]
        assert (o[send].opcode, o[recv].opcode, o[sd].opcode, o[rd].opcode) == ("send", "recv", "send-done",
                                                                                 "recv-done")
        # no send, recv or done of the pair is left
        assert send not in n and recv not in n
        fused = n[rd]
        assert fused.opcode == "custom-call"
        assert f'custom_call_target="{target}"' in _printed(after, rd)
        # the fused call's operands are the send's data and token
        assert fused.operands == o[send].operands
        # every user of the recv's data now reads element 0 of the fused call
        for data in (u for u in users(o, rd) if o[u].opcode == "get-tuple-element" and o[u].index == 0):
            assert (n[data].opcode, n[data].operands, n[data].index) == ("get-tuple-element", [rd], 0)
            assert sorted(users(n, data)) == sorted(moved.get(u, u) for u in users(o, data))
        # every other user of the recv-done reads the fused call itself
        for user in users(o, rd):
            if user not in (sd, send, recv):
                assert rd in n[user].operands
        # the send-done's users read element 1
        assert (n[sd].opcode, n[sd].operands, n[sd].index) == ("get-tuple-element", [rd], 1)
        kept = sorted(moved.get(u, u) for u in users(o, sd) if u not in (send, recv))
        assert sorted(users(n, sd)) == kept
    # instructions outside the fused pairs keep their operands
    gone = {o_name for rd, sd in pairs for o_name in _halves(old, rd, sd)}
    for cname, instrs in old.items():
        for name, instr in instrs.items():
            if name not in gone and not (set(instr.operands) & gone):
                assert new[cname][name].operands == instr.operands, name


def _halves(view: dict[str, dict[str, XlaInstr]], rd: str, sd: str) -> list[str]:
    for instrs in view.values():
        if rd in instrs and sd in instrs:
            return [instrs[rd].operands[0], instrs[sd].operands[0]]
    raise AssertionError(rd)


def _printed(text: str, name: str) -> str:
    return next(line for line in text.splitlines() if re.match(rf"\s*(ROOT )?%?{re.escape(name)} = ", line))


HAND_WRITTEN = {
    "by-source-target-pairs": (module(pair_lines(0, "p", FWD) + pair_lines(1, "data.0", BWD), "data.1"),
                               [("recv-done.0", "send-done.0"), ("recv-done.1", "send-done.1")]),
    "program-order": (module(pair_lines(0, "p", None) + pair_lines(1, "data.0", None), "data.1"),
                      [("recv-done.0", "send-done.0"), ("recv-done.1", "send-done.1")]),
    "pipelined": (PIPELINED, [("recv-done.2", "send-done.2")]),
    "pairs-feeding-each-other": (CROSS, [("recv-done.0", "send-done.0")]),
}


GOLDEN = Path(__file__).resolve().parent / "golden" / "fuse-send-recv"
#: the golden inputs of test_fuse_send_recv.py (and a corpus dump) checked the same way
FILES = {
    "two-channels": (GOLDEN / "two-channels.hlo", [("recv-done.0", "send-done.0"), ("recv-done.1", "send-done.1")]),
    "scheduled": (GOLDEN / "scheduled.hlo", [("recv-done", "send-done")]),
    "host-transfer": (GOLDEN / "host-transfer.hlo", [("recv-done", "send-done")]),
    "decomposed-collective-permute": (CORPUS / "jax" / "send_recv" / "send-recv_decomposed-collective-permute.xla.hlo",
                                      [("recv-done", "send-done")]),
}


@pytest.mark.parametrize("case", sorted(HAND_WRITTEN) + sorted(FILES))
def test_structure_of_hand_written_results(case: str) -> None:
    if case in FILES:
        path, pairs = FILES[case]
        if not path.is_file():
            pytest.skip(f"{path} not found")
        text = read_exact(path)
    else:
        text, pairs = HAND_WRITTEN[case]
    out, report = run(text, all_computations=True)
    assert sorted(fused_pairs(report)) == sorted(pairs)
    assert_fused(text, out, pairs)


# JAX programs: jax 0.10.2 lowers psend/precv only for GPU, so they are lowered for the CUDA
# platform (cross-platform lowering needs no GPU) on a mesh of 8 CPU devices
N = 8
RING_FWD = [(i, (i + 1) % N) for i in range(N)]
RING_BWD = [(i, (i - 1) % N) for i in range(N)]


def _one_pair(x: Any) -> Any:
    import jax

    return jax.lax.precv(jax.lax.psend(x, "x", RING_FWD), x, "x", RING_FWD)


def _two_pairs_in_sequence(x: Any) -> Any:
    import jax

    y = jax.lax.precv(jax.lax.psend(x, "x", RING_FWD), x, "x", RING_FWD)
    return jax.lax.precv(jax.lax.psend(y * 2, "x", RING_BWD), y, "x", RING_BWD)


def _opposite_rings(x: Any) -> Any:
    import jax

    t1 = jax.lax.psend(x, "x", RING_FWD)
    t2 = jax.lax.psend(x + 1, "x", RING_BWD)
    return jax.lax.precv(t1, x, "x", RING_FWD) + jax.lax.precv(t2, x, "x", RING_BWD)


JAX_PROGRAMS = {"one-pair": (_one_pair, 1), "two-pairs": (_two_pairs_in_sequence, 2),
                "opposite-rings": (_opposite_rings, 2)}


def lower_jax(name: str) -> str:
    _xla()  # before jax: 8 CPU devices
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import Mesh
    from jax.sharding import PartitionSpec as P

    fn, _ = JAX_PROGRAMS[name]
    if not hasattr(jax.lax, "psend"):
        pytest.skip(f"jax {jax.__version__} has no jax.lax.psend/precv")
    mesh = Mesh(np.array(jax.devices()[:N]), ("x",))
    f = jax.shard_map(fn, mesh=mesh, in_specs=P("x"), out_specs=P("x"), check_vma=False)
    traced = jax.jit(f).trace(jnp.zeros((8 * N, 16), jnp.float32))
    return str(traced.lower(lowering_platforms=("cuda",)).as_text(dialect="hlo"))


@pytest.mark.parametrize("name", sorted(JAX_PROGRAMS))
def test_jax_psend_precv_programs(name: str) -> None:
    text = lower_jax(name)
    sends = re.findall(r" send\(", text)
    assert len(sends) == JAX_PROGRAMS[name][1]
    assert set(re.findall(r"channel_id=(\d+)", text)) == {"1"}  # every pair on one channel
    out, report = run(text, all_computations=True)
    assert not report.left
    pairs = fused_pairs(report)
    assert len(pairs) == JAX_PROGRAMS[name][1]
    assert_fused(text, out, pairs)
    # each pair keeps its own source-target pairs and its own channel in the backend_config
    for rd, _ in pairs:
        line = _printed(out, rd)
        assert 'backend_config="channel_id=1"' in line
        assert "_xla_send_recv_source_target_pairs={{0," in line
    if name != "one-pair":
        fwd, bwd = (_printed(out, rd) for rd, _ in pairs)
        assert "{{0,1},{1,2}" in fwd and "{{0,7},{1,0}" in bwd
    # a second run changes nothing
    again, report2 = run(out, all_computations=True)
    assert again == out and not report2.records
