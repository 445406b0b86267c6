"""fuse-send-recv: a send/recv pair on one channel becomes one custom-call.

The pass anchors on ``send-done`` and ``recv-done``, reaches the ``send`` /
``recv`` through operand 0 and pairs them by ``channel_id``. A pair becomes::

    %recv-done = (data, token[]) custom-call(%send-data, %send-token),
        custom_call_target="AwsNeuronSendRecv", custom_call_has_side_effect=true,
        ..., backend_config="channel_id=N"
    %send-done = token[] get-tuple-element(%recv-done), index=1

and the ``send`` and ``recv`` disappear. docs/passes/fuse-send-recv.md gives
every rule: what carries over, the cases left alone, the errors, and the
strict token checks.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import NamedTuple

from ..attributes import split_attributes
from ..errors import HloInternalError, PassError
from ..escapes import c_escape, c_unescape
from ..ir import Computation, Instruction, Module
from ..lexicon import matching_close
from ..shapes import parse_shape
from .base import Pass, PassReport, located_error, option

# Neuron's hlo-opt messages, verbatim (docs/passes/fuse-send-recv.md)
MISSING_CHANNEL = "Send and Recv must have channel_id"
NESTED_TUPLE = "Cannot handle nested tuple shape"
NON_ROOT_TUPLE = "Unexpected non-root tuple uses token"
NON_CUSTOM_CALL_TOKEN = "Unexpected non-CustomCall op returns token"
UNEXPECTED_USER = "Unexpected instruction type uses token"

_DONE_OF = {"send": "send-done", "recv": "recv-done"}
_KIND_OF_DONE = {"send-done": "send", "recv-done": "recv"}
# attributes of a send-done that the get-tuple-element replacing it keeps, in XLA's order
_KEPT_ON_SEND_DONE = ("sharding", "frontend_attributes", "statistics", "metadata", "backend_config")


class _Half(NamedTuple):
    """One side of a channel: the send (or recv) and its done."""

    op: Instruction
    done: Instruction


class _Skip(Exception):
    """A pair is left alone; the message says why."""


@dataclass(frozen=True)
class FuseSendRecvOptions:
    """fuse-send-recv's options."""

    send_recv_target: str = option("AwsNeuronSendRecv", "Use NAME as the custom_call_target of a fused send/recv "
                                   "pair.", metavar="NAME")
    strict_tokens: bool = option(False, "Apply the token-shape checks of Neuron's send/recv fusion and fail on "
                                 "what they reject.")


