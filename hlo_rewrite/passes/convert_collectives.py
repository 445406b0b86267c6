"""convert-collectives-to-custom-call (docs/passes/convert-collectives-to-custom-call.md).

``all-reduce``, ``reduce-scatter`` and ``all-gather`` become ``custom-call``
instructions whose ``custom_call_target`` follows Neuron's naming contract
(:mod:`.naming`) and whose ``backend_config`` carries, as compact JSON with
sorted keys, everything the name does not say. The custom-call keeps the
collective's name, result shape, operands, ``sharding``, ``frontend_attributes``,
``control-predecessors`` and ``metadata``, so no other line of the module changes.

Everything else is left alone: all-to-all, collective-permute, and the async
forms (``*-start``/``*-done`` and collectives wrapped by ``async-start``), which
are reported as left, as is any collective outside the pass's scope.
"""

from __future__ import annotations

import json
from typing import Any

from ..ir import Computation, Instruction, Module
from ..values import UNREAD, read_value
from . import naming
from .base import Pass, PassReport, located_error

#: attributes the backend_config (or the target name) takes over
FOLDED_ATTRS: frozenset[str] = frozenset(
    {"channel_id", "replica_groups", "constrain_layout", "use_global_device_ids", "dimensions", "to_apply",
     "backend_config"}
)

#: async spellings of the three collectives (sugared forms)
ASYNC_OPCODES: frozenset[str] = frozenset(
    {"all-reduce-start", "all-reduce-done", "all-gather-start", "all-gather-done", "reduce-scatter-start",
     "reduce-scatter-update", "reduce-scatter-done"}
)
_COLLECTIVES = frozenset(naming.BASES)
_ASYNC_WRAPPERS = frozenset({"async-start", "async-update", "async-done"})


def _async_wrapped(module: Module) -> dict[str, str]:
    """Computation name -> name of the async-start that wraps it."""
    wrapped: dict[str, str] = {}
    for comp in module.computations:
        if "async-start" not in comp.opcodes():
            continue
        for instr in comp.instructions:
            if instr.opcode == "async-start":
                for callee in instr.called_computations():
                    wrapped.setdefault(callee, instr.name)
    return wrapped


def _wrapped_collective(by_name: dict[str, Computation], instr: Instruction) -> str | None:
    """For an async-start: the opcode of the collective it wraps, if any."""
    for callee in instr.called_computations():
        comp = by_name.get(callee)
        if comp is not None:
            for inner in comp.instructions:
                if inner.opcode in naming.BASES:
                    return inner.opcode
    return None


#: the attributes whose typed values go into the backend_config
TYPED_ATTRS: tuple[str, ...] = ("channel_id", "replica_groups", "constrain_layout", "use_global_device_ids",
                                "dimensions")


def typed_attrs(instr: Instruction) -> dict[str, object]:
    """Typed values of :data:`TYPED_ATTRS`.

    The plain spellings XLA prints are read by :func:`..values.read_value`; if
    any is spelled otherwise, those attributes alone are handed to the grammar
    (long metadata and operand lists are what make a full instruction parse
    slow), and if that reduced text does not parse, the whole instruction is
    parsed so the error points into the input.
    """
    written = [(k, v) for k, v in instr.attrs if k in TYPED_ATTRS]
    quick = {k: read_value(k, v) for k, v in written}
    if all(v is not UNREAD for v in quick.values()):
        return quick

    from .. import syntax
    from ..errors import HloError

    parts = [f"{k}={v}" for k, v in written]
    try:
        parsed = syntax.parse_instruction(f"c = {instr.opcode}(), " + ", ".join(parts) if parts
                                          else f"c = {instr.opcode}()")
        return {a.name: a.value for a in parsed.attrs}
    except HloError:
        return {k: instr.attr(k) for k, _ in instr.attrs if k in TYPED_ATTRS}


def build_backend_config(instr: Instruction, body_name: str | None, values: dict[str, object] | None = None) -> dict[str, Any]:
    """The backend_config dictionary for a collective (docs/contract.md, backend_config table)."""
    if values is None:
        values = typed_attrs(instr)
    groups = values.get("replica_groups")
    config: dict[str, Any] = {
        "replica_groups": [[int(x) for x in g] for g in groups] if groups else [],  # type: ignore[attr-defined]
        "channel_id": values.get("channel_id"),
        "use_global_device_ids": bool(values.get("use_global_device_ids", False)),
        "constrain_layout": bool(values.get("constrain_layout", False)),
    }
    if instr.opcode in ("reduce-scatter", "all-gather"):
        config["dimension"] = values["dimensions"][0]  # type: ignore[index]
    if instr.opcode in naming.REDUCING:
        config["to_apply"] = body_name
    written = instr.attr_text("backend_config")
    if written is not None and naming.backend_config_value(written):
        config["original_backend_config"] = naming.backend_config_value(written)
    return config


