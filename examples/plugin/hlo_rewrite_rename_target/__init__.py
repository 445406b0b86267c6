"""An hlo-rewrite plugin pass: rename one custom_call_target.

Neuron's fused send/recv target is an open question (hlo-rewrite's default is
``AwsNeuronSendRecv``); this pass renames a target after the fact, e.g.
``hlo-rewrite --passes fuse-send-recv,rename-custom-call-target in.hlo``.
"""

from __future__ import annotations

from dataclasses import dataclass

from hlo_rewrite import Pass, PassReport, option
from hlo_rewrite.ir import Computation, Instruction, Module


@dataclass(frozen=True)
class RenameOptions:
    old: str = option("AwsNeuronSendRecv", "The custom_call_target to replace.", metavar="NAME")
    new: str = option("AwsNeuronP2P", "The custom_call_target written instead.", metavar="NAME")

    def __post_init__(self) -> None:
        for value in (self.old, self.new):
            if not value or '"' in value or "\\" in value:
                raise ValueError(f"rename-custom-call-target: {value!r} is not a plain target name")


class RenameCustomCallTarget(Pass):
    name = "rename-custom-call-target"
    description = "one custom_call_target becomes another (an example plugin)"
    anchors = frozenset({"custom-call"})
    Options = RenameOptions
    options: RenameOptions

    def rewrite(self, module: Module, comp: Computation, anchored: list[Instruction], report: PassReport) -> None:
        for instr in anchored:
            if instr.attr_text("custom_call_target") == f'"{self.options.old}"':
                instr.set_attr("custom_call_target", f'"{self.options.new}"')
                report.add_rewritten(comp, instr, self.options.new)


__all__ = ["RenameCustomCallTarget", "RenameOptions"]
