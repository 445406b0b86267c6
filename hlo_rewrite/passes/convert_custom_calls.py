"""convert-custom-calls-to-collectives: the reverse of convert-collectives-to-custom-call.

Every ``custom-call`` whose target is one of the AwsNeuron collective names of
:mod:`.naming` and which carries the backend_config the forward pass writes
becomes the native ``all-reduce`` / ``reduce-scatter`` / ``all-gather`` again,
printed as XLA prints it (checklist §3.6 attribute order), with the original
backend_config restored. Replica groups come back in the explicit form
``{{0,1},{2,3}}`` (the JSON does not say whether they were written as iota).

A matching target whose backend_config is missing, is not the forward pass's
JSON, or contradicts the target name is an error that names the line. Other
custom-calls are not touched. Not part of the default pipeline.
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import PassError
from ..ir import Computation, Instruction, Module
from . import naming
from .base import Pass, PassReport, located_error


def format_groups(groups: list[list[int]]) -> str:
    """Explicit replica groups as XLA prints them: ``{{0,1},{2,3}}``, ``{}``."""
    return "{" + ",".join("{" + ",".join(str(x) for x in g) + "}" for g in groups) + "}"


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _collective_calls(anchored: list[Instruction]) -> list[tuple[Instruction, str, tuple[str, str | None, str]]]:
    """The custom-calls among ``anchored`` whose target is an AwsNeuron collective
    name, with the target and its parts."""
    out = []
    for instr in anchored:
        written = instr.attr_text("custom_call_target")
        target = naming.backend_config_value(written) if written else ""
        parts = naming.parse_target(target)
        if parts is not None:
            out.append((instr, target, parts))
    return out


class ConvertCustomCallsToCollectives(Pass):
    name = "convert-custom-calls-to-collectives"
    description = "AwsNeuron* collective custom-calls become all-reduce, reduce-scatter, all-gather again"

    anchors = frozenset({"custom-call"})

    def run_on(self, module: Module, report: PassReport) -> None:
        self._computations = {c.name: c for c in module.computations}
        super().run_on(module, report)

    def rewrite(self, module: Module, comp: Computation, anchored: list[Instruction], report: PassReport) -> None:
        for instr, target, parts in _collective_calls(anchored):
            self._convert(module, comp, instr, target, parts, report)

    def report_outside_scope(
        self, module: Module, comp: Computation, opcodes: frozenset[str], reason: str, report: PassReport
    ) -> None:
        anchored = [i for i in comp.instructions if i.opcode == "custom-call"]
        for instr, _, _ in _collective_calls(anchored):
            report.add_left(comp, instr, reason)

    def _error(self, instr: Instruction, message: str) -> PassError:
        return located_error(instr, f"custom-call '{instr.name}': {message}")

    def _read_config(self, module: Module, instr: Instruction, target: str, opcode: str) -> dict[str, Any]:
        written = instr.attr_text("backend_config")
        if written is None:
            raise self._error(instr, f"target '{target}' needs the backend_config written by "
                                             "convert-collectives-to-custom-call, and it has none")
        text = naming.backend_config_value(written)
        try:
            config = json.loads(text)
        except ValueError as exc:
            raise self._error(instr, f"backend_config of '{target}' is not JSON: {exc}") from None
        if not isinstance(config, dict):
            raise self._error(instr, f"backend_config of '{target}' is not a JSON object")
        required = naming.required_keys(opcode)
        missing = sorted(required - config.keys())
        if missing:
            raise self._error(instr, f"backend_config of '{target}' lacks {', '.join(missing)}")
        extra = sorted(config.keys() - required - naming.OPTIONAL_KEYS)
        if extra:
            raise self._error(instr, f"backend_config of '{target}' has unexpected key(s) "
                                             f"{', '.join(extra)}")
        groups = config["replica_groups"]
        if not isinstance(groups, list) or not all(
            isinstance(g, list) and all(_is_int(x) for x in g) for g in groups
        ):
            raise self._error(instr, "backend_config: replica_groups must be a list of lists of ints")
        if config["channel_id"] is not None and not _is_int(config["channel_id"]):
            raise self._error(instr, "backend_config: channel_id must be an int or null")
        for key in ("use_global_device_ids", "constrain_layout"):
            if not isinstance(config[key], bool):
                raise self._error(instr, f"backend_config: {key} must be true or false")
        if "dimension" in required and not (_is_int(config["dimension"]) and config["dimension"] >= 0):
            raise self._error(instr, "backend_config: dimension must be a non-negative int")
        if "to_apply" in required and not isinstance(config["to_apply"], str):
            raise self._error(instr, "backend_config: to_apply must be a computation name")
        if "original_backend_config" in config and not isinstance(config["original_backend_config"], str):
            raise self._error(instr, "backend_config: original_backend_config must be a string")
        return config

    def _convert(
        self,
        module: Module,
        comp: Computation,
        instr: Instruction,
        target: str,
        parts: tuple[str, str | None, str],
        report: PassReport,
    ) -> None:
        opcode, infix, suffix = parts
        allowed = {"custom_call_target", "backend_config", *naming.CARRIED_ATTRS}
        stray = [k for k, _ in instr.attrs if k not in allowed]
        if stray:
            raise self._error(instr, f"attribute '{stray[0]}' cannot be carried back to {opcode}")
        if instr.shape is None:
            raise self._error(instr, "the result shape is not written")
        config = self._read_config(module, instr, target, opcode)
        if naming.dtype_suffix(instr.element_type) != suffix:
            raise self._error(instr, f"target '{target}' does not match the result element type "
                                             f"'{instr.element_type}'")
        pct = "%" if module.style.percent else ""
        attrs: list[tuple[str, str]] = []
        if config["channel_id"] is not None:
            attrs.append(("channel_id", str(config["channel_id"])))
        attrs.append(("replica_groups", format_groups(config["replica_groups"])))
        if config["constrain_layout"]:
            attrs.append(("constrain_layout", "true"))
        if opcode == "all-gather":
            attrs.append(("dimensions", "{" + str(config["dimension"]) + "}"))
        if config["use_global_device_ids"]:
            attrs.append(("use_global_device_ids", "true"))
        if opcode == "reduce-scatter":
            attrs.append(("dimensions", "{" + str(config["dimension"]) + "}"))
        if opcode in naming.REDUCING:
            body = self._computations.get(config["to_apply"])
            if body is None:
                raise self._error(instr, f"backend_config names to_apply computation "
                                                 f"'{config['to_apply']}', which is not defined")
            if naming.reduce_op_infix(body) != infix:
                raise self._error(instr, f"target '{target}' does not match the reduction computation "
                                                 f"'{body.name}' (which gives {naming.reduce_op_infix(body)})")
            attrs.append(("to_apply", pct + body.name))
        for key in naming.CARRIED_ATTRS:
            value = instr.attr_text(key)
            if value is not None:
                attrs.append((key, value))
        if config.get("original_backend_config"):
            attrs.append(("backend_config", naming.backend_config_text(config["original_backend_config"])))
        report.add_rewritten(comp, instr, opcode)
        instr.opcode = opcode  # same name, shape and operands: changed in place
        instr.attrs = attrs  # marks the line for reprinting