class FuseSendRecv(Pass):
    name = "fuse-send-recv"
    description = "fuse each send/recv pair on one channel into one side-effecting custom-call"
    anchors = frozenset({"send", "recv", "send-done", "recv-done"})
    outside_scope_opcodes = frozenset({"send-done", "recv-done"})
    Options = FuseSendRecvOptions
    options: FuseSendRecvOptions

    def run_on(self, module: Module, report: PassReport) -> None:
        # every error is raised while matching, before anything is rewritten
        plans = [(comp, self._match(module, comp, report)) for comp, _ in self.walk(module, report)]
        for comp, pairs in plans:
            fused = False
            for cid, send, recv in pairs:
                try:
                    self._fuse(module, comp, cid, send, recv, report)
                    fused = True
                except _Skip as why:
                    for h in (recv, send):
                        report.add_left(comp, h.done, f"channel_id={cid}: {why}")
            if fused:
                _restore_order(comp)

    # ------------------------------------------------------------------ matching
    def _match(self, module: Module, comp: Computation, report: PassReport) -> list[tuple[int, _Half, _Half]]:
        """The complete pairs of ``comp`` in the order their dones appear; reports
        what is left alone and raises on what is malformed."""
        halves: dict[str, dict[int, list[_Half]]] = {"send": {}, "recv": {}}
        claimed: dict[str, Instruction] = {}  # send/recv name -> its done in this computation

        for instr in list(comp.instructions):
            kind = _KIND_OF_DONE.get(instr.opcode)
            if kind is None:
                continue
            op = comp.get(instr.operands[0]) if instr.operands else None
            if op is None:
                raise located_error(instr, f"{instr.opcode} '{instr.name}' has no operand")
            if instr.is_host_transfer or (op.opcode in ("send", "recv") and op.is_host_transfer):
                if op.opcode in ("send", "recv"):
                    claimed[op.name] = instr
                report.add_left(comp, instr, "host transfer (is_host_transfer=true)")
                continue
            if op.opcode == "get-tuple-element":
                report.add_left(
                    comp, instr,
                    f"its {kind} is carried through a tuple ('{op.name}'): pipelined across a while loop; "
                    f"the {kind} and the {instr.opcode} are not in one computation",
                )
                continue
            if op.opcode != kind:
                raise located_error(
                    instr, f"operand 0 of {instr.opcode} '{instr.name}' must be a {kind}, but '{op.name}' is a {op.opcode}",
                )
            if op.name in claimed:
                raise located_error(
                    instr, f"{kind} '{op.name}' is completed twice: by '{claimed[op.name].name}' and by '{instr.name}'",
                )
            claimed[op.name] = instr
            cid = op.channel_id
            if cid is None:
                raise located_error(op, f"{MISSING_CHANNEL}: {kind} '{op.name}' has none")
            done_cid = instr.channel_id
            if done_cid is not None and done_cid != cid:
                raise located_error(
                    instr, f"{instr.opcode} '{instr.name}' has channel_id={done_cid} but its {kind} '{op.name}' "
                    f"has channel_id={cid}",
                )
            halves[kind].setdefault(cid, []).append(_Half(op, instr))

        # sends and recvs whose done is not in this computation
        for instr in list(comp.instructions):
            if instr.opcode not in ("send", "recv") or instr.name in claimed:
                continue
            if instr.is_host_transfer:
                report.add_left(comp, instr, "host transfer (is_host_transfer=true)")
                continue
            if instr.channel_id is None:
                raise located_error(instr, f"{MISSING_CHANNEL}: {instr.opcode} '{instr.name}' has none")
            users = comp.users(instr)
            if users:
                where = ", ".join(f"'{u.name}'" for u in users)
                reason = (
                    f"its {_DONE_OF[instr.opcode]} is not in this computation (the {instr.opcode} is used by "
                    f"{where}): pipelined across a while loop"
                )
            else:
                reason = f"it has no {_DONE_OF[instr.opcode]}"
            report.add_left(comp, instr, reason)

        # pair within each channel; fuse in the order the dones appear
        pos = {i.name: k for k, i in enumerate(comp.instructions)}
        pairs: list[tuple[int, _Half, _Half]] = []
        channels = set(halves["send"]) | set(halves["recv"])
        first_done = {
            cid: min(pos[h.done.name] for h in (*halves["send"].get(cid, []), *halves["recv"].get(cid, [])))
            for cid in channels
        }
        for cid in sorted(channels, key=first_done.__getitem__):
            sends = sorted(halves["send"].get(cid, []), key=lambda h: pos[h.op.name])
            recvs = sorted(halves["recv"].get(cid, []), key=lambda h: pos[h.op.name])
            matched, lone = pair_channel(cid, sends, recvs)
            for half, reason in sorted(lone, key=lambda hr: pos[hr[0].done.name]):
                report.add_left(comp, half.done, reason)
            pairs.extend((cid, send, recv) for send, recv in matched)
        pairs.sort(key=lambda p: min(pos[p[1].done.name], pos[p[2].done.name]))
        for _cid, send, recv in pairs:
            if len(send.op.operands) != 2:
                raise located_error(
                    send.op, f"send '{send.op.name}' must have 2 operands (data, token), it has {len(send.op.operands)}",
                )
            if self.options.strict_tokens:
                _strict_token_checks(module, comp, send.op, send.done, recv.op, recv.done)
        return pairs

    # -------------------------------------------------------------------- fusing
    def _fuse(
        self, module: Module, comp: Computation, cid: int, send: _Half, recv: _Half, report: PassReport
    ) -> None:
        s, sd, r, rd = send.op, send.done, recv.op, recv.done
        four = [r, rd, s, sd]
        four_names = {i.name for i in four}

        for op, done in ((s, sd), (r, rd)):
            others = [u.name for u in comp.users(op) if u is not done]
            if others:
                raise _Skip(
                    f"{op.opcode} '{op.name}' is used by {', '.join(repr(n) for n in others)} besides its {done.opcode}"
                )
            if op.is_root:
                raise _Skip(f"{op.opcode} '{op.name}' is the ROOT")
        if rd.shape is None:
            raise _Skip(f"the shape of recv-done '{rd.name}' is not written")

        data, token = s.operands
        # control predecessors of the four, minus the four themselves
        preds: list[str] = []
        for instr in four:
            for p in instr.control_predecessors:
                if p not in four_names and p not in preds:
                    preds.append(p)
        # the recv's own token orders it after that token's producer: keep that order
        recv_token = r.operands[0] if r.operands else None
        if recv_token is not None and recv_token not in four_names and recv_token != token and recv_token != data:
            if recv_token not in preds:
                preds.append(recv_token)

        for dep in [data, token, *preds]:
            node = comp.get(dep)
            if node is not None and comp.depends_on(node, four):
                what = "data" if dep == data else "token" if dep == token else f"control predecessor '{dep}'"
                raise _Skip(
                    f"fusing would create a cycle: the send's {what} ('{dep}') depends on the recv "
                    f"or its done"
                )

        frontend = _merge_frontend_attributes(four)

        pct = "%" if module.style.percent else ""
        attrs: list[tuple[str, str]] = [
            ("custom_call_target", '"' + c_escape(self.options.send_recv_target) + '"'),
            ("custom_call_has_side_effect", "true"),
        ]
        if rd.sharding is not None:
            attrs.append(("sharding", rd.sharding))
        if frontend:
            attrs.append(("frontend_attributes", frontend))
        if preds:
            attrs.append(("control-predecessors", "{" + ", ".join(pct + p for p in preds) + "}"))
        metadata = next((i.metadata for i in four if i.metadata is not None), None)
        if metadata is not None:
            attrs.append(("metadata", metadata))
        attrs.append(("backend_config", f'"channel_id={cid}"'))
        custom_call = Instruction(rd.name, "custom-call", rd.shape, [data, token], attrs)

        gte_attrs: list[tuple[str, str]] = [("index", "1")]
        for key in _KEPT_ON_SEND_DONE:
            value = sd.attr_text(key)
            if value is not None:
                gte_attrs.append((key, value))
        gte = Instruction(sd.name, "get-tuple-element", "token[]", [rd.name], gte_attrs)

        comp.replace_instruction(rd, custom_call)
        comp.replace_instruction(sd, gte)
        comp.remove_instruction(s)
        comp.remove_instruction(r)
        # instructions ordered after the send or the recv are now ordered after the fused op
        comp.replace_all_uses(s.name, custom_call.name)
        comp.replace_all_uses(r.name, custom_call.name)

        target = self.options.send_recv_target
        for old, what in ((rd, target), (sd, "get-tuple-element")):
            report.add_rewritten(comp, old, what)
            report.records[-1].reason = (
                f"channel_id={cid}: send '{s.name}' and recv '{r.name}' fused into '{custom_call.name}'"
            )


