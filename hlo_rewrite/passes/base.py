"""What every pass is made of: options, a report of what it did, the Pass base."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import ClassVar

from ..ir import Computation, Instruction, Module


@dataclass(frozen=True)
class PassOptions:
    """Options shared by the passes (each pass reads the ones it knows)."""

    #: look at every non-fusion computation, not only ENTRY
    all_computations: bool = False
    #: custom_call_target of the fused send/recv custom-call
    send_recv_target: str = "AwsNeuronSendRecv"
    #: apply Neuron's token-shape checks in fuse-send-recv (docs/passes/fuse-send-recv.md)
    strict_tokens: bool = False


@dataclass
class Record:
    """One instruction a pass rewrote, or matched and left alone (with why)."""

    pass_name: str
    computation: str
    instruction: str
    opcode: str
    action: str  # "rewritten" or "left"
    target: str | None = None  # the new custom-call target or opcode
    reason: str | None = None  # why it was left alone
    line: int | None = None

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class PassReport:
    """What one pass did to one module."""

    name: str
    records: list[Record] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def rewritten(self) -> list[Record]:
        return [r for r in self.records if r.action == "rewritten"]

    @property
    def left(self) -> list[Record]:
        return [r for r in self.records if r.action == "left"]

    @property
    def changed(self) -> bool:
        return bool(self.rewritten)

    def add_rewritten(self, comp: Computation, instr: Instruction, target: str) -> None:
        self.records.append(
            Record(self.name, comp.name, instr.name, instr.opcode, "rewritten", target=target, line=instr.line or None)
        )

    def add_left(self, comp: Computation, instr: Instruction, reason: str) -> None:
        self.add_left_named(comp, instr.name, instr.opcode, instr.line, reason)

    def add_left_named(self, comp: Computation, name: str, opcode: str, line: int, reason: str) -> None:
        """Record an instruction left alone, known by name (it need not be built)."""
        self.records.append(Record(self.name, comp.name, name, opcode, "left", reason=reason, line=line or None))

    def to_json(self) -> dict:
        return {
            "pass": self.name,
            "seconds": round(self.seconds, 6),
            "matched": len(self.records),
            "rewritten": len(self.rewritten),
            "left": len(self.left),
            "records": [r.to_json() for r in self.records],
        }


class Pass:
    """A module pass: a kebab-case ``name``, a one-line ``description`` and
    :meth:`run_on`, which edits the module in place and fills the report.

    Subclasses implement ``run_on``; :meth:`run` times it.
    """

    name: ClassVar[str]
    description: ClassVar[str]

    def __init__(self, options: PassOptions | None = None) -> None:
        self.options = options or PassOptions()

    def run(self, module: Module) -> PassReport:
        report = PassReport(self.name)
        start = time.perf_counter()
        self.run_on(module, report)
        report.seconds = time.perf_counter() - start
        return report

    def run_on(self, module: Module, report: PassReport) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def scope(self, module: Module) -> list[Computation]:
        """The computations this pass looks at (ENTRY, or all non-fusion ones)."""
        return module.scope(self.options.all_computations)
