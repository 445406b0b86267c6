"""What every pass is made of: declared options, a report of what it did, the Pass base.

A pass is a small declared unit (``docs/api.md``)::

    @dataclass(frozen=True)
    class Options:
        target: str = option("AwsNeuronSendRecv", "custom_call_target of the fused call")

    class MyPass(Pass):
        name = "my-pass"                      # kebab-case, unique
        description = "one line"              # shown by --list-passes
        anchors = frozenset({"all-reduce"})   # the opcodes it is handed
        scope = Scope.ENTRY                   # which computations it looks at
        Options = Options                     # its typed options (a frozen dataclass)

        def rewrite(self, module, comp, anchored, report): ...

The base walks the computations in scope, hands :meth:`Pass.rewrite` the
anchored instructions of each, and reports anchored instructions outside the
scope once, in one wording (:func:`outside_scope_reason`). :func:`located_error`
is the one way to build an error that points at an instruction.
"""

from __future__ import annotations

import dataclasses
import enum
import time
import typing
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

from ..errors import HloError, PassError
from ..ir import NOTED_OPCODES, Computation, Instruction, Module

#: the types an option may have (the command line turns each into a typed flag)
OPTION_TYPES: tuple[type, ...] = (bool, int, float, str)


def option(default: Any, help: str, *, metavar: str | None = None) -> Any:  # noqa: A002 - click's word
    """A typed pass option: a dataclass field with its default and one line of help."""
    metadata: dict[str, str] = {"help": help}
    if metavar is not None:
        metadata["metavar"] = metavar
    return field(default=default, metadata=metadata)


@dataclass(frozen=True)
class NoOptions:
    """The options of a pass that has none."""


@dataclass(frozen=True)
class OptionInfo:
    """One declared option of one pass, as the command line and the docs need it."""

    pass_name: str
    name: str  # the field name, e.g. "send_recv_target"
    type: type  # bool, int, float or str
    default: Any
    help: str
    metavar: str | None = None
    #: the command-line flag: ``--send-recv-target`` for a built-in pass; a plugin's
    #: options are prefixed with its pass name (``--my-pass-limit``) so they cannot clash
    flag: str = ""


def option_infos(pass_cls: type[Pass], *, prefixed: bool = False) -> tuple[OptionInfo, ...]:
    """The declared options of ``pass_cls``, in declaration order.

    Raises TypeError when ``Options`` is not a dataclass or a field lacks a
    default, help text or a supported type.
    """
    opts = pass_cls.Options
    if not dataclasses.is_dataclass(opts):
        raise TypeError(f"pass '{pass_cls.name}': Options must be a dataclass")
    hints = typing.get_type_hints(opts)
    out = []
    for f in dataclasses.fields(opts):
        kind = hints.get(f.name)
        if kind not in OPTION_TYPES:
            raise TypeError(f"pass '{pass_cls.name}': option '{f.name}' must be bool, int, float or str")
        if f.default is dataclasses.MISSING:
            raise TypeError(f"pass '{pass_cls.name}': option '{f.name}' has no default")
        help_text = f.metadata.get("help")
        if not help_text:
            raise TypeError(f"pass '{pass_cls.name}': option '{f.name}' has no help text (use option())")
        stem = f.name.replace("_", "-")
        flag = f"--{pass_cls.name}-{stem}" if prefixed else f"--{stem}"
        out.append(OptionInfo(pass_cls.name, f.name, kind, f.default, help_text, f.metadata.get("metavar"), flag))
    return tuple(out)


def make_options(pass_cls: type[Pass], values: Mapping[str, Any]) -> Any:
    """``pass_cls.Options`` built from ``values`` (unknown names and wrong types are ValueError)."""
    infos = {i.name: i for i in option_infos(pass_cls)}
    for key, value in values.items():
        info = infos.get(key)
        if info is None:
            known = ", ".join(infos) or "none"
            raise ValueError(f"pass '{pass_cls.name}' has no option '{key}' (its options: {known})")
        ok = isinstance(value, info.type) and (info.type is bool or not isinstance(value, bool))
        if info.type is float and isinstance(value, int) and not isinstance(value, bool):
            ok = True
        if not ok:
            raise ValueError(f"option '{key}' of pass '{pass_cls.name}' must be {info.type.__name__}, "
                             f"not {type(value).__name__}")
    return pass_cls.Options(**values)