# ---------------------------------------------------------------------- pairing
SOURCE_TARGET_PAIRS = "_xla_send_recv_source_target_pairs"


def _pairs_key(half: _Half) -> str | None:
    """The half's ``_xla_send_recv_source_target_pairs`` (the send's or recv's own,
    else its done's), unquoted and without blanks; None when neither has one."""
    for instr in (half.op, half.done):
        text = instr.attr_text("frontend_attributes")
        if text is None or SOURCE_TARGET_PAIRS not in text:
            continue
        for key, value in frontend_items(text, instr):
            if key == SOURCE_TARGET_PAIRS:
                return "".join(value.split())
    return None


def pair_channel(
    cid: int, sends: list[_Half], recvs: list[_Half]
) -> tuple[list[tuple[_Half, _Half]], list[tuple[_Half, str]]]:
    """Pair the sends and recvs of one channel of one computation, each list in
    program order. Returns the pairs, and the halves left alone with the reason.

    - One send and one recv pair unless both carry source-target pairs and
      these differ.
    - Otherwise the halves are grouped by their source-target pairs; a group
      with as many sends as recvs pairs in program order.
    - A group whose counts differ is ambiguous; when only some halves carry
      source-target pairs, those without them are ambiguous.
    """
    pairs: list[tuple[_Half, _Half]] = []
    left: list[tuple[_Half, str]] = []
    keys = {id(h): _pairs_key(h) for h in (*sends, *recvs)}

    def lone(half: _Half, other: str, where: str) -> None:
        left.append((half, f"{half.op.opcode} '{half.op.name}' has no {other} on channel_id={cid}{where} "
                           "in this computation"))

    if len(sends) == 1 and len(recvs) == 1:
        send, recv = sends[0], recvs[0]
        ks, kr = keys[id(send)], keys[id(recv)]
        if ks is None or kr is None or ks == kr:
            return [(send, recv)], []
        lone(send, "recv", f" with {SOURCE_TARGET_PAIRS}={ks}")
        lone(recv, "send", f" with {SOURCE_TARGET_PAIRS}={kr}")
        return [], left
    if not sends or not recvs:
        for half in (*sends, *recvs):
            lone(half, "recv" if half.op.opcode == "send" else "send", "")
        return [], left

    groups: dict[str | None, tuple[list[_Half], list[_Half]]] = {}
    for half in sends:
        groups.setdefault(keys[id(half)], ([], []))[0].append(half)
    for half in recvs:
        groups.setdefault(keys[id(half)], ([], []))[1].append(half)
    mixed = None in groups and len(groups) > 1
    for key, (gs, gr) in groups.items():
        if key is None and mixed:
            for half in (*gs, *gr):
                left.append((half, f"ambiguous: {half.op.opcode} '{half.op.name}' has no {SOURCE_TARGET_PAIRS} "
                                   f"while other sends and recvs on channel_id={cid} have them"))
            continue
        where = "" if key is None else f" with {SOURCE_TARGET_PAIRS}={key}"
        if len(gs) == len(gr):
            pairs.extend(zip(gs, gr, strict=True))
        elif not gs or not gr:
            for half in (*gs, *gr):
                lone(half, "recv" if half.op.opcode == "send" else "send", where)
        else:
            for half in (*gs, *gr):
                left.append((half, f"ambiguous: {len(gs)} sends and {len(gr)} recvs on channel_id={cid}{where} "
                                   "in this computation"))
    return pairs, left