def dump_config(config: dict[str, Any]) -> str:
    """Compact JSON with sorted keys, as the custom-call carries it."""
    return json.dumps(config, sort_keys=True, separators=(",", ":"))


class ConvertCollectivesToCustomCall(Pass):
    name = "convert-collectives-to-custom-call"
    description = "all-reduce, reduce-scatter, all-gather become AwsNeuron* custom-calls"
    # the async forms are anchored by their start only: that is where they are reported
    anchors = _COLLECTIVES | {op for op in ASYNC_OPCODES if op.endswith("-start")} | {"async-start"}
    toggle = "convert-collectives"

    def run_on(self, module: Module, report: PassReport) -> None:
        self._wrapped = _async_wrapped(module)
        self._computations = {c.name: c for c in module.computations}
        super().run_on(module, report)

    def rewrite(self, module: Module, comp: Computation, anchored: list[Instruction], report: PassReport) -> None:
        self._classify(module, comp, anchored, report, None)

    def report_outside_scope(
        self, module: Module, comp: Computation, opcodes: frozenset[str], reason: str, report: PassReport
    ) -> None:
        present = comp.opcodes()
        if comp.name in self._wrapped or not present.isdisjoint(ASYNC_OPCODES) or "async-start" in present:
            anchored = [i for i in comp.instructions if i.opcode in self.anchors]
            self._classify(module, comp, anchored, report, reason)
        elif not _COLLECTIVES.isdisjoint(present):
            # only collectives here: reported by name, without building the computation
            super().report_outside_scope(module, comp, _COLLECTIVES, reason, report)

    def _classify(
        self, module: Module, comp: Computation, anchored: list[Instruction], report: PassReport,
        outside: str | None,
    ) -> None:
        """Convert each collective, or record why not (``outside``: the computation
        is outside the scope, for that reason)."""
        for instr in anchored:
            op = instr.opcode
            if op in naming.BASES:
                if comp.name in self._wrapped:
                    report.add_left(comp, instr, f"async form: wrapped by async-start '{self._wrapped[comp.name]}'")
                elif outside is not None:
                    report.add_left(comp, instr, outside)
                else:
                    self._convert(module, comp, instr, report)
            elif op in ASYNC_OPCODES and op.endswith("-start"):
                report.add_left(comp, instr, f"async form '{op}' is not converted")
            elif op == "async-start":
                inner = _wrapped_collective(self._computations, instr)
                if inner is not None:
                    report.add_left(comp, instr, f"async form: async-start wrapping {inner} is not converted")

    def _convert(self, module: Module, comp: Computation, instr: Instruction, report: PassReport) -> None:
        op = instr.opcode
        unknown = [k for k, _ in instr.attrs if k not in FOLDED_ATTRS and k not in naming.CARRIED_ATTRS]
        if unknown:
            report.add_left(comp, instr, f"attribute '{unknown[0]}' has no place on the custom-call")
            return
        if instr.shape is None:
            raise located_error(instr, f"{op} '{instr.name}' has no result shape")
        body: Computation | None = None
        body_name: str | None = None
        if op in naming.REDUCING:
            written = instr.attr_text("to_apply")
            if written is None:
                raise located_error(instr, f"{op} '{instr.name}' has no to_apply")
            if written.lstrip().startswith("{"):
                report.add_left(comp, instr, "inline to_apply computation is not supported")
                return
            body_name = written.strip().lstrip("%")
            body = self._computations.get(body_name)
            if body is None:
                raise located_error(instr, f"{op} '{instr.name}': to_apply computation "
                                                     f"'{body_name}' is not defined")
        values = typed_attrs(instr)
        if op in ("reduce-scatter", "all-gather"):
            dims = values.get("dimensions")
            if not isinstance(dims, list) or len(dims) != 1:
                raise located_error(instr, f"{op} '{instr.name}' needs exactly one dimension in "
                                                     f"dimensions={{...}}")
        target = naming.target_name(op, instr.element_type, body)
        config = build_backend_config(instr, body_name, values)

        attrs: list[tuple[str, str]] = [("custom_call_target", f'"{target}"')]
        for key in naming.CARRIED_ATTRS:
            value = instr.attr_text(key)
            if value is not None:
                attrs.append((key, value))
        attrs.append(("backend_config", naming.backend_config_text(dump_config(config))))
        report.add_rewritten(comp, instr, target)
        # Same name, shape and operands: change the instruction in place (users,
        # control successors and the instruction's position stay as they are).
        instr.opcode = "custom-call"
        instr.attrs = attrs  # marks the line for reprinting