@dataclass(frozen=True)
class PassOptions:
    """Options for a run of several passes.

    ``all_computations`` applies to every pass whose scope is :attr:`Scope.ENTRY`.
    ``per_pass`` maps a pass name to its own options by field name, e.g.
    ``{"fuse-send-recv": {"strict_tokens": True}}``. ``send_recv_target`` and
    ``strict_tokens`` are shorthands for fuse-send-recv's options of those names
    (``per_pass`` wins when both are given).
    """

    #: look at every non-fusion computation, not only ENTRY
    all_computations: bool = False
    #: custom_call_target of the fused send/recv custom-call (fuse-send-recv)
    send_recv_target: str = "AwsNeuronSendRecv"
    #: apply Neuron's token-shape checks in fuse-send-recv
    strict_tokens: bool = False
    #: pass name -> {option name: value}
    per_pass: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def for_pass(self, pass_cls: type[Pass]) -> Any:
        """The ``Options`` instance of ``pass_cls`` these options give."""
        values: dict[str, Any] = {}
        if pass_cls.name == "fuse-send-recv":
            values = {"send_recv_target": self.send_recv_target, "strict_tokens": self.strict_tokens}
        values.update(self.per_pass.get(pass_cls.name, {}))
        return make_options(pass_cls, values)


class Scope(enum.Enum):
    """Which computations a pass looks at."""

    #: ENTRY; with ``all_computations``, every computation that is not a fusion body
    ENTRY = "entry"
    #: every computation of the module, fusion bodies included
    MODULE = "module"


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

    def to_json(self) -> dict[str, Any]:
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

    def add_rewritten(self, comp: Computation, instr: Instruction, target: str, reason: str | None = None) -> None:
        self.records.append(Record(self.name, comp.name, instr.name, instr.opcode, "rewritten", target=target,
                                   reason=reason, line=instr.line or None))

    def add_left(self, comp: Computation, instr: Instruction, reason: str) -> None:
        self.add_left_named(comp, instr.name, instr.opcode, instr.line, reason)

    def add_left_named(self, comp: Computation, name: str, opcode: str, line: int, reason: str) -> None:
        """Record an instruction left alone, known by name (it need not be built)."""
        self.records.append(Record(self.name, comp.name, name, opcode, "left", reason=reason, line=line or None))

    def to_json(self) -> dict[str, Any]:
        return {
            "pass": self.name,
            "seconds": round(self.seconds, 6),
            "matched": len(self.records),
            "rewritten": len(self.rewritten),
            "left": len(self.left),
            "records": [r.to_json() for r in self.records],
        }


# ------------------------------------------------------------------------ errors
def attach_location(exc: HloError, instr: Instruction) -> HloError:
    """``exc`` with the file, line, column and source line of ``instr`` filled in
    where it has none yet."""
    comp = instr.computation
    mod = comp.module if comp is not None else None
    if exc.filename is None and mod is not None:
        exc.filename = mod.filename
    if exc.line is None and instr.line:
        exc.line, exc.column = instr.line, instr.column or None
        if exc.source_line is None and instr.text is not None:
            exc.source_line = instr.text.split("\n", 1)[0].rstrip("\r")
    return exc


def located_error(instr: Instruction, message: str) -> PassError:
    """A :class:`PassError` pointing at ``instr``: its file, line, column and source line."""
    err = PassError(message)
    attach_location(err, instr)
    return err


# ------------------------------------------------------------------------- scope
def outside_scope_reason(comp: Computation, *, fusion: bool) -> str:
    """The one wording for an anchored instruction a pass does not look at
    (``fusion``: ``comp`` is a fusion body, which no scope rule but MODULE covers)."""
    if fusion:
        return f"outside scope: computation '{comp.name}' is a fusion computation"
    return f"outside scope: computation '{comp.name}' is not the ENTRY computation; all_computations extends the scope"