# ---------------------------------------------------------------------- helpers
def _merge_frontend_attributes(instrs: list[Instruction]) -> str | None:
    """The union of the frontend attributes of ``instrs`` printed as XLA does
    (keys sorted, brace-balanced values raw, others quoted and C-escaped).
    A key with different values on two instructions leaves the pair alone."""
    merged: dict[str, tuple[str, Instruction]] = {}
    for instr in instrs:
        text = instr.attr_text("frontend_attributes")
        if text is None:
            continue
        for key, value in frontend_items(text, instr):
            if key in merged and merged[key][0] != value:
                first_value, first = merged[key]
                raise _Skip(
                    f"frontend attribute '{key}' differs: {first_value!r} on '{first.name}', "
                    f"{value!r} on '{instr.name}'"
                )
            merged.setdefault(key, (value, instr))
    if not merged:
        return None
    items = []
    for key in sorted(merged, key=lambda k: k.encode()):
        value = merged[key][0]
        items.append(f"{key}={value}" if _is_braced(value) else f'{key}="{c_escape(value)}"')
    return "{" + ",".join(items) + "}"


def frontend_items(text: str, instr: Instruction | None = None) -> list[tuple[str, str]]:
    """``{a="x",b={...}}`` -> ``[("a", "x"), ("b", "{...}")]`` with quoted values unescaped."""
    inner = text.strip()
    if not (inner.startswith("{") and inner.endswith("}")):
        message = f"malformed frontend_attributes {text!r}"
        raise located_error(instr, message) if instr is not None else PassError(message)
    inner = inner[1:-1].strip()
    if not inner:
        return []
    out = []
    for key, value in split_attributes("," + inner, instr, json_from=1):  # (their braces hold JSON text)
        value = value.strip()
        if value.startswith('"') and value.endswith('"') and len(value) >= 2:
            value = c_unescape(value[1:-1])
        out.append((key, value))
    return out


