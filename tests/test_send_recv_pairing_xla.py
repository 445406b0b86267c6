"""fuse-send-recv's structural proof (XLA:CPU cannot execute send/recv), with XLA's parser as the
oracle, on JAX programs lowered in the test and on the hand-written modules of
``test_send_recv_pairing.py``: XLA's parser reads the output, and in XLA's own reading the fused
call's operands are the send's data and token, every user of the recv's data reads element 0 of the
fused call, every user of the send-done reads element 1, and no send, recv or done of a fused pair
is left.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS, needs_xla, read_exact
from test_send_recv_pairing import BWD, CROSS, FWD, PIPELINED, fused_pairs, module, pair_lines, run

xla_oracle = needs_xla()
pytestmark = pytest.mark.xla


# ------------------------------------------------------------------ the structural proof
def _xla() -> Any:
    return xla_oracle


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