# -------------------------------------------------------------------------- pass
class Pass:
    """A module pass. Subclasses declare:

    - ``name``: kebab-case, unique; ``description``: one line;
    - ``anchors``: the opcodes whose instructions :meth:`rewrite` is handed;
    - ``scope``: :class:`Scope` (ENTRY, widened by ``all_computations``; or MODULE);
    - ``Options``: a frozen dataclass of typed fields made with :func:`option`;
    - ``outside_scope_opcodes``: the anchors reported when found outside the scope
      (default: all of them);
    - ``toggle``: optionally, a shorter stem for the command line's ``--X``/``--no-X``;

    and implement :meth:`rewrite`. A pass that needs to see every computation
    before changing any overrides :meth:`run_on` and iterates :meth:`walk`.
    """

    name: ClassVar[str]
    description: ClassVar[str]
    anchors: ClassVar[frozenset[str]] = frozenset()
    scope: ClassVar[Scope] = Scope.ENTRY
    Options: ClassVar[type[Any]] = NoOptions
    outside_scope_opcodes: ClassVar[frozenset[str] | None] = None
    #: the stem of the command line's ``--X`` / ``--no-X`` toggle (default: the name)
    toggle: ClassVar[str | None] = None

    def __init__(self, options: Any = None, *, all_computations: bool | None = None) -> None:
        if isinstance(options, PassOptions):  # a whole run's options: take this pass's part
            run_options = options
            options = run_options.for_pass(type(self))
            if all_computations is None:
                all_computations = run_options.all_computations
        self.options = options if options is not None else self.Options()
        self.all_computations = bool(all_computations)

    # ------------------------------------------------------------------ running
    def run(self, module: Module) -> PassReport:
        """Run the pass over ``module`` (edited in place); returns what it did."""
        report = PassReport(self.name)
        start = time.perf_counter()
        self.run_on(module, report)
        report.seconds = time.perf_counter() - start
        return report

    def run_on(self, module: Module, report: PassReport) -> None:
        """Hand each computation's anchored instructions to :meth:`rewrite`."""
        for comp, anchored in self.walk(module, report):
            self.rewrite(module, comp, anchored, report)

    def rewrite(self, module: Module, comp: Computation, anchored: list[Instruction], report: PassReport) -> None:
        """Rewrite the anchored instructions of one computation in scope (in text
        order), and record in ``report`` what was rewritten or left and why."""
        raise NotImplementedError(f"pass '{self.name}' implements neither rewrite() nor run_on()")

    # ------------------------------------------------------------------ walking
    def computations(self, module: Module) -> list[Computation]:
        """The computations in this pass's scope."""
        if self.scope is Scope.MODULE:
            return list(module.computations)
        return module.scope(self.all_computations)

    def walk(self, module: Module, report: PassReport) -> Iterator[tuple[Computation, list[Instruction]]]:
        """``(computation, anchored instructions)`` for each computation in scope
        that has one; anchored instructions outside the scope are reported as
        left, once each, with :func:`outside_scope_reason`."""
        in_scope = {id(c) for c in self.computations(module)}
        non_fusion: set[str] | None = None
        anchors = self.anchors
        reported = anchors if self.outside_scope_opcodes is None else self.outside_scope_opcodes
        for comp in module.computations:
            present = comp.opcodes()
            if anchors.isdisjoint(present):
                continue  # nothing for this pass: its instructions need not be built
            if id(comp) not in in_scope:
                if not reported.isdisjoint(present):
                    if non_fusion is None:
                        non_fusion = {c.name for c in module.non_fusion_computations()}
                    reason = outside_scope_reason(comp, fusion=comp.name not in non_fusion)
                    self.report_outside_scope(module, comp, reported, reason, report)
                continue
            anchored = [i for i in comp.instructions if i.opcode in anchors]
            if anchored:
                yield comp, anchored

    def report_outside_scope(
        self, module: Module, comp: Computation, opcodes: frozenset[str], reason: str, report: PassReport
    ) -> None:
        """Record the instructions with ``opcodes`` of a computation outside the
        scope as left, for ``reason`` (a pass may override this to say more)."""
        if opcodes <= NOTED_OPCODES:  # found without building the computation
            for name, opcode, line in comp.find(opcodes):
                report.add_left_named(comp, name, opcode, line, reason)
            return
        for instr in comp.instructions:
            if instr.opcode in opcodes:
                report.add_left(comp, instr, reason)


__all__ = [
    "NoOptions",
    "OptionInfo",
    "Pass",
    "PassOptions",
    "PassReport",
    "Record",
    "Scope",
    "attach_location",
    "located_error",
    "make_options",
    "option",
    "option_infos",
    "outside_scope_reason",
]