def _is_braced(value: str) -> bool:
    """True when ``value`` is one brace-balanced ``{...}`` (XLA then prints it unquoted)."""
    if not value.startswith("{"):
        return False
    try:
        return matching_close(value, 0) == len(value)
    except ValueError:
        return False


# ------------------------------------------------------------- strict token mode
def _returns_token(instr: Instruction) -> bool:
    if instr.shape is not None:
        return "token[" in instr.shape
    return instr.opcode == "after-all"


def _strict_token_checks(
    module: Module, comp: Computation, s: Instruction, sd: Instruction, r: Instruction, rd: Instruction
) -> None:
    """Neuron's four token checks (docs/passes/fuse-send-recv.md, "Strict token mode")."""
    shape = parse_shape(rd.shape or "")
    data = shape.tuple_shapes[0] if shape.is_tuple and shape.tuple_shapes else shape
    if data.is_tuple and any(e.is_tuple for e in data.tuple_shapes):
        raise located_error(rd, f"{NESTED_TUPLE}: the data of recv-done '{rd.name}' is {rd.shape}")

    pair = {s.name, sd.name, r.name, rd.name}
    uses: list[tuple[Instruction, Instruction]] = []  # (user, token output it uses)
    for user in comp.users(rd):
        if user.opcode == "get-tuple-element":
            if (user.attr_text("index") or "").strip() == "1":
                uses.extend((u, user) for u in comp.users(user))
        else:
            uses.append((user, rd))
    uses.extend((u, sd) for u in comp.users(sd))
    seen: set[str] = set()
    for user, source in sorted(uses, key=lambda us: comp.index_of(us[0])):
        if user.name in pair or user.name in seen:
            continue
        seen.add(user.name)
        what = f"'{user.name}' uses the token of '{source.name}'"
        if user.opcode == "tuple":
            if not user.is_root:
                raise located_error(user, f"{NON_ROOT_TUPLE}: {what}")
        elif user.opcode == "custom-call":
            continue
        elif _returns_token(user):
            raise located_error(user, f"{NON_CUSTOM_CALL_TOKEN}: {what} and returns a token ({user.opcode})")
        else:
            raise located_error(user, f"{UNEXPECTED_USER}: {what} ({user.opcode})")


# ------------------------------------------------------------------ ordering
def _deps(instr: Instruction) -> list[str]:
    deps = list(instr.operands)
    if instr.text is None or "control-predecessors" in (instr.attrs_text or ""):
        deps += instr.control_predecessors
    return deps


def _restore_order(comp: Computation) -> None:
    """Reorder the computation, if needed, so that every operand and control
    predecessor stands before its user, moving as little as possible: a stable
    topological sort keyed on the current position (the schedule of an
    ``is_scheduled`` module is kept wherever it is still valid)."""
    instrs = comp.instructions
    pos = {i.name: k for k, i in enumerate(instrs)}
    deps = [[d for d in dict.fromkeys(_deps(i)) if d in pos] for i in instrs]
    if all(pos[d] < k for k, ds in enumerate(deps) for d in ds):
        return
    indegree = [len(ds) for ds in deps]
    successors: list[list[int]] = [[] for _ in instrs]
    for k, ds in enumerate(deps):
        for d in ds:
            successors[pos[d]].append(k)
    ready = [k for k, n in enumerate(indegree) if n == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        k = heapq.heappop(ready)
        order.append(k)
        for succ in successors[k]:
            indegree[succ] -= 1
            if indegree[succ] == 0:
                heapq.heappush(ready, succ)
    if len(order) != len(instrs):
        stuck = [instrs[k].name for k, n in enumerate(indegree) if n > 0][:5]
        raise HloInternalError(
            f"fuse-send-recv made a cycle in computation '{comp.name}' (involving {', '.join(stuck)})"
        )
    comp.set_instructions([instrs[k] for k in order])


__all__ = ["FuseSendRecv", "FuseSendRecvOptions", "frontend_items", "pair_channel"]
